package queries

import (
	"slices"
	"strings"
	"testing"
)

func TestViewReads(t *testing.T) {
	names := []string{"a_view", "b_view", "c_view"}
	tests := []struct {
		name string
		sql  string // the definition of c_view
		want []string
	}{
		{"from and join", "CREATE OR REPLACE VIEW c_view AS SELECT * FROM a_view JOIN B_VIEW USING (x)", []string{"a_view", "b_view"}},
		{"itself only", "CREATE OR REPLACE VIEW c_view AS SELECT 1 FROM c_view_stored", nil},
		{"line comment", "-- reads b_view\nSELECT * FROM a_view -- and c_view\n", []string{"a_view"}},
		{"block comment", "SELECT /* b_view */ * FROM a_view", []string{"a_view"}},
		{"string literal", "SELECT 'b_view', 'it''s b_view' FROM a_view", []string{"a_view"}},
		{"alias and type", "SELECT count(*) AS b_view, CAST(x AS b_view) FROM a_view", []string{"a_view"}},
		{"qualified and quoted", `SELECT * FROM main.a_view, "b_view"`, []string{"a_view", "b_view"}},
		{"longer words", "SELECT * FROM a_view_stored, xb_view", nil},
		{"unterminated comment", "SELECT * FROM a_view /* b_view", []string{"a_view"}},
		{"unterminated string", "SELECT * FROM a_view WHERE x = 'b_view", []string{"a_view"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := viewReads(tt.sql, "c_view", names); !slices.Equal(got, tt.want) {
				t.Fatalf("viewReads(%q) = %q, want %q", tt.sql, got, tt.want)
			}
		})
	}
}

func TestViewOrder(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		reads   map[string][]string
		want    []string
		wantErr string
	}{
		{"independent: by name", []string{"c", "a", "b"}, nil, []string{"a", "b", "c"}, ""},
		{"chain against the names", []string{"a", "b", "c"}, map[string][]string{"a": {"b"}, "b": {"c"}}, []string{"c", "b", "a"}, ""},
		{"ready ones by name", []string{"a", "b", "c", "d"}, map[string][]string{"a": {"d"}, "b": {"d"}}, []string{"c", "d", "a", "b"}, ""},
		{"two readers of one", []string{"x", "m", "a"}, map[string][]string{"a": {"x", "m"}}, []string{"m", "x", "a"}, ""},
		{"cycle", []string{"a", "b", "c"}, map[string][]string{"a": {"b"}, "b": {"a"}}, nil, "a (reads b); b (reads a)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := viewOrder(tt.names, tt.reads)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("viewOrder(%v, %v) = %v, %v; want an error naming %q", tt.names, tt.reads, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("viewOrder(%v, %v) = %v, %v; want %v", tt.names, tt.reads, got, err, tt.want)
			}
		})
	}
}

// Every view of views/ comes after each view it reads, and the views that
// read others are found to (a scan that found nothing would order them by
// name alone).
func TestViewsComeAfterWhatTheyRead(t *testing.T) {
	vs, err := Views()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = viewName(v.File)
	}
	edges := 0
	for i, v := range vs {
		for _, r := range viewReads(v.SQL, names[i], names) {
			edges++
			if j := slices.Index(names, r); j > i {
				t.Errorf("Views(): %s (place %d) reads %s, which comes after it (place %d)", names[i], i+1, r, j+1)
			}
		}
	}
	// session_facts reads session_facts_pending, session_signals reads
	// session_facts, and so on: at least these.
	for _, want := range [][2]string{
		{"session_facts", "session_facts_pending"},
		{"session_signals", "session_facts"},
		{"task_facts", "task_facts_pending"},
		{"task_facts_pending", "session_facts_pending"},
		{"inferred_redecisions", "planned_sessions"},
	} {
		i := slices.Index(names, want[0])
		if i < 0 || !slices.Contains(viewReads(vs[i].SQL, want[0], names), want[1]) {
			t.Errorf("viewReads(%s) does not find %s", want[0], want[1])
		}
	}
	if edges == 0 {
		t.Error("no view reads another: the scan found nothing")
	}
}
