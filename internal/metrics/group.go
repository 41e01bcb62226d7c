package metrics

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
)

// Group is the group of sessions or tool calls a row describes: the value
// of each -by dimension. A dimension not grouped by has no value; neither
// has an unknown value of one that is (a session without a task type,
// grouped by task_type). day and week are UTC dates (week: its Monday), as
// YYYY-MM-DD.
//
// In JSON, the rows of replans, trend and effect show every dimension, null
// where it has no value (the envelope's filter.by tells the two cases
// apart); the rows of hints and mappings show only the dimensions with a
// value. Tables and CSV of hints and mappings leave out the dimensions not
// grouped by (UngroupedDims, given as render.Envelope.Omit); those of
// replans, trend and effect show every one.
type Group struct {
	Agent        Dim `json:"agent,omitzero"`
	AgentVersion Dim `json:"agent_version,omitzero"`
	Model        Dim `json:"model,omitzero"`
	TaskType     Dim `json:"task_type,omitzero"`
	Day          Dim `json:"day,omitzero"`
	Week         Dim `json:"week,omitzero"`
	Ruleset      Dim `json:"ruleset,omitzero"`
}

// Dim is the value of one dimension of a Group.
type Dim struct {
	v *string
	// sparse: JSON omits the dimension when it has no value (hints,
	// mappings) instead of showing null (replans, trend, effect).
	sparse bool
}

// Value returns the dimension's value; nil when the row is not grouped by
// it or the value is unknown.
func (d Dim) Value() *string { return d.v }

// String returns the value, or "" when there is none (a table cell).
func (d Dim) String() string {
	if d.v == nil {
		return ""
	}
	return *d.v
}

// IsZero reports whether JSON omits the dimension (encoding/json's
// omitzero).
func (d Dim) IsZero() bool { return d.sparse && d.v == nil }

// MarshalJSON encodes the value, or null.
func (d Dim) MarshalJSON() ([]byte, error) {
	if d.v == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*d.v)
}

// UngroupedDims returns the Dimensions not in by, in order: the group
// columns a table of hints or mappings leaves out.
func UngroupedDims(by []string) []string {
	var out []string
	for _, d := range Dimensions {
		if !slices.Contains(by, d) {
			out = append(out, d)
		}
	}
	return out
}

func (g Group) fields() []*string {
	return []*string{g.Agent.v, g.AgentVersion.v, g.Model.v, g.TaskType.v, g.Day.v, g.Week.v, g.Ruleset.v}
}

// key identifies g in a map.
func (g Group) key() string {
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
func compareGroups(a, b Group) int {
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

// rateWithCI is k/n with its Wilson 95% interval; both nil when n is 0.
func rateWithCI(k, n int64) (*float64, *Interval) {
	return Rate(k, n), Wilson(k, n, Z95)
}
