package export

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Starting is told each table's rows before it is written, the same rows
// the run then writes, also on a later run that adds only what is new; the
// time left is unknown before the first rows were written, and known
// while rows are left.
func TestExportStartingRows(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, append(validFiles(t), invalidFiles(t)...)...)
	dir := filepath.Join(t.TempDir(), "out")
	for run := 1; run <= 2; run++ {
		if run == 2 {
			d.loadSynth(t, 1, midnight, 5)
		}
		var starts []TableStart
		res := d.mustExport(t, Config{Dir: dir, Starting: func(ts TableStart) { starts = append(starts, ts) }})
		var written []TableResult // the tables with something new
		for _, tr := range res.Tables {
			if !tr.Upto.IsZero() {
				written = append(written, tr)
			}
		}
		if len(starts) != len(written) || len(written) < 2 {
			t.Fatalf("run %d: Starting called %d times, want %d (once per table with something new, at least 2)", run, len(starts), len(written))
		}
		left := res.Rows
		for i, ts := range starts {
			tr := written[i]
			if ts.Table != tr.Table || ts.Of != len(Tables) || Tables[ts.Index-1].Name != tr.Table || ts.Rows != tr.Rows {
				t.Errorf("run %d: Starting %+v, want table %s of %d, %d rows", run, ts, tr.Table, len(Tables), tr.Rows)
			}
			switch known := ts.ETA > 0; {
			case i == 0 && known:
				t.Errorf("run %d: first table's time left = %v, want unknown (0)", run, ts.ETA)
			case i > 0 && known != (left > 0):
				t.Errorf("run %d: %s with %d rows left: time left = %v", run, ts.Table, left, ts.ETA)
			}
			left -= tr.Rows
		}
	}
}

func TestETA(t *testing.T) {
	tests := []struct {
		name          string
		left, written int64
		took          time.Duration
		want          time.Duration
	}{
		{"nothing written yet", 1000, 0, 0, 0},
		{"rows written in no time", 1000, 10, 0, 0},
		{"nothing left", 0, 1000, time.Second, 0},
		{"at the rate so far", 3000, 1000, 2 * time.Second, 6 * time.Second},
		{"a fraction", 1, 4, time.Second, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := eta{left: tt.left + tt.written}
			e.wrote(tt.written, tt.took)
			if got := e.estimate(); got != tt.want {
				t.Fatalf("eta{left %d, written %d in %v}.estimate() = %v, want %v", tt.left, tt.written, tt.took, got, tt.want)
			}
		})
	}
}

// TestWholeTableQuery: for a window holding the whole table, each typed
// table's export query without its join with events (tableQuery) gives
// exactly the rows of the query with it; and it is really without the join.
func TestWholeTableQuery(t *testing.T) {
	d := newTestDB(t)
	d.loadSynth(t, 7, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 60)
	db, err := sql.Open("duckdb", d.path+"?access_mode=read_only")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	latest, err := readMarks(ctx, tx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	joined := 0
	for _, tb := range Tables {
		upto, ok := latest[tb.Clock]
		if !ok {
			continue
		}
		if !whole(tb, time.Time{}, upto, latest) || whole(tb, upto.Add(-time.Second), upto, latest) || whole(tb, time.Time{}, upto.Add(-time.Second), latest) {
			t.Fatalf("%s: whole() wrong for the full window, a mark, or -until", tb.Name)
		}
		with, without := tableQuery(tb, false), tableQuery(tb, true)
		if strings.Contains(with, joinEvents) {
			joined++
			if strings.Contains(without, joinEvents) {
				t.Errorf("%s: the whole-table query still joins events", tb.Name)
			}
		}
		var n, diff int64
		q := fmt.Sprintf(`SELECT (SELECT count(*) FROM (%[1]s)),
			(SELECT count(*) FROM ((FROM (%[1]s) EXCEPT ALL FROM (%[2]s)) UNION ALL (FROM (%[2]s) EXCEPT ALL FROM (%[1]s))))`,
			strings.TrimRight(strings.TrimSpace(with), ";"), strings.TrimRight(strings.TrimSpace(without), ";"))
		if err := tx.QueryRowContext(ctx, q, sql.Named("after", nil), sql.Named("upto", upto)).Scan(&n, &diff); err != nil {
			t.Fatalf("%s: %v", tb.Name, err)
		}
		if diff != 0 {
			t.Errorf("%s: %d rows differ between the query with and without the join (of %d)", tb.Name, diff, n)
		}
		// These synthetic sessions have no depth limit and load no rule
		// set (so no holdout assignment): those tables are compared empty
		// (TestExportAllTables fills them from the sample sessions).
		if n == 0 && !slices.Contains([]string{deadLettersTable, "depth_limits", "session_assignments", "session_rule_assignments"}, tb.Name) {
			t.Errorf("%s: no rows to compare", tb.Name)
		}
	}
	if joined < 11 {
		t.Errorf("%d typed tables' queries join events; want the 11 of the simple typed tables", joined)
	}
}
