// Package reporttest builds the fixture database the report tests share,
// from testdata/report (see its README): five simulated days of sessions,
// the last one with a learned rule set for part of the fleet, plus a session
// whose reported replan count is wrong, an open session and dead letters.
package reporttest

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
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
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("reporttest: cannot locate the source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "report")
}

// DB loads the fixture into a new DuckDB file under tb.TempDir and returns
// its path, closed. Dead letters are stamped with the fixture's clock
// (received on 2025-06-09 from 18:00, a minute per line of quality.jsonl),
// not the time of the test, so that they fall in the window.
func DB(tb testing.TB) string {
	tb.Helper()
	ctx := context.Background()
	dir := Dir(tb)
	path := filepath.Join(tb.TempDir(), "report.duckdb")
	st, err := store.OpenWith(ctx, path, store.Options{Taxonomy: taxonomy.Default()})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	defer st.Close()
	in, err := ingest.New(ingest.DefaultConfig(), st, nil)
	if err != nil {
		tb.Fatalf("new ingester: %v", err)
	}
	gz, err := os.ReadFile(filepath.Join(dir, "sessions.jsonl.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		tb.Fatalf("sessions.jsonl.gz: %v", err)
	}
	sessions, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("sessions.jsonl.gz: %v", err)
	}
	res, err := in.LoadFile(ctx, bytes.NewReader(sessions), "sessions.jsonl")
	if err != nil || res.DeadLetters > 0 {
		tb.Fatalf("load sessions.jsonl: %+v, %v; want every line accepted", res, err)
	}
	quality, err := os.ReadFile(filepath.Join(dir, "quality.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	if res, err = in.LoadFile(ctx, bytes.NewReader(quality), "quality.jsonl"); err != nil || res.DeadLetters != 4 {
		tb.Fatalf("load quality.jsonl: %+v, %v; want 4 dead letters", res, err)
	}
	if _, err := st.DB().ExecContext(ctx,
		`UPDATE dead_letters SET received_at = TIMESTAMPTZ '2025-06-09 18:00:00+00' + to_minutes(line)`); err != nil {
		tb.Fatalf("stamp dead letters: %v", err)
	}
	if err := st.Close(); err != nil {
		tb.Fatalf("close store: %v", err)
	}
	return path
}
