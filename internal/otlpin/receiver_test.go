package otlpin_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/otlpin"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/oteltest"
	"github.com/evosignal/evosignal/internal/workshop/plangen"
)

var genStart = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func startReceiver(tb testing.TB, p *adaptertest.Pipeline) *otlpin.Receiver {
	tb.Helper()
	cfg := otlpin.DefaultConfig("127.0.0.1:0", "evo")
	r, err := otlpin.Start(cfg, p.JS, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Close(ctx)
	})
	return r
}

func url(r *otlpin.Receiver) string { return "http://" + r.Addr().String() + otlpin.Path }

// post sends one export as protobuf, gzipped when zip is set, and returns
// the decoded response.
// drain waits until r holds no trace (each complete one mapped once it
// settled: Mapper.Settle after its last span), then until the pipeline
// stored what was published.
func drain(tb testing.TB, r *otlpin.Receiver, p *adaptertest.Pipeline) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for r.Stats().Waiting > 0 {
		if time.Now().After(deadline) {
			tb.Fatalf("the receiver still holds %d traces after 30 s", r.Stats().Waiting)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The sweep that mapped the last of them publishes after: wait for the
	// stream to stop growing (two sweeps), then for the ingester.
	last := streamLast(tb, p)
	for {
		time.Sleep(2 * otlpin.DefaultConfig("", "").Sweep)
		n := streamLast(tb, p)
		if n == last {
			break
		}
		last = n
	}
	p.Settle(tb)
}

func streamLast(tb testing.TB, p *adaptertest.Pipeline) uint64 {
	tb.Helper()
	s, err := p.JS.Stream(context.Background(), bus.DefaultStream().Name)
	if err != nil {
		tb.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return info.State.LastSeq
}

func post(tb testing.TB, to string, td ptrace.Traces, zip bool) ptraceotlp.ExportResponse {
	tb.Helper()
	res, err := send(to, td, zip)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

func send(to string, td ptrace.Traces, zip bool) (ptraceotlp.ExportResponse, error) {
	out := ptraceotlp.NewExportResponse()
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return out, err
	}
	req, _ := http.NewRequest(http.MethodPost, to, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	if zip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		req.Body = io.NopCloser(&b)
		req.ContentLength = int64(b.Len())
		req.Header.Set("Content-Encoding", "gzip")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return out, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/x-protobuf" {
		return out, fmt.Errorf("POST: %s (%s)\n%q", res.Status, res.Header.Get("Content-Type"), raw)
	}
	if err := out.UnmarshalProto(raw); err != nil {
		return out, fmt.Errorf("response: %w", err)
	}
	return out, nil
}

// TestReceiverGeneratedSessions sends generated sessions as OTLP protobuf
// over HTTP, split over many requests in a shuffled order, through a real
// nats-server into a real DuckDB, and checks the analyzers' figures against
// the generator's truth. Sending every export again — to the same receiver,
// and to a new one that remembers nothing — stores nothing more.
func TestReceiverGeneratedSessions(t *testing.T) {
	p := adaptertest.StartPipeline(t)
	r := startReceiver(t, p)
	ss := adaptertest.Generate(21, 80, []string{"TodoWrite", "update_plan", "write_todos"}, genStart, true)
	exports := oteltest.Exports(9, ss)
	for i, td := range exports {
		if res := post(t, url(r), td, i%2 == 0); res.PartialSuccess().RejectedSpans() != 0 {
			t.Fatalf("export %d: %d spans rejected", i, res.PartialSuccess().RejectedSpans())
		}
	}
	drain(t, r, p)
	truth := adaptertest.TruthOf(ss)
	p.CheckTruth(t, truth)
	if st := r.Stats(); st.Quality.PlanCallsWithoutArguments != truth.MissingArgs || truth.MissingArgs == 0 {
		t.Errorf("plan calls without arguments = %d, want %d (> 0)", st.Quality.PlanCallsWithoutArguments, truth.MissingArgs)
	}
	stored := p.Count(t, "SELECT count(*) FROM events")

	// Again, from four clients at once.
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(exports); i += 4 {
				if _, err := send(url(r), exports[i], i%2 == 1); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if st := r.Stats(); st.AfterMapped != st.Spans/2 {
		t.Errorf("%d of %d spans dropped as re-sent, want half", st.AfterMapped, st.Spans)
	}
	fresh := startReceiver(t, p)
	for _, td := range exports {
		post(t, url(fresh), td, false)
	}
	drain(t, fresh, p)
	if st := fresh.Stats(); st.Sessions != truth.Sessions {
		t.Errorf("the new receiver mapped %d sessions, want %d", st.Sessions, truth.Sessions)
	}
	if n := p.Count(t, "SELECT count(*) FROM events"); n != stored {
		t.Errorf("after re-sending every export: %d events stored, want %d", n, stored)
	}
	p.CheckTruth(t, truth)
}

// TestReceiverPlanFileSessions sends generated sessions that keep their plan
// in a Markdown file (plangen: the file tools of Claude Code, SkillLite and
// Codex as execute_tool spans with their arguments) as OTLP over HTTP,
// through a real nats-server into a real DuckDB: the analyzers find exactly
// the generator's replans and completions, the plan-file calls are not real
// tool calls, and the edits of unknown prior content are counted.
func TestReceiverPlanFileSessions(t *testing.T) {
	p := adaptertest.StartPipeline(t)
	r := startReceiver(t, p)
	var ss []adaptertest.GenSession
	for i, style := range []plangen.Style{plangen.ClaudeCode, plangen.SkillLite, plangen.Codex} {
		ss = append(ss, adaptertest.PlanFileSessions(uint64(61+i), 30, style, genStart.Add(time.Duration(i)*24*time.Hour))...)
	}
	truth := adaptertest.TruthOf(ss)
	if truth.Replanned == 0 || truth.Replanned == truth.Sessions || truth.Completions == 0 || truth.UnknownPrior == 0 {
		t.Fatalf("generated sessions exercise too little: %+v", truth)
	}
	for i, td := range oteltest.Exports(11, ss) {
		if res := post(t, url(r), td, i%2 == 0); res.PartialSuccess().RejectedSpans() != 0 {
			t.Fatalf("export %d: %d spans rejected", i, res.PartialSuccess().RejectedSpans())
		}
	}
	drain(t, r, p)
	p.CheckTruth(t, truth)
	if q := r.Stats().Quality; q.PlanFileUnknownPrior != truth.UnknownPrior {
		t.Errorf("plan-file edits of unknown prior content = %d, want %d", q.PlanFileUnknownPrior, truth.UnknownPrior)
	}
}
