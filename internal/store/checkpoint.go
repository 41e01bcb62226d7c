package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DuckDB checkpoints automatically inside the COMMIT of the transaction
// whose WAL crosses its checkpoint_threshold: a batch that happened to cross
// it took seconds to commit. The store turns that off and checkpoints on its
// own connection instead, from one goroutine, when a commit leaves the WAL
// past Options.CheckpointThreshold. DuckDB runs such a checkpoint beside the
// writer's transaction as long as that transaction only appends; a commit
// that appends to a table waits while the checkpoint writes that table, and
// a statement that updates or deletes (the stream position's upsert) waits
// for the whole checkpoint. Small checkpoints keep both waits short.

// DefaultCheckpointThreshold is the WAL size at which the store checkpoints
// (Options.CheckpointThreshold): the 1GB at which DuckDB checkpointed
// before the store did. A checkpoint here has a large fixed part (about
// 1.8–3 s on this machine's idle 1M bench whatever its size), so smaller
// thresholds checkpoint more often for the same data: the 1M ingest ran at
// 27,068 events/s with 64MB (7 checkpoints), 35,769 with 256MB (2), and
// 42,112 with 1GB (none), against 42,616 for the code before the
// checkpointer (DuckDB's own threshold at 1GB, which 1M does not reach:
// BENCHMARKS.md, session 11).
const DefaultCheckpointThreshold = "1GB"

// DefaultWALLimit is the WAL size at which a write waits for a checkpoint
// before it begins (Options.WALLimit): twice the threshold, so that a
// checkpoint of a full threshold can run beside the writer without it
// waiting.
const DefaultWALLimit = "2GB"

// duckDBThresholdOff is DuckDB's checkpoint_threshold while the store
// checkpoints by itself: far past any WAL the store lets grow (WALLimit), so
// that DuckDB never checkpoints inside a commit.
const duckDBThresholdOff = "1000TB"

// Checkpoint is one checkpoint the store ran (Options.OnCheckpoint).
type Checkpoint struct {
	Took      time.Duration
	WALBefore int64 // bytes of WAL when it began
	WALAfter  int64 // bytes of WAL when it ended (what was committed meanwhile)
	// Err is why it failed; nil if it succeeded. A checkpoint that DuckDB
	// refused because a transaction that updates or deletes was open is
	// not reported: it is tried again after the next commit.
	Err error
}

// CheckpointStats are the store's checkpoints since it opened.
type CheckpointStats struct {
	Checkpoints int64         // that succeeded
	Failures    int64         // that failed (Checkpoint.Err)
	Busy        int64         // refused by DuckDB for an open transaction, retried
	Total       time.Duration // time in successful checkpoints
	Last        time.Duration // the last successful one
	Longest     time.Duration // the longest successful one
	LastErr     error         // of the last failed one, nil if none failed
	Waits       int64         // writes that waited for the WAL to fall under WALLimit
	WAL         int64         // bytes of WAL now
}

// checkpointer runs the store's checkpoints on its own connection. Write
// kicks it after each commit that leaves the WAL past the threshold; it
// checkpoints until the WAL is under it or a checkpoint fails (tried again
// at the next kick).
type checkpointer struct {
	wal       string // path of the WAL file
	threshold int64
	limit     int64
	conn      *sql.Conn
	report    func(Checkpoint)

	kick chan struct{} // capacity 1: one pending request is enough
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	stats CheckpointStats
	// ran is closed and replaced after each attempt: a write waiting for
	// the WAL to shrink waits on it.
	ran chan struct{}
	// lastErr is the error of the last attempt (nil after a success).
	lastErr error
}

func startCheckpointer(ctx context.Context, db *sql.DB, dbPath string, threshold, limit int64, report func(Checkpoint), prev CheckpointStats) (*checkpointer, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("checkpoint connection: %w", err)
	}
	c := &checkpointer{
		wal: dbPath + ".wal", threshold: threshold, limit: limit, conn: conn, report: report,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		ran: make(chan struct{}), stats: prev,
	}
	go c.run()
	c.poke() // a WAL left by the last run
	return c, nil
}

