package export

import (
	"strings"
	"testing"
)

// joinEvents is the clause with which the export query of a table derived
// from events (queries/export/table.sql.tmpl) keeps the rows of the events
// committed in the window: a whole-table query has none.
const joinEvents = "\nSEMI JOIN events e\n"

// Each table's query selects from that table, and the clock its marks
// follow is the one its query filters on: its own column for a table that
// records its commit time, the events' for every other.
func TestTableQueries(t *testing.T) {
	for _, tb := range Tables {
		for _, whole := range []bool{false, true} {
			q := tableQuery(tb, whole)
			if !strings.Contains(q, "\nFROM "+tb.Name+" t\n") {
				t.Errorf("tableQuery(%s, %v) does not select from %s:\n%s", tb.Name, whole, tb.Name, q)
			}
			if strings.Contains(q, "{{") || strings.Contains(q, "<no value>") {
				t.Errorf("tableQuery(%s, %v) is not filled in:\n%s", tb.Name, whole, q)
			}
		}
		want := clockEvents
		if tb.rows.Committed != "" {
			want = tb.Name + "." + tb.rows.Committed
		}
		if tb.Clock != want {
			t.Errorf("%s: clock %s, but its query selects by %s", tb.Name, tb.Clock, want)
		}
	}
}

// A name that is not a plain SQL name is refused, not put into the query.
func TestTableQueryRefusesNames(t *testing.T) {
	tests := []struct {
		name string
		tb   Table
	}{
		{"table", Table{Name: "events t; DROP TABLE events; --", Clock: clockEvents}},
		{"column", Table{Name: "events", Clock: clockEvents, rows: tableRows{Committed: "ingested_at", Day: "time", Order: []string{"time", "1; SELECT 1"}}}},
		{"parent seq", Table{Name: "plan_tasks", Clock: clockEvents, rows: tableRows{ParentSeq: "Plan Seq", ParentTypes: []string{"agent.plan.created"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "is not a plain SQL name") {
					t.Errorf("tableQuery(%+v) panicked with %v, want a refused name", tt.tb, r)
				}
			}()
			q := tableQuery(tt.tb, false)
			t.Errorf("tableQuery(%+v) = %q, want a panic", tt.tb, q)
		})
	}
}

// A parent type is put in as a string literal, quotes and all.
func TestTableQueryQuotesTypes(t *testing.T) {
	q := tableQuery(Table{Name: "plan_tasks", Clock: clockEvents, rows: tableRows{ParentSeq: "plan_seq", ParentTypes: []string{"a'b", "c"}}}, false)
	if want := "type IN ('a''b', 'c')"; !strings.Contains(q, want) {
		t.Errorf("tableQuery with the types a'b and c lacks %q:\n%s", want, q)
	}
}
