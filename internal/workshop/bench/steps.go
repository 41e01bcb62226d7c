package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
)

// phaseWriteSteps is a diagnostic: it writes N events through store.Write
// in batches of 10,000 (or -batch) on a fresh database, with the store's StepTimer on,
// to show where a commit's time goes statement by statement; the figures of
// the pipeline are those of the ingest phase. It runs three times: with
// DuckDB checkpointing inside commits at its default threshold, with a
// threshold large enough that no checkpoint happens during the run, and
// with the store's own checkpointer beside the writer. All end with an
// explicit CHECKPOINT, counted in their time.
func phaseWriteSteps(ctx context.Context, e *env) ([]Result, error) {
	pool, err := genPool(ctx, e.seed, e.pool, "evo")
	if err != nil {
		return nil, err
	}
	writeBatch := ingest.DefaultConfig().BatchSize
	if e.batch > 0 {
		writeBatch = e.batch
	}
	var out []Result
	for _, v := range []struct{ name, threshold, what string }{
		{"write-steps", duckDBCheckpointThreshold, "store.Write's statements timed one by one (diagnostic)"},
		{"write-steps-nockpt", "100GB", "  the same with checkpoint_threshold=100GB (no checkpoint)"},
		// threshold "": the store's own checkpointer, with its defaults.
		{"write-steps-store", "", "  the same with the store's checkpointer (its own connection)"},
	} {
		r, err := writeSteps(ctx, e, pool, writeBatch, v.name, v.threshold, v.what)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// duckDBCheckpointThreshold is DuckDB's own default, which the store
// raises (store.DefaultCheckpointThreshold).
const duckDBCheckpointThreshold = "16MB"

// stepTimes collects a store's StepTimer calls.
type stepTimes struct {
	order []string // steps in the order first seen: the store's
	took  map[string]time.Duration
	most  map[string]time.Duration // the longest of each step
	wal   string                   // the write-ahead log, to see checkpoints

	walBefore   int64
	commit      time.Duration // of the last batch
	checkpoints int
}

func (t *stepTimes) step(name string, d time.Duration) {
	if _, ok := t.took[name]; !ok {
		t.order = append(t.order, name)
	}
	t.took[name] += d
	t.most[name] = max(t.most[name], d)
	switch name {
	case "record batch":
		t.walBefore = fileSize(t.wal)
	case "commit":
		t.commit = d
		if fileSize(t.wal) < t.walBefore {
			t.checkpoints++
		}
	}
}

func writeSteps(ctx context.Context, e *env, pool []payload, writeBatch int, name, threshold, what string) (Result, error) {
	dbPath := filepath.Join(e.dir, "steps", name+".duckdb")
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o755); err != nil {
		return Result{}, err
	}
	if err := removeDB(dbPath); err != nil {
		return Result{}, err
	}
	times := &stepTimes{took: map[string]time.Duration{}, most: map[string]time.Duration{}, wal: dbPath + ".wal"}
	st, err := store.OpenWith(ctx, dbPath, store.Options{DuckDBCheckpointThreshold: threshold, CheckpointThreshold: e.ckThreshold, StepTimer: times.step})
	if err != nil {
		return Result{}, err
	}
	defer st.Close()

	var slowCommits int
	var maxCommit time.Duration
	var batchTook, commitTook []time.Duration // per batch, to see growth with the table
	var maxWAL int64
	var done atomic.Int64
	stop := ticker(ctx, e.progress, func() {
		e.log.Info(name, append([]any{"rows", done.Load(), "of", e.events}, memAttrs()...)...)
	})
	defer stop()
	items := make([]store.Item, 0, writeBatch)
	sp := startSpan()
	for i := 0; i < e.events; {
		// The pool repeats after len(pool) events: a repeat gets its own
		// id, so that every event is new to the store.
		items = items[:0]
		for end := min(i+writeBatch, e.events); i < end; i++ {
			p := &pool[i%len(pool)]
			ev := p.ev
			if round := i / len(pool); round > 0 {
				c := *ev
				c.ID = fmt.Sprintf("%s-%d", ev.ID, round)
				ev = &c
			}
			items = append(items, store.Item{Event: ev, Subject: p.subject, StreamSeq: uint64(i + 1)})
		}
		bt := time.Now()
		res, err := st.Write(ctx, store.Batch{Origin: store.FromNATS, Stream: "EVO", Position: uint64(i), Items: items})
		if err != nil {
			return Result{}, err
		}
		if res.Accepted != len(items) {
			return Result{}, fmt.Errorf("%s: store accepted %d of a batch of %d", name, res.Accepted, len(items))
		}
		batchTook, commitTook = append(batchTook, time.Since(bt)), append(commitTook, times.commit)
		maxCommit = max(maxCommit, times.commit)
		maxWAL = max(maxWAL, fileSize(times.wal))
		if times.commit > 100*time.Millisecond {
			slowCommits++
		}
		done.Store(int64(i))
	}
	// What was not checkpointed during the run is checkpointed at the end
	// (or at the next open): it is part of the cost.
	t0 := time.Now()
	if _, err := st.DB().ExecContext(ctx, "CHECKPOINT"); err != nil {
		return Result{}, fmt.Errorf("final checkpoint: %w", err)
	}
	final := time.Since(t0)
	r := sp.row(name, what, int64(e.events), 0, time.Time{})
	stop()
	var total time.Duration
	for _, d := range times.took {
		total += d
	}
	r.Extra = map[string]any{"batches": (e.events + writeBatch - 1) / writeBatch, "batch": writeBatch, "checkpoints_seen": times.checkpoints,
		"commits_over_100ms": slowCommits, "max_commit_seconds": maxCommit.Seconds(),
		"final_checkpoint_seconds": final.Seconds()}
	k := max(1, len(batchTook)/10)
	sorted := slices.Sorted(slices.Values(commitTook))
	r.Extra["p99_commit_ms"] = float64(sorted[min(len(sorted)-1, len(sorted)*99/100)].Microseconds()) / 1000
	sorted = slices.Sorted(slices.Values(batchTook))
	r.Extra["max_batch_ms"] = float64(sorted[len(sorted)-1].Microseconds()) / 1000
	r.Extra["p99_batch_ms"] = float64(sorted[min(len(sorted)-1, len(sorted)*99/100)].Microseconds()) / 1000
	r.Extra["max_wal_mb"] = float64(maxWAL) / 1e6
	if threshold == "" {
		ck := st.CheckpointStats()
		r.Extra["checkpoints_seen"] = ck.Checkpoints
		r.Extra["checkpoint_seconds"] = ck.Total.Seconds()
		r.Extra["checkpoint_max_ms"] = float64(ck.Longest.Microseconds()) / 1000
		r.Extra["checkpoint_busy"] = ck.Busy
		r.Extra["wal_limit_waits"] = ck.Waits
	}
	r.Extra["first_tenth_batch_ms"] = meanMS(batchTook[:k])
	r.Extra["last_tenth_batch_ms"] = meanMS(batchTook[len(batchTook)-k:])
	r.Extra["first_tenth_commit_ms"] = meanMS(commitTook[:k])
	r.Extra["last_tenth_commit_ms"] = meanMS(commitTook[len(commitTook)-k:])
	var parts []string
	for _, s := range times.order {
		d := times.took[s]
		r.Extra["s_"+strings.ReplaceAll(s, " ", "_")] = d.Seconds()
		parts = append(parts, fmt.Sprintf("%s %.1fs (%.0f%%, max %dms)", s, d.Seconds(), 100*d.Seconds()/total.Seconds(), times.most[s].Milliseconds()))
	}
	e.log.Info(name+" breakdown", "steps", strings.Join(parts, ", "))
	return r, nil
}

// meanMS is the mean of ds in milliseconds.
func meanMS(ds []time.Duration) float64 {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return float64(t.Milliseconds()) / float64(len(ds))
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}
