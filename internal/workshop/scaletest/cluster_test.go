package scaletest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestBeyondOneMachine is the acceptance test of docs/scale.md, on a lake
// with a PostgreSQL catalog and an S3 warehouse; see beyondOneMachine.
func TestBeyondOneMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three nats-server processes, six ingesters, SIGKILLs under load")
	}
	beyondOneMachine(t, remoteLake(t))
}

// beyondOneMachine: three nats-server processes in a JetStream cluster, the
// stream at three replicas in three partitions, per partition an ingester
// and its standby (-replica b), each a child process sealing into the lake
// lk every second. Synthetic sessions of many sources are published at a
// steady rate; under that load the active ingester of partition 1 is
// SIGKILLed (its standby goes on sealing the partition meanwhile) and
// started again, then the stream's leader node is SIGKILLed and started
// again. Once every consumer has acked everything and the ingesters have
// stopped (each sealing on stop), the lake holds every event sent exactly
// once, and every analysis over the lake prints what it prints over one
// database loaded with the same events by ingest -file.
func beyondOneMachine(t *testing.T, lk lakeSpec) {
	const (
		parts = 3
		total = 8_000 // events published, at least
		rate  = 400   // events a second
	)
	ctx := t.Context()
	bin := build(t)
	cl := testkit.StartNATSCluster(t, 3)
	_, js := testkit.Client(t, cl.URLs())
	sc := bus.DefaultStream()
	sc.Replicas, sc.Partitions = 3, parts
	stream, err := bus.Retry{}.EnsureStream(ctx, js, sc)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	var ings []*testkit.Proc // by consumer name: evosignal-ingest-pK[-b]
	var consumers []string
	for k := range parts {
		for _, replica := range []string{"", "b"} {
			name := fmt.Sprintf("evosignal-ingest-p%d", k)
			args := []string{"-nats", cl.URLs(), "-replicas", "3", "-partitions", strconv.Itoa(parts), "-partition", strconv.Itoa(k),
				"-seal-every", "1s", "-batch", "500", "-flush", "50ms", "-log-level", "warn"}
			if replica != "" {
				name += "-" + replica
				args = append(args, "-replica", replica)
			}
			args = append(append(args, "-db", filepath.Join(dir, name+".duckdb")), lk.ingest...)
			ings = append(ings, testkit.StartProc(t, name, lk.env, bin.ingest, args...))
			consumers = append(consumers, name)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range ings {
				t.Logf("%s:\n%s", p.Name, p.Output.String())
			}
		}
	})
	killed := map[*testkit.Proc]bool{}
	alive := func() {
		t.Helper()
		for _, p := range ings {
			if exited, err := p.Exited(); exited && !killed[p] {
				t.Fatalf("%s exited: %v\n%s", p.Name, err, p.Output.String())
			}
		}
	}
	// sealed is the number of the last complete seal of the shard (0:
	// none yet, or the lake not there yet).
	sealed := func(shard string) int {
		out, err := analyze(bin.analyze, lk.env, lk.analyze, "sql", "SELECT coalesce(max(seal), 0) AS n FROM lake_seals WHERE shard = '"+shard+"'")
		if err != nil {
			return 0
		}
		n, _ := strconv.Atoi(strings.Trim(strings.Join(strings.Fields(out), ""), `[]{}"n:`))
		return n
	}

	jr := newJournal(t, filepath.Join(dir, "events.jsonl"))
	_, pubJS := testkit.Client(t, cl.URLs()) // the agents' own connection
	published := make(chan error, 1)
	t0 := time.Now()
	go func() {
		published <- jr.publish(ctx, pubJS, synth.New(23, time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)), total, rate)
	}()
	sent := func(n int64) {
		t.Helper()
		waitFor(t, fmt.Sprintf("%d events published", n), 3*time.Minute, func() bool { alive(); return jr.sent.Load() >= n })
	}

	// Under the load: partition 1's active ingester is SIGKILLed, then the
	// stream's leader node; the node comes back, then the ingester, once
	// its standby has sealed the partition without it.
	sent(total / 4)
	victim := ings[2] // partition 1's active ingester
	before := sealed("EVO-p1")
	victim.Kill()
	killed[victim] = true
	t.Logf("%s: SIGKILLed %s at %d events sent (shard EVO-p1 at seal %d)", time.Since(t0).Round(time.Millisecond), victim.Name, jr.sent.Load(), before)

	sent(total * 2 / 5)
	var leader *testkit.ClusterNode
	waitFor(t, "the stream's leader", time.Minute, func() bool {
		info, err := stream.Info(ctx)
		if err == nil && info.Cluster != nil {
			leader = cl.Node(info.Cluster.Leader)
		}
		return leader != nil
	})
	leader.Kill()
	t.Logf("%s: SIGKILLed nats-server %s, the stream's leader, at %d events sent", time.Since(t0).Round(time.Millisecond), leader.Name, jr.sent.Load())

	sent(total * 3 / 5)
	leader.Start()
	t.Logf("%s: started nats-server %s again at %d events sent", time.Since(t0).Round(time.Millisecond), leader.Name, jr.sent.Load())

	sent(total * 3 / 4)
	waitFor(t, "the standby to seal partition 1 while its active ingester is down", 2*time.Minute, func() bool {
		alive()
		return sealed("EVO-p1") > before
	})
	victim.Start()
	killed[victim] = false
	t.Logf("%s: started %s again at %d events sent (shard EVO-p1 at seal %d, by the standby)", time.Since(t0).Round(time.Millisecond), victim.Name, jr.sent.Load(), sealed("EVO-p1"))

	if err := <-published; err != nil {
		t.Fatal(err)
	}
	n := jr.sent.Load()
	t.Logf("%s: published %d events", time.Since(t0).Round(time.Millisecond), n)
	logged := time.Now()
	waitFor(t, "every consumer to ack every message", 3*time.Minute, func() bool {
		alive()
		if time.Since(logged) > 10*time.Second {
			logged = time.Now()
			t.Logf("%s: acked by the consumers: %v", time.Since(t0).Round(time.Millisecond), ackFloors(ctx, js, consumers...))
		}
		return caughtUp(ctx, js, consumers...)
	})
	t.Logf("%s: every consumer caught up", time.Since(t0).Round(time.Millisecond))
	for _, p := range ings {
		if err := p.Stop(time.Minute); err != nil {
			t.Fatalf("%s on SIGTERM: %v\n%s", p.Name, err, p.Output.String())
		}
	}
	t.Logf("%s: every ingester stopped, sealing on stop", time.Since(t0).Round(time.Millisecond))

	exactlyOnce(t, bin, lk, n)
	one := filepath.Join(dir, "one.duckdb")
	loadFile(t, bin, jr, one)
	sameOutputs(t, outputs(t, bin.analyze, lk.env, lk.analyze), outputs(t, bin.analyze, lk.env, []string{"-db", one}), "-lake", "-db (ingest -file)")

	for _, q := range []string{
		"SELECT split_part(subject, '.', 2) AS partition, count(*) AS events, count(DISTINCT source) AS sources FROM events GROUP BY 1 ORDER BY 1",
		"SELECT shard, count(*) AS seals, sum(events) AS events, count(DISTINCT database) AS databases FROM lake_seals GROUP BY 1 ORDER BY 1",
	} {
		out, err := analyze(bin.analyze, lk.env, lk.analyze, "sql", q)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s", strings.Join(strings.Fields(out), " "))
	}
	for _, p := range ings {
		t.Logf("%s: %d seals failed (a race with the other replica is not a failure)", p.Name, strings.Count(p.Output.String(), "seal into the lake failed"))
	}
}
