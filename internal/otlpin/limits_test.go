package otlpin_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/otlpin"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
)

// The tests of this file are the rows of issue 28's OTLP table: each drives
// the real receiver over HTTP into a real nats-server (and, where it says
// so, a real DuckDB), and each failed on the receiver before it was bounded.

func startReceiverWith(tb testing.TB, p *adaptertest.Pipeline, tune func(*otlpin.Config)) *otlpin.Receiver {
	tb.Helper()
	cfg := otlpin.DefaultConfig("127.0.0.1:0", "evo")
	tune(&cfg)
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

// spanSpec is one span of a generated export.
type spanSpec struct {
	trace, id, parent uint64 // parent 0: none
	op, agent, tool   string
	args              string
}

// build returns the spans as one export.
func build(specs []spanSpec) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "limits-test")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	t0 := pcommon.NewTimestampFromTime(genStart)
	for _, s := range specs {
		sp := ss.AppendEmpty()
		var tid pcommon.TraceID
		binary.BigEndian.PutUint64(tid[8:], s.trace)
		tid[0] = 1
		sp.SetTraceID(tid)
		var sid pcommon.SpanID
		binary.BigEndian.PutUint64(sid[:], s.id)
		sp.SetSpanID(sid)
		if s.parent != 0 {
			var pid pcommon.SpanID
			binary.BigEndian.PutUint64(pid[:], s.parent)
			sp.SetParentSpanID(pid)
		}
		sp.SetName(s.op)
		sp.SetStartTimestamp(t0 + pcommon.Timestamp(s.id))
		sp.SetEndTimestamp(t0 + pcommon.Timestamp(s.id) + 1000)
		a := sp.Attributes()
		a.PutStr("gen_ai.operation.name", s.op)
		if s.agent != "" {
			a.PutStr("gen_ai.agent.name", s.agent)
		}
		if s.tool != "" {
			a.PutStr("gen_ai.tool.name", s.tool)
			a.PutStr("gen_ai.tool.call.arguments", s.args)
		}
	}
	return td
}

// orphans are n traces of one tool span each, from trace first on, whose
// root never arrives: they wait (for Linger) for a run that never ends.
func orphans(first uint64, n int, args string) []spanSpec {
	out := make([]spanSpec, n)
	for i := range out {
		out[i] = spanSpec{trace: first + uint64(i), id: 1, parent: 9, op: "execute_tool", tool: "Read", args: args}
	}
	return out
}

// run is one whole agent run: a root invoke_agent span and a tool call.
func run(trace uint64, agent string, args string) []spanSpec {
	return []spanSpec{
		{trace: trace, id: 2, parent: 1, op: "execute_tool", tool: "TodoWrite", args: args},
		{trace: trace, id: 1, op: "invoke_agent", agent: agent},
	}
}

// postRaw sends td and returns the status, the Retry-After header and the
// body.
func postRaw(tb testing.TB, to string, td ptrace.Traces) (int, string, []byte) {
	tb.Helper()
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		tb.Fatal(err)
	}
	res, err := http.Post(to, "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Retry-After"), raw
}

// heap is the live Go heap after a collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestDefaultMemoryBound: what the defaults let the receiver hold, derived
// from its limits as the tests below measure them with small ones, stays
// within 1.5 GiB.
func TestDefaultMemoryBound(t *testing.T) {
	cfg := otlpin.DefaultConfig(":4318", "evo")
	if got, most := cfg.MemoryBound(), int64(3<<29); got > most {
		t.Errorf("DefaultConfig().MemoryBound() = %d, want at most %d", got, most)
	}
}

// TestBufferBoundedInBytes (row 1): traces that never end, each span
// carrying 1 MB of arguments, are held up to the buffer's byte limit and
// no further, and the evictions are counted.
func TestBufferBoundedInBytes(t *testing.T) {
	p := adaptertest.StartPipeline(t)
	const limit = 24 << 20
	r := startReceiverWith(t, p, func(c *otlpin.Config) { c.Mapper.MaxBytes = limit })
	before := heap()
	args := `{"blob":"` + strings.Repeat("x", 1<<20) + `"}`
	const spans, per = 96, 6
	for i := 0; i < spans; i += per {
		if st, _, raw := postRaw(t, url(r), build(orphans(uint64(i+1), per, args))); st != 200 {
			t.Fatalf("POST %d: %d %q", i, st, raw)
		}
	}
	st := r.Stats()
	if st.WaitingBytes > limit || st.Evicted == 0 || st.EvictedSpans+st.WaitingSpans != spans {
		t.Errorf("waiting %d bytes (limit %d), %d traces evicted (%d spans), %d spans waiting: want at most the limit, evictions, all %d spans accounted",
			st.WaitingBytes, limit, st.Evicted, st.EvictedSpans, st.WaitingSpans, spans)
	}
	// 96 MB were sent; the heap grows by the buffer, not by the input.
	if grew := int64(heap()) - int64(before); grew > limit+16<<20 {
		t.Errorf("heap grew by %d MiB holding traces, want at most %d MiB", grew>>20, (limit+16<<20)>>20)
	}
	runtime.KeepAlive(r)
}

