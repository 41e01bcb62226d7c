package store

import (
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/synth"
)

// factsFrom is the row of events the last refresh on the writer's
// connection started reading at (ingest/refresh_facts.sql).
func factsFrom(tb testing.TB, s *Store) int64 {
	tb.Helper()
	var n int64
	if err := s.w.QueryRowContext(tb.Context(), "SELECT getvariable('facts_from').events").Scan(&n); err != nil {
		tb.Fatalf("facts_from: %v", err)
	}
	return n
}

// A refresh reads the typed tables from where its oldest pending session
// started, not from the first row: sessions written one after another,
// each stored by its own refresh (generation), are each read from the rows
// the refresh before saw; a late event of an old session, after many
// generations, makes the refresh read from that session's first rows, and
// no earlier than its generation. The stored facts stay those a full
// recompute (Rebuild) gives.
func TestRefreshReadsFromTheOldestPendingSession(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	g := synth.New(21, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	const sessions, old = 12, 3
	var late Item
	var oldStart int64 // events before the old session's first
	for i := range sessions {
		var evs collect
		if _, err := g.Session(ctx, &evs); err != nil {
			t.Fatal(err)
		}
		if len(evs) < 3 {
			t.Fatalf("session %d has %d events, want at least 3", i, len(evs))
		}
		if i == old {
			// Held back, and dated before the session's first event: the
			// stored rows it replaces are found by started_at all the same.
			late = Item{Event: evs[1]}
			late.Event.Time = evs[0].Time.Add(-time.Hour)
			evs = append(evs[:1], evs[2:]...)
			oldStart = count(t, s, "SELECT count(*) FROM events")
		}
		before := count(t, s, "SELECT count(*) FROM events")
		// Two batches, with a refresh between: the session's second
		// refresh reads from where it started, not from the second batch.
		half := len(evs) / 2
		for k, part := range [][]Item{itemsOf(evs[:half]), itemsOf(evs[half:])} {
			if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: part}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RefreshFacts(ctx); err != nil {
				t.Fatal(err)
			}
			if got := factsFrom(t, s); got != before {
				t.Fatalf("session %d, batch %d: the refresh read events from row %d, want %d (the rows before the session)", i, k, got, before)
			}
		}
	}
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{late}}); err != nil {
		t.Fatal(err)
	}
	r, err := s.RefreshFacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sessions != 1 {
		t.Fatalf("the late event's refresh stored %d sessions, want 1", r.Sessions)
	}
	if got := factsFrom(t, s); got != oldStart {
		t.Fatalf("the late event's refresh read events from row %d, want %d (the rows before its session)", got, oldStart)
	}
	if n := count(t, s, "SELECT count(*) FROM session_facts_stored"); n != sessions {
		t.Fatalf("%d sessions stored, want %d", n, sessions)
	}
	storedEqualsRebuild(t, s)
	// A rebuild refills the typed tables: the next refresh reads every row.
	var evs collect
	if _, err := g.Session(ctx, &evs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: itemsOf(evs)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshFacts(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := factsFrom(t, s), count(t, s, "SELECT count(*) FROM events")-int64(len(evs)); got > want {
		t.Fatalf("after a rebuild, the refresh read events from row %d, want at most %d", got, want)
	}
}

func itemsOf(evs collect) []Item {
	out := make([]Item, len(evs))
	for i, e := range evs {
		out[i] = Item{Event: e}
	}
	return out
}

// A database stored facts before migration 0008 may hold a stored session's
// rows anywhere: after the migration, a late event of such a session, even
// after refreshes that recorded generations, is refreshed from the first
// row, and its facts are those a full recompute gives.
func TestRefreshAfterMigrationReadsOldSessionsWhole(t *testing.T) {
	ctx := t.Context()
	path := createClosed(t)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	g := synth.New(31, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	session := func() collect {
		var evs collect
		if _, err := g.Session(ctx, &evs); err != nil {
			t.Fatal(err)
		}
		return evs
	}
	first := session()
	late := Item{Event: first[len(first)-1]}
	var evs collect
	evs = append(evs, first[:len(first)-1]...)
	for range 5 {
		evs = append(evs, session()...)
	}
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: itemsOf(evs)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshFacts(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The database as it was before migration 0008.
	execFile(t, path, "DROP TABLE facts_generations", "DROP TABLE facts_sessions", "DELETE FROM schema_migrations WHERE version = 8")

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if n := count(t, s, "SELECT count(*) FROM facts_sessions WHERE since = -1"); n != 6 {
		t.Fatalf("after the migration facts_sessions holds %d sessions from the first row, want the 6 stored", n)
	}
	// A refresh of a new session records a generation at today's row counts.
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: itemsOf(session())}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshFacts(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{late}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshFacts(ctx); err != nil {
		t.Fatal(err)
	}
	if got := factsFrom(t, s); got != 0 {
		t.Fatalf("the late event of a session stored before the migration was refreshed from row %d, want 0", got)
	}
	storedEqualsRebuild(t, s)
}

// storedEqualsRebuild checks that the stored facts, as refreshes left them,
// are those a Rebuild computes from the event log; s is rebuilt.
func storedEqualsRebuild(t *testing.T, s *Store) {
	t.Helper()
	refreshed := map[string]string{"session_facts": digest(t, s, "session_facts_stored"), "task_facts": digest(t, s, "task_facts_stored")}
	if err := s.Rebuild(t.Context()); err != nil {
		t.Fatal(err)
	}
	for view, want := range refreshed {
		if got := digest(t, s, view+"_stored"); got != want {
			t.Errorf("%s: rebuilt %s, refreshed %s", view, got, want)
		}
	}
}
