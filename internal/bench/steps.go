package bench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/queries"
)

// writeBatch is the ingester's batch size (ingest.DefaultConfig().BatchSize).
const writeBatch = 10000

// phaseWriteSteps is a diagnostic: it runs the statements store.Write runs
// for each batch (the same embedded SQL files, in the same order, in one
// transaction per batch of 10,000) on a fresh database and times each step,
// to show where a commit's time goes. It mirrors store.(*Store).commit as
// written today; the figures of the pipeline are those of the ingest phase.
// It runs twice: with DuckDB's default checkpoint threshold, and with one
// large enough that no checkpoint happens during the run. Both end with an
// explicit CHECKPOINT, counted in their time.
func phaseWriteSteps(ctx context.Context, e *env) ([]Result, error) {
	pool, err := genPool(ctx, e.seed, e.pool, "evo")
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, v := range []struct{ name, threshold, what string }{
		{"write-steps", "", "store.Write's statements timed one by one (diagnostic)"},
		{"write-steps-nockpt", "100GB", "  the same with checkpoint_threshold=100GB (no checkpoint)"},
	} {
		r, err := writeSteps(ctx, e, pool, v.name, v.threshold, v.what)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func writeSteps(ctx context.Context, e *env, pool []payload, name, threshold, what string) (Result, error) {
	dbPath := filepath.Join(e.dir, "steps", name+".duckdb")
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o755); err != nil {
		return Result{}, err
	}
	if err := removeDB(dbPath); err != nil {
		return Result{}, err
	}
	db, err := sql.Open("duckdb", dbPath)
	if err != nil {
		return Result{}, fmt.Errorf("open %s: %w", dbPath, err)
	}
	defer db.Close()
	ms, err := queries.Migrations()
	if err != nil {
		return Result{}, err
	}
	for _, m := range ms {
		if _, err := db.ExecContext(ctx, m.SQL); err != nil {
			return Result{}, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	derive, err := queries.Derive()
	if err != nil {
		return Result{}, err
	}
	c, err := db.Conn(ctx)
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	if threshold != "" { // a constant of this file, not input
		if _, err := c.ExecContext(ctx, "SET checkpoint_threshold = '"+threshold+"'"); err != nil {
			return Result{}, fmt.Errorf("set checkpoint threshold: %w", err)
		}
	}
	if _, err := c.ExecContext(ctx, queries.MustRead("ingest/stage_table.sql")); err != nil {
		return Result{}, fmt.Errorf("create staging table: %w", err)
	}
	var stage *duckdb.Appender
	if err := c.Raw(func(dc any) error {
		d, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		stage, err = duckdb.NewAppender(d, "temp", "main", "batch_events")
		return err
	}); err != nil {
		return Result{}, fmt.Errorf("appender for batch_events: %w", err)
	}
	defer stage.Close()

	// Steps in store.commit's order.
	steps := []string{"begin", "append rows", "appender flush", "insert into events"}
	for _, d := range derive {
		steps = append(steps, "derive "+strings.TrimSuffix(path.Base(d.File), ".sql"))
	}
	steps = append(steps, "clear stage", "save position", "record batch", "commit")
	took := make(map[string]time.Duration, len(steps))
	exec := func(step, q string, args ...any) error {
		t0 := time.Now()
		_, err := c.ExecContext(ctx, q, args...)
		took[step] += time.Since(t0)
		if err != nil {
			return fmt.Errorf("%s: %w", step, err)
		}
		return nil
	}
	wal := dbPath + ".wal"
	var checkpoints, slowCommits int
	var maxCommit time.Duration
	var batchTook, commitTook []time.Duration // per batch, to see growth with the table
	var done atomic.Int64
	stop := ticker(ctx, e.progress, func() {
		e.log.Info(name, append([]any{"rows", done.Load(), "of", e.events}, memAttrs()...)...)
	})
	defer stop()
	sp := startSpan()
	for i := 0; i < e.events; {
		bt := time.Now()
		if err := exec("begin", "BEGIN TRANSACTION"); err != nil {
			return Result{}, err
		}
		now := time.Now().UTC()
		first := uint64(i + 1)
		end := min(i+writeBatch, e.events)
		t0 := time.Now()
		for ; i < end; i++ {
			p := &pool[i%len(pool)]
			ev := p.ev
			if err := stage.AppendRow(ev.Source, ev.ID, string(ev.Type), ev.Time.UTC(), ev.Subject, ev.Seq,
				string(ev.Data), events.AgentOf(ev.Source), nil, p.subject, uint64(i+1), now,
				keyHash(ev.Source, ev.ID)); err != nil {
				return Result{}, fmt.Errorf("append row %d: %w", i, err)
			}
		}
		took["append rows"] += time.Since(t0)
		t0 = time.Now()
		if err := stage.Flush(); err != nil {
			return Result{}, fmt.Errorf("appender flush: %w", err)
		}
		took["appender flush"] += time.Since(t0)
		if err := exec("insert into events", queries.MustRead("ingest/append_events.sql")); err != nil {
			return Result{}, err
		}
		for _, d := range derive {
			if err := exec("derive "+strings.TrimSuffix(path.Base(d.File), ".sql"), d.SQL); err != nil {
				return Result{}, err
			}
		}
		if err := exec("clear stage", queries.MustRead("ingest/clear_stage.sql")); err != nil {
			return Result{}, err
		}
		if err := exec("save position", queries.MustRead("ingest/save_position.sql"), "EVO", uint64(i), now, now); err != nil {
			return Result{}, err
		}
		n := int(uint64(i) - first + 1)
		if err := exec("record batch", queries.MustRead("ingest/record_batch.sql"),
			now, "nats", "EVO", first, uint64(i), n, n, 0, 0); err != nil {
			return Result{}, err
		}
		walBefore := fileSize(wal)
		t0 = time.Now()
		if err := exec("commit", "COMMIT"); err != nil {
			return Result{}, err
		}
		ct := time.Since(t0)
		batchTook, commitTook = append(batchTook, time.Since(bt)), append(commitTook, ct)
		maxCommit = max(maxCommit, ct)
		if ct > 100*time.Millisecond {
			slowCommits++
		}
		if fileSize(wal) < walBefore {
			checkpoints++
		}
		done.Store(int64(i))
	}
	// What was not checkpointed during the run is checkpointed at the end
	// (or at the next open): it is part of the cost.
	t0 := time.Now()
	if _, err := c.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return Result{}, fmt.Errorf("final checkpoint: %w", err)
	}
	final := time.Since(t0)
	r := sp.row(name, what, int64(e.events), 0, time.Time{})
	stop()
	var total time.Duration
	for _, d := range took {
		total += d
	}
	r.Extra = map[string]any{"batches": (e.events + writeBatch - 1) / writeBatch, "checkpoints_seen": checkpoints,
		"commits_over_100ms": slowCommits, "max_commit_seconds": maxCommit.Seconds(),
		"final_checkpoint_seconds": final.Seconds()}
	k := max(1, len(batchTook)/10)
	r.Extra["first_tenth_batch_ms"] = meanMS(batchTook[:k])
	r.Extra["last_tenth_batch_ms"] = meanMS(batchTook[len(batchTook)-k:])
	r.Extra["first_tenth_commit_ms"] = meanMS(commitTook[:k])
	r.Extra["last_tenth_commit_ms"] = meanMS(commitTook[len(commitTook)-k:])
	var parts []string
	for _, s := range steps {
		r.Extra["s_"+strings.ReplaceAll(s, " ", "_")] = took[s].Seconds()
		parts = append(parts, fmt.Sprintf("%s %.1fs (%.0f%%)", s, took[s].Seconds(), 100*took[s].Seconds()/total.Seconds()))
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
