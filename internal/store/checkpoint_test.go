package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// writeN writes n batches of size events each, numbered after from.
func writeN(tb testing.TB, s *Store, from, n, size int) int {
	tb.Helper()
	for b := 0; b < n; b++ {
		items := make([]Item, size)
		for i := range items {
			from++
			items[i] = Item{Event: newEvent(tb, "coder/h/w1", fmt.Sprintf("s%d", from%50), int64(from))}
		}
		if _, err := s.Write(context.Background(), Batch{Items: items}); err != nil {
			tb.Fatalf("write batch %d: %v", b, err)
		}
	}
	return from
}

// Past the threshold, the checkpointer checkpoints after a commit on its own
// connection, and the WAL shrinks.
func TestCheckpointerShrinksTheWAL(t *testing.T) {
	ran := make(chan Checkpoint, 100)
	path := filepath.Join(t.TempDir(), "c.duckdb")
	s, err := OpenWith(t.Context(), path, Options{CheckpointThreshold: "256KB", OnCheckpoint: func(c Checkpoint) { trySend(ran, c) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for walSize(path+".wal") < 256_000 {
		n = writeN(t, s, n, 1, 500)
	}
	var c Checkpoint
	select {
	case c = <-ran:
	case <-t.Context().Done():
		t.Fatal("no checkpoint after the WAL passed the threshold")
	}
	if c.Err != nil {
		t.Fatalf("checkpoint: %v", c.Err)
	}
	if c.WALBefore < 256_000 || c.WALAfter >= c.WALBefore {
		t.Fatalf("checkpoint took the WAL from %d to %d bytes, want from past 256,000 to less", c.WALBefore, c.WALAfter)
	}
	if st := s.CheckpointStats(); st.Checkpoints < 1 || st.Failures != 0 {
		t.Fatalf("CheckpointStats() = %+v, want a checkpoint and no failure", st)
	}
	if got := count(t, s, `SELECT count(*) FROM events`); got != int64(n) {
		t.Fatalf("events after the checkpoint = %d, want %d", got, n)
	}
}

// A write that finds the WAL at its limit waits for a checkpoint: no batch
// begins with the WAL past it.
func TestWALLimitMakesWritesWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.duckdb")
	var atStart []int64
	s, err := OpenWith(t.Context(), path, Options{CheckpointThreshold: "256KB", WALLimit: "256KB",
		StepTimer: func(step string, _ time.Duration) {
			if step == "dedupe" {
				atStart = append(atStart, walSize(path+".wal"))
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeN(t, s, 0, 40, 500)
	for i, w := range atStart {
		if w >= 256_000 {
			t.Fatalf("batch %d began with %d bytes of WAL, past the limit of 256,000", i, w)
		}
	}
	if st := s.CheckpointStats(); st.Waits < 1 || st.Checkpoints < 1 {
		t.Fatalf("CheckpointStats() = %+v, want writes that waited for checkpoints", st)
	}
}

// Close stops the checkpointer: its connection is released with the rest
// (a second Open of the file in this process succeeds), and nothing runs on
// the closed database.
func TestCloseStopsTheCheckpointer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.duckdb")
	s, err := OpenWith(t.Context(), path, Options{CheckpointThreshold: "256KB"})
	if err != nil {
		t.Fatal(err)
	}
	n := writeN(t, s, 0, 20, 500)
	ck := s.ck
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ck.done:
	default:
		t.Fatal("checkpointer still running after Close")
	}
	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := count(t, s, `SELECT count(*) FROM events`); got != int64(n) {
		t.Fatalf("events after reopening = %d, want %d", got, n)
	}
}

// A checkpoint that fails is reported (OnCheckpoint, CheckpointStats); the
// write waiting for it fails with its error; the next write opens the
// database again (DuckDB invalidated it) and nothing committed is lost.
func TestFailingCheckpointSurfaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.duckdb")
	ran := make(chan Checkpoint, 100)
	s, err := OpenWith(t.Context(), path, Options{CheckpointThreshold: "256KB", WALLimit: "256KB",
		OnCheckpoint: func(c Checkpoint) { trySend(ran, c) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// DuckDB's own fault injection: the checkpoint fails before it writes
	// the database header.
	if _, err := s.DB().Exec(`SET GLOBAL debug_checkpoint_abort = 'before_header'`); err != nil {
		t.Fatal(err)
	}
	n := 0
	var werr error
	for werr == nil {
		items := make([]Item, 500)
		for i := range items {
			items[i] = Item{Event: newEvent(t, "coder/h/w1", fmt.Sprintf("s%d", (n+i+1)%50), int64(n+i+1))}
		}
		if _, werr = s.Write(t.Context(), Batch{Items: items}); werr == nil {
			n += len(items)
		}
	}
	var c Checkpoint
	select {
	case c = <-ran:
	case <-t.Context().Done():
		t.Fatal("no checkpoint reported")
	}
	if c.Err == nil {
		t.Fatalf("checkpoint reported no error (write failed with %v)", werr)
	}
	if st := s.CheckpointStats(); st.Failures < 1 || st.LastErr == nil {
		t.Fatalf("CheckpointStats() = %+v, want the failure", st)
	}
	n = writeN(t, s, n, 1, 500)
	if got := count(t, s, `SELECT count(*) FROM events`); got != int64(n) {
		t.Fatalf("events after the failed checkpoint = %d, want %d", got, n)
	}
	if s.Reopens() != 1 {
		t.Fatalf("Reopens() = %d, want 1", s.Reopens())
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"64MB", 64_000_000},
		{"1GiB", 1 << 30},
		{"512 KB", 512_000},
		{"1000", 1000},
		{"1.5kb", 1500},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if err != nil || got != tt.want {
			t.Fatalf("parseSize(%q) = %d, %v, want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "MB", "-1MB", "12 parsecs"} {
		if _, err := parseSize(bad); err == nil {
			t.Fatalf("parseSize(%q) succeeded", bad)
		}
	}
}

// trySend sends c unless ch is full: a test that stopped reading must not
// block the checkpointer.
func trySend(ch chan Checkpoint, c Checkpoint) {
	select {
	case ch <- c:
	default:
	}
}
