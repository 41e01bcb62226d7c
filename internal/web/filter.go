package web

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/report"
)

// filter is what the pages' filter form selects: the analyzers' filter
// (metrics.Filter) over the window [until−window, until).
type filter struct {
	Agent, Model, TaskType string
	Window                 string // as the form has it: 24h, 7d, …
	Until                  string // empty: now
	Every                  string // trend period: day or week

	since, until time.Time
}

// defaultWindow is the window the pages show when the form sets none: the
// report's.
const defaultWindow = "24h"

// parseFilter reads the filter of a request's query, every problem at once.
func parseFilter(q url.Values, now time.Time) (filter, error) {
	f := filter{Agent: q.Get("agent"), Model: q.Get("model"), TaskType: q.Get("task_type"),
		Window: q.Get("window"), Until: q.Get("until"), Every: q.Get("every")}
	if f.Window == "" {
		f.Window = defaultWindow
	}
	if f.Every == "" {
		f.Every = metrics.EveryDay
	}
	var errs []error
	d, err := metrics.ParseDuration(f.Window)
	if err != nil || d <= 0 {
		errs = append(errs, fmt.Errorf("window %q: want a duration such as 24h or 7d", f.Window))
	}
	if f.until, err = metrics.ParseTime(f.Until, now); err != nil {
		errs = append(errs, fmt.Errorf("until: %w", err))
	}
	if f.until.IsZero() {
		f.until = now
	}
	if f.Every != metrics.EveryDay && f.Every != metrics.EveryWeek {
		errs = append(errs, fmt.Errorf("every %q: want %s or %s", f.Every, metrics.EveryDay, metrics.EveryWeek))
	}
	if err := errors.Join(errs...); err != nil {
		return f, badRequest("%v", err)
	}
	f.since = f.until.Add(-d)
	return f, nil
}

// metrics is the analyzers' filter of the window.
func (f filter) metrics() metrics.Filter {
	return metrics.Filter{Since: f.since, Until: f.until, Agent: f.Agent, Model: f.Model, TaskType: f.TaskType}
}

// report is the report's configuration for the window (its defaults
// otherwise).
func (f filter) report() report.Config {
	c := report.DefaultConfig()
	c.Since, c.Until = f.since, f.until
	c.Agent, c.Model, c.TaskType = f.Agent, f.Model, f.TaskType
	c.Every = f.Every
	return c
}

// query is the filter as URL parameters (empty ones left out), for links
// that keep it.
func (f filter) query() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("agent", f.Agent)
	set("model", f.Model)
	set("task_type", f.TaskType)
	if f.Window != defaultWindow {
		set("window", f.Window)
	}
	set("until", f.Until)
	if f.Every != metrics.EveryDay {
		set("every", f.Every)
	}
	return v
}

// Describe is the window in words, for the page.
func (f filter) Describe() string {
	s := fmt.Sprintf("sessions started %s – %s", f.since.UTC().Format("2006-01-02 15:04"), f.until.UTC().Format("2006-01-02 15:04 UTC"))
	for _, p := range []struct{ k, v string }{{"agent", f.Agent}, {"model", f.Model}, {"task type", f.TaskType}} {
		if p.v != "" {
			s += ", " + p.k + " " + p.v
		}
	}
	return s
}
