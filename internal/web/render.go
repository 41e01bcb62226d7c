package web

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strings"
	"time"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var pages = template.Must(template.New("pages").Funcs(template.FuncMap{
	"pct":        pct,
	"stamp":      stamp,
	"clock":      func(t time.Time) string { return t.UTC().Format("15:04:05.000") },
	"ms":         millis,
	"sessionURL": func(id string) string { return "/sessions/" + url.PathEscape(id) },
	"join":       strings.Join,
	"mulf":       func(a, b float64) float64 { return a * b },
	"filterForm": func(action string, f filter, dims []options) filterForm { return filterForm{action, f, dims} },
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
}).ParseFS(templateFS, "templates/*.tmpl"))

// render executes the page template name into w.
func render(w io.Writer, name string, data any) error {
	return pages.ExecuteTemplate(w, name, data)
}

// Frame is what every page's frame needs.
type Frame struct {
	Title string
	Nav   string // the navigation entry of the page: overview, sessions, hints, …
	// Live: the page polls /live/version every PollMS and updates its
	// [data-live] parts when Version changes.
	Live    bool
	PollMS  int64
	Version string
}

// navEntry is one link of the navigation bar.
type navEntry struct{ Key, Label, Href string }

// Nav is the navigation bar.
func (Frame) NavEntries() []navEntry {
	return []navEntry{
		{"overview", "Overview", "/"},
		{"sessions", "Sessions", "/sessions"},
		{"hints", "Hints", "/analyze/hints"},
		{"mappings", "Mappings", "/analyze/mappings"},
		{"rules", "Rules", "/analyze/rules"},
		{"effects", "Effects", "/analyze/effects"},
	}
}

func (s *Server) frame(title, nav string) Frame {
	return Frame{Title: title, Nav: nav, PollMS: s.cfg.Poll.Milliseconds()}
}

// live marks b live at the database's current version (when the pages
// are live).
func (s *Server) live(b *Frame, version string) {
	if s.cfg.Live {
		b.Live, b.Version = true, version
	}
}

type errorPage struct {
	Frame
	Code    int
	Message string
}

// pct writes a rate as a percentage with one decimal, "–" for none.
func pct(r *float64) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100**r)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func millis(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// options are the values a filter select offers, with the one selected.
type options struct {
	Name, Label string
	Values      []string
	Selected    string
}

// dims returns the agents, models and task types the filter offers.
func dimOptions(vals map[string][]string, f filter) []options {
	return []options{
		{"agent", "Agent", vals["agent"], f.Agent},
		{"model", "Model", vals["model"], f.Model},
		{"task_type", "Task type", vals["task_type"], f.TaskType},
	}
}

// filterForm is what the filter form needs.
type filterForm struct {
	Action string
	Filter filter
	Dims   []options
}
