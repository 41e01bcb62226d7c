package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
)

func newEvent(tb testing.TB, source, session string, seq int64) *events.Event {
	tb.Helper()
	id := int64(seq)
	e, err := events.New(source, session, seq, events.ToolCalled, time.Date(2026, 11, 29, 10, 0, int(seq), 0, time.UTC),
		events.ToolCalledData{TaskID: &id, Tool: "grep", OK: seq%2 == 0, DurationMS: 5})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func openTemp(tb testing.TB) *Store {
	tb.Helper()
	s, err := Open(context.Background(), filepath.Join(tb.TempDir(), "s.duckdb"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func count(tb testing.TB, s *Store, q string) int64 {
	tb.Helper()
	var n int64
	if err := s.DB().QueryRow(q).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestWriteDeduplicates(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	a, b := newEvent(t, "coder/h/w1", "s1", 1), newEvent(t, "coder/h/w1", "s1", 2)
	res, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: a}, {Event: b}, {Event: a}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Accepted: 2, Duplicates: 1}); res != want {
		t.Fatalf("first Write = %+v, want %+v", res, want)
	}
	// Same id from another source is another event.
	other := *a
	other.Source = "coder/h/w2"
	res, err = s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: a}, {Event: &other}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Accepted: 1, Duplicates: 1}); res != want {
		t.Fatalf("second Write = %+v, want %+v", res, want)
	}
	if got := count(t, s, `SELECT count(*) FROM events`); got != 3 {
		t.Fatalf("events = %d, want 3", got)
	}
	if got := count(t, s, `SELECT count(*) FROM tool_calls`); got != 3 {
		t.Fatalf("tool_calls = %d, want 3", got)
	}
}

