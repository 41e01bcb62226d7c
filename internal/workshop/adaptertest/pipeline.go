package adaptertest

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// Pipeline is a running evosignal for an adapter's end-to-end test: an
// embedded nats-server with the stream, a DuckDB store in a temporary
// directory, and the ingester moving one into the other. It stops when the
// test ends.
type Pipeline struct {
	Srv   *bus.Server
	JS    jetstream.JetStream
	Store *store.Store
	in    *ingest.Ingester
}

// StartPipeline starts a Pipeline.
func StartPipeline(tb testing.TB) *Pipeline {
	tb.Helper()
	srv, _, js := testkit.Embedded(tb)
	ctx := context.Background()
	if _, err := bus.EnsureStream(ctx, js, bus.DefaultStream()); err != nil {
		tb.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(tb.TempDir(), "adapter.duckdb"))
	if err != nil {
		tb.Fatal(err)
	}
	cfg := ingest.DefaultConfig()
	cfg.FlushInterval = 20 * time.Millisecond
	cfg.FactsEvery = 50 * time.Millisecond
	in, err := ingest.New(cfg, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- in.Run(runCtx, js) }()
	tb.Cleanup(func() {
		stop()
		if err := <-runErr; err != nil {
			tb.Errorf("ingester: %v", err)
		}
		st.Close()
	})
	return &Pipeline{Srv: srv, JS: js, Store: st, in: in}
}

// Settle waits until the ingester has stored everything in the stream and
// the facts of every session. The stream's last sequence is read again on
// every round: a receiver may still be publishing (spans that arrive late)
// while the ingester catches up.
func (p *Pipeline) Settle(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	s, err := p.JS.Stream(ctx, bus.DefaultStream().Name)
	if err != nil {
		tb.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		info, err := s.Info(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		last := info.State.LastSeq
		pos, err := p.Store.Position(ctx, bus.DefaultStream().Name)
		n, ferr := p.Store.PendingFacts(ctx)
		if err == nil && ferr == nil && pos == last && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the ingester did not store the stream (at %d of %d, %d sessions' facts pending; %v %v)", pos, last, n, err, ferr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Count returns the result of a count(*) query.
func (p *Pipeline) Count(tb testing.TB, q string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := p.Store.DB().QueryRow(q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// CheckTruth runs the analyzers (metrics.Replans, metrics.Trend) on the
// store and compares their figures with the generator's truth.
func (p *Pipeline) CheckTruth(tb testing.TB, want Truth) {
	tb.Helper()
	ctx := context.Background()
	src := metrics.DB{DB: p.Store.DB()}
	res, err := metrics.Replans(ctx, src, metrics.Filter{})
	if err != nil {
		tb.Fatal(err)
	}
	r := res.Rows[0]
	if r.Sessions != want.Sessions || r.OpenSessions != 0 {
		tb.Errorf("sessions = %d ended, %d open; want %d ended, 0 open", r.Sessions, r.OpenSessions, want.Sessions)
	}
	if r.ValidReplans != want.Replans || r.Replanned != want.Replanned {
		tb.Errorf("valid replans = %d in %d sessions, want %d in %d", r.ValidReplans, r.Replanned, want.Replans, want.Replanned)
	}
	if r.InvalidReplans != 0 {
		tb.Errorf("invalid replans = %d, want 0", r.InvalidReplans)
	}
	checkRate(tb, "replan rate", r.ReplanRate, want.Replanned, want.Sessions)
	checkRate(tb, "average replans", r.AvgReplans, want.Replans, want.Sessions)
	if r.ReportedReplansMismatch != 0 {
		tb.Errorf("%d sessions report another replan count than their events", r.ReportedReplansMismatch)
	}
	if want.Completions != 0 {
		if n := p.Count(tb, "SELECT count(*) FROM task_completions"); n != want.Completions {
			tb.Errorf("task completions = %d, want %d", n, want.Completions)
		}
	}
	rows, err := metrics.Trend(ctx, src, metrics.Filter{}, metrics.EveryWeek)
	if err != nil {
		tb.Fatal(err)
	}
	var calls, failed int64
	for _, row := range rows {
		calls += row.RealToolCalls
		failed += row.FailedRealToolCalls
	}
	if calls != want.RealCalls || failed != want.FailedCalls {
		tb.Errorf("real tool calls = %d, %d failed; want %d, %d failed", calls, failed, want.RealCalls, want.FailedCalls)
	}
}

func checkRate(tb testing.TB, what string, got *float64, num, den int64) {
	tb.Helper()
	want := float64(num) / float64(den)
	if got == nil || math.Abs(*got-want) > 1e-12 {
		tb.Errorf("%s = %v, want %d/%d = %v", what, deref(got), num, den, want)
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// DeadLetter is the ingester's Ingester.DeadLetter, from "otlp": what the
// pipeline gives the OTLP receiver for the events it cannot publish.
func (p *Pipeline) DeadLetter(ctx context.Context, raw []byte, subject, code, reason string) error {
	return p.in.DeadLetter(ctx, raw, "otlp", subject, code, reason)
}
