package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
)

// dbError runs q on db and returns DuckDB's error for it.
func dbError(tb testing.TB, db *sql.DB, q string) error {
	tb.Helper()
	_, err := db.Exec(q)
	if err == nil {
		tb.Fatalf("%s: no error", q)
	}
	return err
}

// The classification on real DuckDB errors, wrapped and joined as Write
// returns them.
func TestFaultOf(t *testing.T) {
	s := openTemp(t)
	db := s.DB()
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER NOT NULL PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	constraint := dbError(t, db, `INSERT INTO t VALUES (1)`)
	conversion := dbError(t, db, `SELECT CAST('x' AS INTEGER)`)
	outOfRange := dbError(t, db, `SELECT 2147483647::INTEGER + 1`)
	catalog := dbError(t, db, `SELECT * FROM no_such_table`)

	// Out of memory: a real limit on a second database.
	mem, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if _, err := mem.Exec(`SET memory_limit = '16MB'`); err != nil {
		t.Fatal(err)
	}
	oom := dbError(t, mem, `SELECT len(list(range)) FROM range(100000000)`)

	tests := []struct {
		name string
		err  error
		want Fault
	}{
		{"constraint", constraint, FaultEvent},
		{"conversion", conversion, FaultEvent},
		{"out of range", outOfRange, FaultEvent},
		{"wrapped constraint", fmt.Errorf("derive x.sql: %w", constraint), FaultEvent},
		{"appender conversion", fmt.Errorf("append event: %w", &eventError{errors.New("cannot cast")}), FaultEvent},
		{"joined event errors", errors.Join(constraint, conversion), FaultEvent},
		{"out of memory", oom, FaultEnvironment},
		{"wrapped out of memory", fmt.Errorf("copy batch into events: %w", oom), FaultEnvironment},
		{"constraint and failed cleanup", errors.Join(constraint, oom), FaultEnvironment},
		{"constraint and unknown cleanup error", errors.Join(constraint, errors.New("reset")), FaultEnvironment},
		{"our own SQL broken", catalog, FaultEnvironment},
		{"closed store", fmt.Errorf("write batch: %w", ErrClosed), FaultEnvironment},
		{"cancelled", context.Canceled, FaultEnvironment},
		{"closed database", sql.ErrConnDone, FaultEnvironment},
		{"unknown", errors.New("something"), FaultEnvironment},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FaultOf(tt.err); got != tt.want {
				t.Fatalf("FaultOf(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// A database a failed checkpoint invalidated between two batches is seen
// first by the next batch's reads (here the lookup of its model calls'
// session ends), not its commit: that write fails, and the next one opens
// the file again and stores the batch. (A full test run once saw an
// ingester that never reopened: only a failed commit or checkpoint wait
// marked the store broken.)
func TestInvalidatedBetweenBatchesReopens(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: newEvent(t, "coder/h/w1", "s1", 1)}}}); err != nil {
		t.Fatal(err)
	}
	// DuckDB's own fault injection: the checkpoint fails before it writes
	// the header, which invalidates the database.
	if _, err := s.DB().Exec(`SET GLOBAL debug_checkpoint_abort = 'before_header'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`CHECKPOINT`); err == nil {
		t.Fatal("the aborted checkpoint succeeded: the database is not invalidated")
	}
	call, err := events.New("coder/h/w1", "s1", 2, events.ModelCalled, time.Date(2026, 11, 29, 10, 0, 2, 0, time.UTC),
		events.ModelCalledData{Model: "m", DurationMS: 3})
	if err != nil {
		t.Fatal(err)
	}
	batch := Batch{Origin: FromFile, Items: []Item{{Event: call}}}
	if _, err := s.Write(ctx, batch); err == nil || !invalidated(err) {
		t.Fatalf("Write on the invalidated database = %v, want its error", err)
	}
	res, err := s.Write(ctx, batch)
	if err != nil {
		t.Fatalf("the write after: %v (the store did not open its file again)", err)
	}
	if res.Accepted != 1 || s.Reopens() != 1 {
		t.Fatalf("the write after = %+v with %d reopens, want 1 accepted after 1 reopen", res, s.Reopens())
	}
	if n := count(t, s, `SELECT count(*) FROM events`); n != 2 {
		t.Fatalf("%d events after the reopen, want 2", n)
	}
}

// A store whose database had to be given up (broken, as after DuckDB
// invalidated it) opens its file again on the next write: what was
// committed is there, the write succeeds, readers are told of the new
// database.
func TestWriteReopensABrokenStore(t *testing.T) {
	ctx := t.Context()
	var got *sql.DB
	s, err := OpenWith(ctx, filepath.Join(t.TempDir(), "r.duckdb"), Options{
		Reopened: func(_ context.Context, db *sql.DB) { got = db },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := newEvent(t, "coder/h/w1", "s1", 1)
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: first}}}); err != nil {
		t.Fatal(err)
	}
	old := s.DB()
	s.mu.Lock()
	s.broken = errors.New("FATAL Error: database has been invalidated")
	s.mu.Unlock()
	res, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{
		{Event: first}, {Event: newEvent(t, "coder/h/w1", "s1", 2)}}})
	if err != nil {
		t.Fatalf("Write after the store broke: %v", err)
	}
	if want := (Result{Accepted: 1, Duplicates: 1}); res != want {
		t.Fatalf("Write after reopening = %+v, want %+v (the keys reloaded)", res, want)
	}
	if s.Reopens() != 1 || got == nil || got != s.DB() || got == old {
		t.Fatalf("Reopens = %d, hook got %p, DB() = %p, old %p: want one reopen, the hook given the new DB()", s.Reopens(), got, s.DB(), old)
	}
	if err := old.Ping(); err == nil {
		t.Fatal("the old database is still open")
	}
	if n := count(t, s, `SELECT count(*) FROM events`); n != 2 {
		t.Fatalf("events = %d, want 2", n)
	}
}

// The memory limit and temp directory are applied to the database.
func TestMemoryOptions(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenWith(t.Context(), filepath.Join(dir, "m.duckdb"), Options{MemoryLimit: "300MiB", TempDir: filepath.Join(dir, "spill")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var limit, temp string
	if err := s.DB().QueryRow(`SELECT current_setting('memory_limit'), current_setting('temp_directory')`).Scan(&limit, &temp); err != nil {
		t.Fatal(err)
	}
	if limit != "300.0 MiB" || temp != filepath.Join(dir, "spill") {
		t.Fatalf("memory_limit, temp_directory = %q, %q; want 300.0 MiB, %s", limit, temp, filepath.Join(dir, "spill"))
	}
	if _, err := OpenWith(t.Context(), filepath.Join(dir, "n.duckdb"), Options{MemoryLimit: "lots"}); err == nil {
		t.Fatal("a bad memory limit was accepted")
	}
}

func TestDefaultMemoryLimit(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	tests := []struct {
		name  string
		avail int64
		want  int64
	}{
		{"unknown", 0, 512 * mib},
		{"tiny machine", 256 * mib, 128 * mib},
		{"small machine", 1 * gib, 256 * mib},
		{"16 GiB", 16 * gib, 512 * mib},
		{"large machine", 256 * gib, 512 * mib},
	}
	for _, tt := range tests {
		if got := defaultMemoryBytes(tt.avail); got != tt.want {
			t.Errorf("%s: defaultMemoryBytes(%d) = %d, want %d", tt.name, tt.avail, got, tt.want)
		}
	}
	if got := DefaultMemoryLimit(); got == "" {
		t.Fatal("DefaultMemoryLimit is empty")
	}
}
