// Package reporttest builds the fixture database the report tests share,
// from testdata/report (see its README): five simulated days of sessions,
// the last one with a learned rule set for part of the fleet, plus a session
// whose reported replan count is wrong, an open session and dead letters.
package reporttest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// The fixture's report window is the last simulated day, [Since, Until);
// the previous window is the day before.
var (
	Since = time.Date(2025, 6, 9, 0, 0, 0, 0, time.UTC)
	Until = time.Date(2025, 6, 10, 0, 0, 0, 0, time.UTC)
)

// MinCalls is the -min-calls the fixture is meant to be read with: it is
// small (five days of 20 to 60 sessions), and rules are learned with it.
const MinCalls = 10

// Dir is testdata/report.
func Dir(tb testing.TB) string {
	tb.Helper()
	return testdb.Testdata(tb, "report")
}

// DB loads the fixture into a new DuckDB file under tb.TempDir and returns
// its path, closed. Dead letters are stamped with the fixture's clock
// (received on 2025-06-09 from 18:00, a minute per line of quality.jsonl),
// not the time of the test, so that they fall in the window.
func DB(tb testing.TB) string {
	tb.Helper()
	d := testdb.New(tb, testdb.Options{Taxonomy: taxonomy.Default()})
	d.Load(tb, testdb.File(tb, filepath.Join(Dir(tb), "sessions.jsonl.gz")))
	quality := testdb.File(tb, filepath.Join(Dir(tb), "quality.jsonl"))
	if res := d.LoadResult(tb, quality); res.DeadLetters != 4 {
		tb.Fatalf("load quality.jsonl: %+v; want 4 dead letters", res)
	}
	if _, err := d.Store().DB().ExecContext(context.Background(),
		`UPDATE dead_letters SET received_at = TIMESTAMPTZ '2025-06-09 18:00:00+00' + to_minutes(line)`); err != nil {
		tb.Fatalf("stamp dead letters: %v", err)
	}
	return d.Close(tb)
}
