package scaletest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/lake"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestSIGKILLDuringSeal is the test of a shard dying mid-seal, on a lake
// with a PostgreSQL catalog and an S3 warehouse; see sigkillDuringSeal.
func TestSIGKILLDuringSeal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: an ingester SIGKILLed in two seals, a nats-server process")
	}
	sigkillDuringSeal(t, remoteLake(t))
}

// sigkillDuringSeal: an ingester (a child process, on a nats-server
// process) seals its events into the lake lk once, on stop; the analyses
// over the lake are taken then. Restarted, it ingests several thousand
// more events, and its seal, asked for on POST /seal, is held by the
// test-only lake.HoldEnv right after its commit to tool_calls (the facts
// and most typed tables committed, not the events): the ingester is
// SIGKILLed there. Restarted, its next seal is held and SIGKILLed after
// its commit to the events table (every table but the seals table
// committed). After each SIGKILL the lake, as the analyzers see it, is what
// it was before those seals: every table's rows, the events' keys, the
// stored facts and the analyses over them print as before. Restarted once more with nothing new to
// ingest, the ingester's next seal (POST /seal) completes the stopped one: the lake
// holds every event once, and every analysis prints what it prints over
// one database loaded with the same events by ingest -file.
func sigkillDuringSeal(t *testing.T, lk lakeSpec) {
	ctx := t.Context()
	bin := build(t)
	srv := testkit.StartNATSProcess(t)
	_, js := testkit.Client(t, srv.URL())
	dir := t.TempDir()
	jr := newJournal(t, filepath.Join(dir, "events.jsonl"))
	gen := synth.New(29, time.Date(2026, 11, 9, 0, 0, 0, 0, time.UTC))
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	args := append([]string{"-nats", srv.URL(), "-db", filepath.Join(dir, "shard.duckdb"), "-seal-every", "0", "-http", addr,
		"-batch", "500", "-flush", "50ms", "-log-level", "warn"}, lk.ingest...)
	var runs []*testkit.Proc
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range runs {
				t.Logf("%s:\n%s", p.Name, p.Output.String())
			}
		}
	})
	// start starts the ingester, its seals held after the commit to
	// holdAt ("": not held).
	start := func(holdAt string) (p *testkit.Proc, held string) {
		env := lk.env
		name := "ingester"
		if holdAt != "" {
			held = filepath.Join(dir, "held-"+holdAt)
			env = append(append([]string(nil), env...), lake.HoldEnv+"="+holdAt+":"+held)
			name += " (seals held after " + holdAt + ")"
		}
		p = testkit.StartProc(t, name, env, bin.ingest, args...)
		runs = append(runs, p)
		return p, held
	}
	publish := func(p *testkit.Proc, n int64) {
		t.Helper()
		if err := jr.publish(ctx, js, gen, n, 0); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the ingester to ack every message", 2*time.Minute, func() bool {
			if exited, err := p.Exited(); exited {
				t.Fatalf("%s exited: %v\n%s", p.Name, err, p.Output.String())
			}
			return caughtUp(ctx, js, "evosignal-ingest")
		})
	}
	// killInSeal asks p for a seal and SIGKILLs it once the seal is held.
	killInSeal := func(p *testkit.Proc, held string) {
		t.Helper()
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			for sctx.Err() == nil {
				// Until the seal is held: the listener may not be up yet.
				req, _ := http.NewRequestWithContext(sctx, http.MethodPost, "http://"+addr+"/seal", nil)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		waitFor(t, p.Name+" to hold its seal", 2*time.Minute, func() bool {
			if exited, err := p.Exited(); exited {
				t.Fatalf("%s exited: %v\n%s", p.Name, err, p.Output.String())
			}
			_, err := os.Stat(held)
			return err == nil
		})
		p.Kill()
	}

	p, _ := start("")
	publish(p, 2_000)
	if err := p.Stop(time.Minute); err != nil {
		t.Fatalf("ingester on SIGTERM: %v", err)
	}
	before := run(t, bin.analyze, lk.env, lk.analyze, snapshot)
	first := jr.sent.Load()
	t.Logf("sealed %d events on stop", first)

	p, held := start("tool_calls")
	publish(p, 6_000)
	killInSeal(p, held)
	t.Logf("SIGKILLed the ingester in a seal of %d more events, after its commit to tool_calls", jr.sent.Load()-first)
	sameOutputs(t, run(t, bin.analyze, lk.env, lk.analyze, snapshot), before, "after a SIGKILL after tool_calls", "before")

	p, held = start("events")
	killInSeal(p, held)
	t.Log("SIGKILLed the ingester in its next seal, after its commit to events")
	sameOutputs(t, run(t, bin.analyze, lk.env, lk.analyze, snapshot), before, "after a SIGKILL after events", "before")
	if t.Failed() {
		t.FailNow()
	}

	p, _ = start("")
	var res string
	waitFor(t, "POST /seal to answer", 2*time.Minute, func() bool {
		resp, err := http.Post("http://"+addr+"/seal", "", nil)
		if err != nil {
			return false // not listening yet
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /seal: %s: %s", resp.Status, b)
		}
		res = string(b)
		return true
	})
	t.Logf("the restarted ingester's seal, nothing new to ingest: %s", strings.TrimSpace(res))
	if err := p.Stop(time.Minute); err != nil {
		t.Fatalf("ingester on SIGTERM: %v", err)
	}
	exactlyOnce(t, bin, lk, jr.sent.Load())
	one := filepath.Join(dir, "one.duckdb")
	loadFile(t, bin, jr, one)
	final := outputs(t, bin.analyze, lk.env, lk.analyze)
	sameOutputs(t, final, outputs(t, bin.analyze, lk.env, []string{"-db", one}), "-lake", "-db (ingest -file)")
	if k := "sql " + typedCounts; final[k] == before[k] {
		t.Errorf("the lake's tables after the completed seal are as before it: %s", final[k])
	}
	out, err := analyze(bin.analyze, lk.env, lk.analyze, "sql", "SELECT shard, seal, events FROM lake_seals ORDER BY seal")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lake_seals: %s", out)
}