// A hash already in the set is only a candidate: an event whose hash
// collides with a stored one is still accepted.
func TestHashCollisionIsNotADuplicate(t *testing.T) {
	s := openTemp(t)
	e := newEvent(t, "coder/h/w1", "s1", 1)
	s.keys.add(KeyHash(e.Source, e.ID)) // as if another event had this hash
	res, err := s.Write(t.Context(), Batch{Origin: FromFile, Items: []Item{{Event: e}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 1 || res.Duplicates != 0 {
		t.Fatalf("Write = %+v, want the event accepted", res)
	}
}

func TestKeysSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.duckdb")
	ctx := t.Context()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	e := newEvent(t, "coder/h/w1", "s1", 1)
	if _, err := s.Write(ctx, Batch{Origin: FromNATS, Stream: "EVO", Position: 7, Items: []Item{{Event: e, StreamSeq: 7}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	s.Close()
	s, err = Open(ctx, path) // migrations already applied: a no-op
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Keys() != 1 {
		t.Fatalf("keys after reopen = %d, want 1", s.Keys())
	}
	res, err := s.Write(ctx, Batch{Origin: FromNATS, Stream: "EVO", Position: 8, Items: []Item{{Event: e, StreamSeq: 8}}})
	if err != nil || res.Duplicates != 1 {
		t.Fatalf("re-send after reopen: %+v, %v; want 1 duplicate", res, err)
	}
	if pos, err := s.Position(ctx, "EVO"); err != nil || pos != 8 {
		t.Fatalf("Position = %d, %v; want 8", pos, err)
	}
	if got := count(t, s, `SELECT count(*) FROM schema_migrations`); got < 1 {
		t.Fatalf("schema_migrations has %d rows", got)
	}
}

// A batch that fails leaves nothing behind: no rows, no position, no keys.
func TestFailedBatchLeavesNothing(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	good := newEvent(t, "coder/h/w1", "s1", 1)
	// A row the derive step rejects: task_id NOT NULL in hints_stripped.
	bad := newEvent(t, "coder/h/w1", "s1", 2)
	bad.Type = events.HintStripped
	bad.Data = []byte(`{"tool_hint":"x","phase":"plan","reason":"unavailable"}`)
	_, err := s.Write(ctx, Batch{Origin: FromNATS, Stream: "EVO", Position: 2, Items: []Item{{Event: good, StreamSeq: 1}, {Event: bad, StreamSeq: 2}}})
	if err == nil {
		t.Fatal("Write of a batch the database rejects succeeded")
	}
	for _, q := range []string{`SELECT count(*) FROM events`, `SELECT count(*) FROM tool_calls`, `SELECT count(*) FROM ingest_position`, `SELECT count(*) FROM ingest_batches`} {
		if got := count(t, s, q); got != 0 {
			t.Errorf("%s = %d after a failed batch, want 0", q, got)
		}
	}
	// The store still works, and the failed events were not remembered.
	res, err := s.Write(ctx, Batch{Origin: FromNATS, Stream: "EVO", Position: 3, Items: []Item{{Event: good, StreamSeq: 3}}})
	if err != nil || res.Accepted != 1 {
		t.Fatalf("Write after failure = %+v, %v; want 1 accepted", res, err)
	}
}

func TestDeadLettersKeepRawBytes(t *testing.T) {
	s := openTemp(t)
	raw := []byte("{\x00not json")
	_, err := s.Write(t.Context(), Batch{Origin: FromNATS, Stream: "EVO", Position: 1, Items: []Item{{
		Raw: raw, Subject: "evo.coder", StreamSeq: 1,
		Dead: &Dead{Code: "malformed_json", Reason: "unexpected end"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	var code, subject string
	if err := s.DB().QueryRow(`SELECT raw, reason_code, subject FROM dead_letters`).Scan(&got, &code, &subject); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(raw) || code != "malformed_json" || subject != "evo.coder" {
		t.Fatalf("dead letter = %q %s %s, want %q malformed_json evo.coder", got, code, subject, raw)
	}
}

// DuckDB's own automatic checkpoints are off (the store checkpoints by
// itself, checkpoint.go), and bad sizes are refused.
func TestCheckpointSettings(t *testing.T) {
	s, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "c.duckdb"), Options{CheckpointThreshold: "64MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got string
	if err := s.DB().QueryRow(`SELECT current_setting('checkpoint_threshold')`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got, "TiB") {
		t.Fatalf("DuckDB's checkpoint_threshold = %q, want one no WAL reaches (TiB)", got)
	}
	d, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "duck.duckdb"), Options{DuckDBCheckpointThreshold: "16MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.DB().QueryRow(`SELECT current_setting('checkpoint_threshold')`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "15.2 MiB" || d.ck != nil {
		t.Fatalf("with DuckDBCheckpointThreshold 16MB: DuckDB's threshold %q, the store's checkpointer %v; want 15.2 MiB and none", got, d.ck)
	}
	for _, o := range []Options{
		{CheckpointThreshold: "lots"},
		{WALLimit: "1 parsec"},
		{CheckpointThreshold: "64MB", WALLimit: "16MB"},
	} {
		if s, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "d.duckdb"), o); err == nil {
			s.Close()
			t.Fatalf("OpenWith(%+v) accepted its sizes", o)
		}
	}
}

// An event the database refuses is dead-lettered as store_rejected; the rest
// of its batch is stored, and the position still reaches the batch's end.
func TestWriteIsolatingDeadLettersWhatTheDatabaseRefuses(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	good1, good2 := newEvent(t, "coder/h/w1", "s1", 1), newEvent(t, "coder/h/w1", "s1", 3)
	bad := newEvent(t, "coder/h/w1", "s1", 2)
	bad.Type = events.HintStripped // task_id missing: NOT NULL in hints_stripped
	bad.Data = []byte(`{"tool_hint":"x","phase":"plan","reason":"unavailable"}`)
	b := Batch{Origin: FromNATS, Stream: "EVO", Position: 3, Items: []Item{
		{Event: good1, StreamSeq: 1}, {Event: bad, StreamSeq: 2}, {Event: good2, StreamSeq: 3}}}
	res, err := s.WriteIsolating(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Accepted: 2, DeadLetters: 1}); res != want {
		t.Fatalf("WriteIsolating = %+v, want %+v", res, want)
	}
	var code, id string
	if err := s.DB().QueryRow(`SELECT reason_code, id FROM dead_letters`).Scan(&code, &id); err != nil {
		t.Fatal(err)
	}
	if code != ReasonStoreRejected || id != bad.ID {
		t.Fatalf("dead letter %s for %s, want %s for %s", code, id, ReasonStoreRejected, bad.ID)
	}
	if pos, _ := s.Position(ctx, "EVO"); pos != 3 {
		t.Fatalf("position = %d, want 3", pos)
	}
	if got := count(t, s, `SELECT count(*) FROM events`); got != 2 {
		t.Fatalf("events = %d, want 2", got)
	}
}