// poke asks for a checkpoint if the WAL is past the threshold; it never
// waits.
func (c *checkpointer) poke() {
	if c == nil || walSize(c.wal) < c.threshold {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		for size := walSize(c.wal); size >= c.threshold; {
			select {
			case <-c.stop:
				return
			default:
			}
			if !c.checkpoint() {
				break
			}
			// Commits during the checkpoint may have left the WAL past
			// the threshold again: go on, unless it did not shrink at all
			// (then the next commit asks again, rather than spin).
			after := walSize(c.wal)
			if after >= size {
				break
			}
			size = after
		}
	}
}

// checkpoint runs one CHECKPOINT; it says whether it succeeded. The
// statement is never interrupted: Close waits for it (a checkpoint takes a
// fraction of a second at the threshold, and DuckDB checkpoints at close
// anyway).
func (c *checkpointer) checkpoint() bool {
	before := walSize(c.wal)
	t0 := time.Now()
	_, err := c.conn.ExecContext(context.Background(), "CHECKPOINT")
	took := time.Since(t0)
	busy := err != nil && isCheckpointBusy(err)
	if err != nil && !busy {
		err = fmt.Errorf("checkpoint of %d bytes of WAL: %w", before, err)
	}
	c.mu.Lock()
	switch {
	case busy:
		c.stats.Busy++
		c.lastErr = nil
	case err != nil:
		c.stats.Failures++
		c.stats.LastErr = err
		c.lastErr = err
	default:
		c.stats.Checkpoints++
		c.stats.Total += took
		c.stats.Last = took
		c.stats.Longest = max(c.stats.Longest, took)
		c.lastErr = nil
	}
	close(c.ran)
	c.ran = make(chan struct{})
	c.mu.Unlock()
	if !busy && c.report != nil {
		c.report(Checkpoint{Took: took, WALBefore: before, WALAfter: walSize(c.wal), Err: err})
	}
	return err == nil
}

// isCheckpointBusy says that DuckDB refused a CHECKPOINT because another
// transaction that updates or deletes is open (the writer's, between its
// position upsert and its commit, or a facts refresh): nothing failed, the
// checkpoint waits for the next commit.
func isCheckpointBusy(err error) bool {
	return strings.Contains(err.Error(), "Cannot CHECKPOINT: there are other write transactions active")
}

// waitUnderLimit returns once the WAL is under the limit, asking for
// checkpoints meanwhile; it fails if a checkpoint fails or ctx ends. Write
// calls it before it begins a transaction, so that the checkpoint it waits
// for is not refused for the writer's own transaction.
func (c *checkpointer) waitUnderLimit(ctx context.Context) error {
	if c == nil {
		return nil // not open: the write fails on its own
	}
	waited := false
	for {
		size := walSize(c.wal)
		if size < c.limit {
			return nil
		}
		c.mu.Lock()
		ran := c.ran
		if !waited {
			c.stats.Waits++
			waited = true
		}
		c.mu.Unlock()
		select {
		case c.kick <- struct{}{}:
		default:
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the WAL (%d bytes) to fall under its limit of %d: %w", size, c.limit, ctx.Err())
		case <-c.done:
			return fmt.Errorf("wait for the WAL (%d bytes) to fall under its limit of %d: %w", size, c.limit, ErrClosed)
		case <-ran:
		}
		c.mu.Lock()
		err := c.lastErr
		c.mu.Unlock()
		if err != nil {
			return fmt.Errorf("WAL at %d bytes, past its limit of %d: %w", size, c.limit, err)
		}
	}
}

func (c *checkpointer) snapshot() CheckpointStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.WAL = walSize(c.wal)
	return s
}

// close stops the goroutine, after the checkpoint it is running if any, and
// releases its connection.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.conn.Close()
}

func walSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// parseSize reads a size in DuckDB's syntax ("64MB", "1GiB", "512 KB",
// "1000"): decimal units are powers of 1000, binary ones of 1024, a bare
// number is bytes.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: not a number of bytes", s)
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := map[string]float64{
		"": 1, "b": 1, "bytes": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	}[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q", s, t[i:])
	}
	return int64(n * mult), nil
}
