package metrics

import (
	"cmp"
	"fmt"
	"math/big"
	"strings"
)

// This file holds what the replans, trend and effect analyzers share: the
// group a row describes, and typed access to the cells of a query result.

// SessionGroup is the group of sessions a row describes: the value of each
// -by dimension. A dimension not grouped by is null; so is an unknown value
// of one that is (a session without a task type, grouped by task_type): the
// envelope's filter.by tells the two apart. day and week are UTC dates
// (week: its Monday), as YYYY-MM-DD.
type SessionGroup struct {
	Agent        *string `json:"agent"`
	AgentVersion *string `json:"agent_version"`
	Model        *string `json:"model"`
	TaskType     *string `json:"task_type"`
	Day          *string `json:"day"`
	Week         *string `json:"week"`
	Ruleset      *string `json:"ruleset"`
}

// readSessionGroup reads the grouping columns every analysis query returns.
func readSessionGroup(r *resultRow) SessionGroup {
	return SessionGroup{
		Agent:        r.str("agent"),
		AgentVersion: r.str("agent_version"),
		Model:        r.str("model"),
		TaskType:     r.str("task_type"),
		Day:          r.str("day"),
		Week:         r.str("week"),
		Ruleset:      r.str("ruleset"),
	}
}

func (g SessionGroup) fields() []*string {
	return []*string{g.Agent, g.AgentVersion, g.Model, g.TaskType, g.Day, g.Week, g.Ruleset}
}

// key identifies g in a map.
func (g SessionGroup) key() string {
	var b strings.Builder
	for _, f := range g.fields() {
		if f == nil {
			b.WriteString("\x00n")
		} else {
			b.WriteString("\x00s" + *f)
		}
	}
	return b.String()
}

// compareGroups orders groups as the queries' ORDER BY does: dimension by
// dimension, nulls last.
func compareGroups(a, b SessionGroup) int {
	fa, fb := a.fields(), b.fields()
	for i := range fa {
		switch {
		case fa[i] == nil && fb[i] == nil:
		case fa[i] == nil:
			return 1
		case fb[i] == nil:
			return -1
		default:
			if c := cmp.Compare(*fa[i], *fb[i]); c != 0 {
				return c
			}
		}
	}
	return 0
}

// resultRow reads the cells of one row of t by column name. The first
// problem (a missing column, an unexpected type) is kept in err and later
// reads return zero values, so a caller checks err once per row.
type resultRow struct {
	t   *Table
	row []any
	err error
}

func (r *resultRow) cell(col string) any {
	if r.err != nil {
		return nil
	}
	i := r.t.Col(col)
	if i < 0 {
		r.err = fmt.Errorf("query result has no column %q", col)
		return nil
	}
	return r.row[i]
}

func (r *resultRow) fail(col string, v any, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("column %q: got %T, want %s", col, v, want)
	}
}

// int reads an integer column; NULL reads as 0.
func (r *resultRow) int(col string) int64 {
	switch v := r.cell(col).(type) {
	case nil:
		return 0
	case int64:
		return v
	case int32:
		return int64(v)
	case int16:
		return int64(v)
	case int8:
		return int64(v)
	case uint64:
		return int64(v)
	case uint32:
		return int64(v)
	case *big.Int:
		if v.IsInt64() {
			return v.Int64()
		}
		r.fail(col, v, "an integer in int64 range")
	default:
		r.fail(col, v, "an integer")
	}
	return 0
}

// float reads a numeric column; NULL reads as nil.
func (r *resultRow) float(col string) *float64 {
	var f float64
	switch v := r.cell(col).(type) {
	case nil:
		return nil
	case float64:
		f = v
	case float32:
		f = float64(v)
	case int64:
		f = float64(v)
	case int32:
		f = float64(v)
	default:
		r.fail(col, v, "a number")
		return nil
	}
	return &f
}

// str reads a text column; NULL reads as nil.
func (r *resultRow) str(col string) *string {
	switch v := r.cell(col).(type) {
	case nil:
		return nil
	case string:
		return &v
	default:
		r.fail(col, v, "text")
		return nil
	}
}

// text reads a text column; NULL reads as "".
func (r *resultRow) text(col string) string {
	if s := r.str(col); s != nil {
		return *s
	}
	return ""
}

// strs reads a VARCHAR[] column; NULL reads as an empty list, as do NULL
// elements.
func (r *resultRow) strs(col string) []string {
	out := []string{}
	switch v := r.cell(col).(type) {
	case nil:
	case []any:
		for _, e := range v {
			switch s := e.(type) {
			case string:
				out = append(out, s)
			case nil:
			default:
				r.fail(col, e, "a list of text")
				return []string{}
			}
		}
	case []string:
		out = append(out, v...)
	default:
		r.fail(col, v, "a list of text")
	}
	return out
}

// eachRow calls fn for every row of t and stops at the first error.
func eachRow(t *Table, fn func(r *resultRow) error) error {
	for i, row := range t.Rows {
		r := &resultRow{t: t, row: row}
		err := fn(r)
		if err == nil {
			err = r.err
		}
		if err != nil {
			return fmt.Errorf("row %d: %w", i+1, err)
		}
	}
	return nil
}

// rateWithCI is k/n with its Wilson 95% interval; both nil when n is 0.
func rateWithCI(k, n int64) (*float64, *Interval) {
	return Rate(k, n), Wilson(k, n, Z95)
}
