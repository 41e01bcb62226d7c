package pipeline_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/lake"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
	"github.com/nats-io/nats.go/jetstream"
)

// TestReplicasSealOnce: two replicas of one partition (each its own
// consumer and database, on one nats-server) seal under one shard name in
// turns, and one replica stops (sealing on Close): the lake holds every
// event of the partition exactly once, with every typed table as the
// replicas hold it.
func TestReplicasSealOnce(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: filepath.Join(dir, "js")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	lakeDir := filepath.Join(dir, "lake")
	const shard = "EVO-p1"
	replica := func(name string, local ...string) *pipeline.Pipeline {
		l, err := lake.Open(ctx, lakeDir, lake.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		cfg := pipeline.DefaultConfig()
		cfg.NATS.URL = srv.ClientURL()
		cfg.DB = filepath.Join(dir, name+".duckdb")
		cfg.Stream.Partitions = 3
		cfg.Ingest.Partition = 1
		cfg.Ingest.Durable = "evosignal-ingest-p1-" + name
		cfg.Ingest.FlushInterval = 20 * time.Millisecond
		cfg.Ingest.FactsEvery = 50 * time.Millisecond
		cfg.Lake = &pipeline.LakeConfig{Lake: l, Shard: shard, Keep: time.Millisecond} // each replica expires after its first seal
		for _, f := range local {
			// Events of this database alone, before the stream's: its
			// rowids are not the other replica's.
			r, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := pipeline.LoadFile(ctx, cfg, r, f, nil); err != nil || res.Accepted == 0 {
				t.Fatalf("load %s: %+v, %v", f, res, err)
			}
			r.Close()
		}
		p, err := pipeline.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	// b's database holds events of a file too: replicas' rowids differ,
	// and what a database holds beside the stream is its own (sealed only
	// after b has sealed the shard once, docs/scale.md).
	a, b := replica("a"), replica("b", testdb.SampleSessions(t)[:2]...)
	partition := func() int {
		info, err := a.Stream().Info(ctx, jetstream.WithSubjectFilter(bus.PartitionFilter("evo", 1)))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, k := range info.State.Subjects {
			n += int(k)
		}
		return n
	}
	caughtUp := func(ps ...*pipeline.Pipeline) int {
		want := partition()
		for _, p := range ps {
			deadline := time.Now().Add(30 * time.Second)
			// The stream's events only: b holds a file's events too.
			for streamEvents(t, p.Store()) < want {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %d events of the partition's %d", p.Store().Path(), streamEvents(t, p.Store()), want)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		return want
	}
	seal := func(p *pipeline.Pipeline) pipeline.SealResult {
		t.Helper()
		r, err := p.Seal(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	publish(t, a, 60, 1)
	want := caughtUp(a, b)
	if r := seal(a); r.Rows == 0 {
		t.Fatalf("the first seal committed nothing")
	}
	checkLake(t, lakeDir, want, b.Store().DB())

	publish(t, a, 60, 2) // b takes over: it seals on from a's stream position
	want = caughtUp(a, b)
	if r := seal(b); r.Rows == 0 {
		t.Fatal("the replica's seal committed nothing")
	}
	checkLake(t, lakeDir, want, b.Store().DB())
	if r := seal(a); len(r.Tables) > 0 && r.Tables[len(r.Tables)-1].Table == "events" {
		t.Errorf("a replica with nothing new sealed events again: %+v", r)
	}
	checkLake(t, lakeDir, want, b.Store().DB())

	publish(t, b, 40, 3) // a stops: its last seal on Close takes them
	want = caughtUp(a, b)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	seal(b)
	checkLake(t, lakeDir, want, b.Store().DB())
}

// streamEvents counts the events of the database that came from the
// stream (a stream sequence; a file's events have none).
func streamEvents(tb testing.TB, st *store.Store) int {
	tb.Helper()
	var n int
	if err := st.DB().QueryRow("SELECT count(*) FROM events WHERE coalesce(stream_seq, 0) > 0").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// checkLake compares the lake's tables with a replica's database: the
// events, each once, and the rows of every typed table.
func checkLake(t *testing.T, dir string, events int, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	l, err := lake.Open(ctx, dir, lake.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mem, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := l.Attach(ctx, mem); err != nil {
		t.Fatal(err)
	}
	var n, keys int
	if err := mem.QueryRow(`SELECT count(*), count(DISTINCT (source, id)) FROM events`).Scan(&n, &keys); err != nil {
		t.Fatal(err)
	}
	if n != events || keys != events {
		t.Fatalf("the lake holds %d events (%d distinct), want the partition's %d, each once", n, keys, events)
	}
	for _, tbl := range []string{"session_starts", "session_ends", "plans", "plan_tasks", "replans", "replan_dropped", "hints_stripped", "tool_calls", "task_completions", "depth_limits"} {
		var inLake, inDB int
		mem.QueryRow(`SELECT count(*) FROM ` + tbl).Scan(&inLake)
		// The replica's rows of the stream's events (not of its own file).
		db.QueryRow(`SELECT count(*) FROM ` + tbl + ` WHERE session IN (SELECT session FROM events WHERE stream_seq IS NOT NULL)`).Scan(&inDB)
		if inLake != inDB {
			t.Errorf("%s: the lake holds %d rows, the replica %d", tbl, inLake, inDB)
		}
	}
}
