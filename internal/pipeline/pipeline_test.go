package pipeline_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/synth"
)

// testConfig is the embedded defaults in a temporary directory, with no
// TCP listener.
func testConfig(tb testing.TB) pipeline.Config {
	tb.Helper()
	dir := tb.TempDir()
	cfg := pipeline.DefaultConfig()
	cfg.DB = filepath.Join(dir, "evo.duckdb")
	cfg.Server = bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: filepath.Join(dir, "jetstream")}
	cfg.Ingest.FlushInterval = 20 * time.Millisecond
	rb := bus.DefaultRulesBucket()
	cfg.Rules = &rb
	return cfg
}

// publish sends n synth sessions through a Publisher on p and returns how
// many events it sent.
func publish(tb testing.TB, p *pipeline.Pipeline, n int, seed uint64) int {
	tb.Helper()
	pub, err := agent.NewPublisher(p.JetStream(), agent.PublisherConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	g := synth.New(seed, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	total := 0
	for range n {
		k, err := g.Session(tb.Context(), pub)
		if err != nil {
			tb.Fatal(err)
		}
		total += k
	}
	if err := pub.Close(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return total
}

func countEvents(tb testing.TB, st *store.Store) int {
	tb.Helper()
	var n int
	if err := st.DB().QueryRow("SELECT count(*) FROM events").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func TestStartWaitClose(t *testing.T) {
	cfg := testConfig(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := pipeline.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.KV() == nil {
		t.Fatal("no rules bucket, though Config.Rules was set")
	}
	// Two rounds: WaitIngested waits for what was published before it.
	sent := 0
	for round := range 2 {
		sent += publish(t, p, 20, uint64(round+1))
		last, err := p.WaitIngested(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := countEvents(t, p.Store()); got != sent || last != uint64(sent) {
			t.Fatalf("round %d: WaitIngested = seq %d with %d events stored, want %d and %d", round, last, got, sent, sent)
		}
	}
	// A second pipeline on the same database stops at the store, before
	// starting a server on the first one's JetStream store.
	if _, err := pipeline.Start(ctx, cfg); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second Start = %v, want store.ErrLocked", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed: the database is free again and holds everything.
	st, err := store.Open(ctx, cfg.DB)
	if err != nil {
		t.Fatalf("open after Close: %v", err)
	}
	defer st.Close()
	if got := countEvents(t, st); got != sent {
		t.Fatalf("after Close: %d events, want %d", got, sent)
	}
}

// WaitIngested fails, instead of waiting forever, when the ingester is not
// running; a fresh one started later picks up where the last stopped.
func TestWaitIngestedWithoutIngester(t *testing.T) {
	cfg := testConfig(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := pipeline.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.StopIngest(); err != nil {
		t.Fatal(err)
	}
	sent := publish(t, p, 5, 9)
	if _, err := p.WaitIngested(ctx); err == nil || !strings.Contains(err.Error(), "ingester stopped") {
		t.Fatalf("WaitIngested with the ingester stopped = %v, want an error saying so", err)
	}
	if err := p.Ingest(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitIngested(ctx); err != nil {
		t.Fatal(err)
	}
	if got := countEvents(t, p.Store()); got != sent {
		t.Fatalf("%d events, want %d", got, sent)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	cfg := pipeline.DefaultConfig()
	cfg.Stream.Name = ""
	cfg.Ingest.BatchSize = 0
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate() = nil, want errors")
	}
	for _, want := range []string{"no database file", "store directory is empty", "batch size 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %q, want it to mention %q", err, want)
		}
	}
	cfg.NATS.URL = "nats://127.0.0.1:4222"
	if err := cfg.Validate(); err != nil && strings.Contains(err.Error(), "store directory") {
		t.Errorf("with a server URL, Validate() = %q; the embedded server's settings do not apply", err)
	}
}