// TestRequestsInFlightBounded (row 4): past MaxRequests in flight, a
// request is refused at once with 503 and Retry-After, before its body is
// read; the ones taken succeed.
func TestRequestsInFlightBounded(t *testing.T) {
	p := adaptertest.StartPipeline(t)
	const most, clients = 2, 16
	r := startReceiverWith(t, p, func(c *otlpin.Config) { c.MaxRequests = most })
	body, _ := ptraceotlp.NewExportRequestFromTraces(build(orphans(1, 4, `{"a":"`+strings.Repeat("y", 256<<10)+`"}`))).MarshalProto()
	type answer struct {
		i      int
		status int
		retry  string
	}
	answers := make(chan answer, clients)
	pipes := make([]*io.PipeWriter, clients)
	for i := range clients {
		pr, pw := io.Pipe()
		pipes[i] = pw
		req, _ := http.NewRequest(http.MethodPost, url(r), pr)
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.ContentLength = int64(len(body))
		go func() {
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- answer{i: i, status: -1, retry: err.Error()}
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			answers <- answer{i: i, status: res.StatusCode, retry: res.Header.Get("Retry-After")}
		}()
	}
	// The receiver holds `most` requests waiting for their bodies; the
	// others are answered without one.
	answered := map[int]bool{}
	for range clients - most {
		a := <-answers
		answered[a.i] = true
		if a.status != http.StatusServiceUnavailable || a.retry == "" {
			t.Errorf("request %d past the limit: %d, Retry-After %q; want 503 with Retry-After", a.i, a.status, a.retry)
		}
		pipes[a.i].CloseWithError(io.ErrClosedPipe)
	}
	var wg sync.WaitGroup
	for i, pw := range pipes {
		if !answered[i] {
			wg.Go(func() { pw.Write(body); pw.Close() })
		}
	}
	for range most {
		if a := <-answers; a.status != 200 {
			t.Errorf("request %d within the limit: %d (%s), want 200", a.i, a.status, a.retry)
		}
	}
	wg.Wait()
	if q := r.Requests(); q.Busy != clients-most || q.Peak != most {
		t.Errorf("requests: %+v; want %d busy, a peak of %d", q, clients-most, most)
	}
}

