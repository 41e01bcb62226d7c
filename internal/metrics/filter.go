package metrics

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Dimensions an analysis can group by (-by), in the order of the grouping
// columns of queries/include/by_dimensions.sql, the one place the queries
// group by them (a test holds the two equal).
var Dimensions = []string{"agent", "agent_version", "model", "task_type", "day", "week", "ruleset"}

// Filter selects the sessions an analysis looks at, and how it groups them.
// A session is in the window when it started in [Since, Until).
type Filter struct {
	Since, Until time.Time // zero: open
	Agent        string    // empty: all
	Model        string
	TaskType     string
	By           []string // subset of Dimensions, in the order given
}

// Validate reports every problem at once.
func (f Filter) Validate() error {
	var errs []error
	for _, b := range f.By {
		if !slices.Contains(Dimensions, b) {
			errs = append(errs, fmt.Errorf("-by %q: want one of %s", b, strings.Join(Dimensions, ", ")))
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		errs = append(errs, fmt.Errorf("-since %s is not before -until %s", f.Since.Format(time.RFC3339), f.Until.Format(time.RFC3339)))
	}
	return errors.Join(errs...)
}

// Args are the named parameters every analysis query takes:
// $since, $until (TIMESTAMPTZ or NULL), $agent, $model, $task_type (VARCHAR
// or NULL) and $by (the list of grouping dimensions; a query groups by
// `CASE WHEN list_contains($by, 'agent') THEN agent END`, …, the columns of
// queries/include/by_dimensions.sql, so that the grouping is data, not SQL
// text).
func (f Filter) Args() []any {
	by := f.By
	if by == nil {
		by = []string{}
	}
	return []any{
		sql.Named("since", nullTime(f.Since)),
		sql.Named("until", nullTime(f.Until)),
		sql.Named("agent", nullStr(f.Agent)),
		sql.Named("model", nullStr(f.Model)),
		sql.Named("task_type", nullStr(f.TaskType)),
		sql.Named("by", by),
	}
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ParseTime reads an RFC 3339 time, a date (2006-01-02), or a duration back
// from now: Go durations (90m, 24h) plus days and weeks (7d, 2w).
func ParseTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time, a date or a duration like 24h or 7d", s)
}

// ParseDuration is time.ParseDuration plus whole days (d) and weeks (w).
func ParseDuration(s string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("bad duration %q", s)
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	return d, nil
}