// TestEvictionDoesNotStall (row 2): with the buffer full, a request that
// evicts a whole buffer's worth of traces does not hold the receiver: a
// normal run sent meanwhile is in the database within a second.
func TestEvictionDoesNotStall(t *testing.T) {
	p := adaptertest.StartPipeline(t)
	const full = 20_000
	r := startReceiverWith(t, p, func(c *otlpin.Config) { c.Mapper.MaxSpans = full })
	for i := 0; i < full; i += 5000 {
		if st, _, raw := postRaw(t, url(r), build(orphans(uint64(i+1), 5000, `{}`))); st != 200 {
			t.Fatalf("filling: %d %q", st, raw)
		}
	}
	big := build(orphans(full+1, full, `{}`))
	done := make(chan int)
	go func() { st, _, _ := postRaw(t, url(r), big); done <- st }()
	time.Sleep(100 * time.Millisecond) // the big request is being read or mapped
	t0 := time.Now()
	if st, _, raw := postRaw(t, url(r), build(run(1<<40, "normal", `{"path":"a"}`))); st != 200 {
		t.Fatalf("normal run: %d %q", st, raw)
	}
	for p.Count(t, `SELECT count(*) FROM events WHERE source = 'normal/otel'`) < 2 {
		if time.Since(t0) > time.Second {
			t.Fatalf("the normal run was not stored within 1s of its POST (big request still running: %v)", len(done) == 0)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := <-done; st != 200 {
		t.Errorf("big request: %d", st)
	}
	if st := r.Stats(); st.Evicted < full {
		t.Errorf("%d traces evicted, want at least %d", st.Evicted, full)
	}
}

// TestStopWithinGrace (row 3): with many traces waiting, Close returns
// within its context's time, having mapped the runs it could and counted
// the rest.
func TestStopWithinGrace(t *testing.T) {
	p := adaptertest.StartPipeline(t)
	r := startReceiverWith(t, p, func(c *otlpin.Config) {})
	const waiting = 60_000
	for i := 0; i < waiting; i += 10_000 {
		if st, _, raw := postRaw(t, url(r), build(orphans(uint64(i+1), 10_000, `{}`))); st != 200 {
			t.Fatalf("filling: %d %q", st, raw)
		}
	}
	// Runs under another span: mapped only on stop (or after Linger).
	var nested []spanSpec
	for i := range 50 {
		nested = append(nested, spanSpec{trace: 1<<41 + uint64(i), id: 1, parent: 7, op: "invoke_agent", agent: "nested"})
	}
	if st, _, raw := postRaw(t, url(r), build(nested)); st != 200 {
		t.Fatalf("nested runs: %d %q", st, raw)
	}
	const grace = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	t0 := time.Now()
	err := r.Close(ctx)
	if took := time.Since(t0); took > grace+200*time.Millisecond {
		t.Errorf("Close took %v, want within its %v", took, grace)
	}
	if err != nil {
		t.Errorf("Close: %v", err)
	}
	// The tool spans without a root are sessions too (a trace is a session
	// without an agent span): every trace is mapped or counted.
	if st := r.Stats(); st.Unmapped != 0 || st.Sessions+st.Abandoned != waiting+50 || st.Abandoned == 0 {
		t.Errorf("after Close: %d unmapped, %d sessions, %d abandoned; want none unmapped, all %d traces mapped or counted, some abandoned", st.Unmapped, st.Sessions, st.Abandoned, waiting+50)
	}
}

// todoWrite is TodoWrite's arguments listing n todos.
func todoWrite(n int) string {
	type todo struct {
		Content    string `json:"content"`
		Status     string `json:"status"`
		ActiveForm string `json:"activeForm"`
	}
	ts := make([]todo, n)
	for i := range ts {
		ts[i] = todo{Content: fmt.Sprintf("Step %d of the plan", i), Status: "pending", ActiveForm: fmt.Sprintf("Doing step %d", i)}
	}
	b, _ := json.Marshal(map[string]any{"todos": ts})
	return string(b)
}

// TestOversizeEventDeadLettered (row 5): a plan of 30,000 todos maps to an
// event over the NATS max payload. With the ingester's dead-letter hook it
// is in dead_letters with its reason, the rest of the run stored, and the
// sender told 200 (a retry stores nothing twice); without one, the sender
// is told 400, a permanent error, never 503.
func TestOversizeEventDeadLettered(t *testing.T) {
	p := adaptertest.StartPipeline(t)
	td := build(run(1<<42, "planner", todoWrite(30_000)))
	r := startReceiverWith(t, p, func(c *otlpin.Config) { c.DeadLetter = p.DeadLetter })
	for try := range 2 {
		if st, retry, raw := postRaw(t, url(r), td); st != 200 {
			t.Fatalf("try %d: %d (Retry-After %q) %q, want 200", try, st, retry, raw)
		}
	}
	p.Settle(t)
	if n := p.Count(t, `SELECT count(*) FROM dead_letters WHERE reason_code = 'oversize' AND type = 'agent.plan.created' AND reason LIKE '%NATS max payload%' AND source = 'planner/otel'`); n != 1 {
		t.Errorf("%d oversize plan dead letters, want 1", n)
	}
	if n := p.Count(t, `SELECT count(*) FROM events WHERE source = 'planner/otel' AND type IN ('agent.session.started', 'agent.session.ended')`); n != 2 {
		t.Errorf("%d session start and end events stored, want 2", n)
	}
	if n := r.DeadLettered(); n != 1 {
		t.Errorf("receiver dead-lettered %d events, want 1", n)
	}

	bare := startReceiverWith(t, p, func(c *otlpin.Config) {})
	st, retry, _ := postRaw(t, url(bare), build(run(1<<43, "planner", todoWrite(15_000))))
	if st != http.StatusBadRequest || retry != "" {
		t.Errorf("without a dead-letter hook: %d, Retry-After %q; want 400 without", st, retry)
	}
}
