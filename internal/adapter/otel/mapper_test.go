package otel_test

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/oteltest"
)

var genStart = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

var planTools = []string{"TodoWrite", "update_plan", "write_todos"}

// sink keeps the events it is sent, checked against the contract.
type sink struct {
	tb  testing.TB
	evs []*events.Event
}

func (s *sink) Send(_ context.Context, e *events.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		s.tb.Fatal(err)
	}
	d, err := events.Decode(b)
	if err != nil {
		s.tb.Fatalf("event does not pass the contract: %v\n%s", err, b)
	}
	s.evs = append(s.evs, d)
	return nil
}

// mapReader maps an OTLP JSON file as the bridge does (otelad.ReadJSON);
// a record it skips fails the test.
func mapReader(tb testing.TB, r io.Reader) (*sink, *otelad.Mapper) {
	tb.Helper()
	s := &sink{tb: tb}
	m, err := otelad.New(otelad.DefaultConfig(), s)
	if err != nil {
		tb.Fatal(err)
	}
	if err := otelad.ReadJSON(context.Background(), r, 0, m, func(e *otelad.LineError) { tb.Errorf("record skipped: %v", e) }); err != nil {
		tb.Fatal(err)
	}
	return s, m
}

func mapAll(tb testing.TB, exports []ptrace.Traces) (*sink, otelad.Stats) {
	tb.Helper()
	return mapAllWith(tb, otelad.DefaultConfig(), exports)
}

func mapAllWith(tb testing.TB, cfg otelad.Config, exports []ptrace.Traces) (*sink, otelad.Stats) {
	tb.Helper()
	s := &sink{tb: tb}
	m, err := otelad.New(cfg, s)
	if err != nil {
		tb.Fatal(err)
	}
	for _, td := range exports {
		if _, err := m.Consume(context.Background(), td, genStart); err != nil {
			tb.Fatal(err)
		}
	}
	if err := m.Flush(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s, m.Stats()
}

// TestMapGenerated maps generated sessions exported out of order over many
// requests and checks each session against the generator's truth.
func TestMapGenerated(t *testing.T) {
	ss := adaptertest.Generate(11, 60, planTools, genStart, true)
	s, st := mapAll(t, oteltest.Exports(5, ss))
	truth := adaptertest.TruthOf(ss)
	if st.Sessions != truth.Sessions || st.Quality.PlanCallsWithoutArguments != truth.MissingArgs || truth.MissingArgs == 0 {
		t.Errorf("stats: %d sessions, %d plan calls without arguments; want %d, %d (> 0)", st.Sessions, st.Quality.PlanCallsWithoutArguments, truth.Sessions, truth.MissingArgs)
	}
	bySession := map[string][]*events.Event{}
	var order []string
	for _, e := range s.evs {
		if _, ok := bySession[e.Subject]; !ok {
			order = append(order, e.Subject)
		}
		bySession[e.Subject] = append(bySession[e.Subject], e)
	}
	if len(order) != len(ss) {
		t.Fatalf("%d sessions emitted, want %d", len(order), len(ss))
	}
	ids := map[string]bool{}
	for _, g := range ss {
		sid := g.ID
		if !g.Conversation {
			sid = oteltest.TraceID(g).String()
		}
		evs := bySession[sid]
		if len(evs) == 0 {
			t.Fatalf("session %s (conversation %v) not emitted", sid, g.Conversation)
		}
		var replans, calls, failed int64
		for i, e := range evs {
			if ids[e.ID] {
				t.Errorf("event id %s twice", e.ID)
			}
			ids[e.ID] = true
			if e.Source != "gen-agent/otel" {
				t.Errorf("source %q", e.Source)
			}
			if i > 0 && e.Seq <= evs[i-1].Seq {
				t.Errorf("session %s: seq %d after %d", sid, e.Seq, evs[i-1].Seq)
			}
			p, _ := e.Payload()
			switch d := p.(type) {
			case *events.PlanUpdatedData:
				replans++
			case *events.ToolCalledData:
				if !d.Control {
					calls++
					if !d.OK {
						failed++
					}
					if d.TaskID == nil {
						t.Errorf("session %s: work call %s without task", sid, d.Tool)
					}
				}
			case *events.SessionStartedData:
				if i != 0 || d.Goal != g.Goal || d.Model != g.Model || d.Agent != "gen-agent" || d.AgentVersion != "1.2.3" {
					t.Errorf("session %s starts with %+v at %d", sid, d, i)
				}
			case *events.SessionEndedData:
				if i != len(evs)-1 {
					t.Errorf("session %s ends at event %d of %d", sid, i+1, len(evs))
				}
				if g.Failed && d.Outcome != events.OutcomeFailure {
					t.Errorf("failed run ends %s", d.Outcome)
				}
			}
		}
		if replans != g.Replans || calls != g.RealCalls || failed != g.FailedCalls {
			t.Errorf("session %s: %d replans, %d calls, %d failed; want %d, %d, %d", sid, replans, calls, failed, g.Replans, g.RealCalls, g.FailedCalls)
		}
	}
}

// TestMapDeterministic: the same spans, exported in another order and
// split, give the same events.
func TestMapDeterministic(t *testing.T) {
	ss := adaptertest.Generate(3, 20, planTools, genStart, true)
	a, _ := mapAll(t, oteltest.Exports(1, ss))
	b, _ := mapAll(t, oteltest.Exports(2, ss))
	render := func(s *sink) []string {
		var out []string
		for _, e := range s.evs {
			raw, _ := json.Marshal(e)
			out = append(out, string(raw))
		}
		slices.Sort(out)
		return out
	}
	if ra, rb := render(a), render(b); !slices.Equal(ra, rb) {
		t.Fatalf("mapping differs with the export order:\n%s\n---\n%s", strings.Join(ra[:3], "\n"), strings.Join(rb[:3], "\n"))
	}
}

// TestMapLateAndUnmapped: spans after their trace was mapped are counted
// and dropped; a trace without any GenAI span (an HTTP request's) is
// dropped and counted when its root span arrives; a trace whose agent span
// is missing is still a session, bounded by what it has.
func TestMapLateAndUnmapped(t *testing.T) {
	ss := adaptertest.Generate(4, 2, planTools, genStart, false)
	exports := oteltest.Exports(1, ss[:1])
	headless := oteltest.Exports(1, ss[1:])
	// The second session without its invoke_agent span: drop the last span of
	// the last export (the root comes last).
	last := headless[len(headless)-1].ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	last.RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
	plain := ptrace.NewTraces()
	sp := plain.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{9, 9, 9})
	sp.SetSpanID([8]byte{9})
	sp.SetName("GET /health")
	sp.Attributes().PutStr("http.request.method", "GET")
	all := append(append(append(exports, exports...), headless...), plain)
	cfg := otelad.DefaultConfig()
	cfg.Settle = 0 // mapped as soon as complete: the re-sent spans come after
	s, st := mapAllWith(t, cfg, all)
	if st.Sessions != 2 || st.Unmapped != 1 || st.AfterMapped == 0 {
		t.Errorf("stats %+v: want 2 sessions, 1 unmapped trace, re-sent spans dropped", st)
	}
	var headlessCalls int64
	for _, e := range s.evs {
		if d, ok := mustPayload(t, e).(*events.ToolCalledData); ok && !d.Control && e.Subject == oteltest.TraceID(ss[1]).String() {
			headlessCalls++
		}
	}
	if headlessCalls != ss[1].RealCalls {
		t.Errorf("the trace without its agent span: %d real calls mapped, want %d", headlessCalls, ss[1].RealCalls)
	}
	notes := strings.Join(st.Notes(), "\n")
	for _, want := range []string{"spans arrived after their trace was mapped"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", st.Notes(), want)
		}
	}
	// The generated Edit calls carry no file path ({"x":1}), but come after
	// the session's plan-tool call listed its tasks: the plan tool is the
	// session's plan, plan files are not read, and whether an Edit touched
	// one does not matter (docs/plan-dialects.md, "Two plan sources").
	if strings.Contains(notes, "file tool calls carried no arguments") {
		t.Errorf("notes %q: file tool calls of a session planned with its plan tool were taken as possible plan-file edits", st.Notes())
	}
}

// allSpans returns the spans of exports in one export.
func allSpans(exports []ptrace.Traces) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, x := range exports {
		x.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	return td
}

func eachSpan(td ptrace.Traces, f func(ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				f(sp)
			}
		}
	}
}

// TestMapLinger: an agent run under another span (its invoke_agent span has
// a parent) is mapped once no span came for Linger.
func TestMapLinger(t *testing.T) {
	ss := adaptertest.Generate(5, 1, planTools, genStart, false)
	td := allSpans(oteltest.Exports(1, ss))
	eachSpan(td, func(sp ptrace.Span) {
		if sp.ParentSpanID().IsEmpty() {
			sp.SetParentSpanID([8]byte{1, 2, 3, 4, 5, 6, 7, 8}) // an HTTP handler's span, not exported here
		}
	})
	s := &sink{tb: t}
	cfg := otelad.DefaultConfig()
	m, err := otelad.New(cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Consume(ctx, td, genStart); err != nil {
		t.Fatal(err)
	}
	if err := m.Sweep(ctx, genStart.Add(cfg.Linger-time.Millisecond)); err != nil || len(s.evs) != 0 {
		t.Fatalf("before the linger: %d events (%v), want none", len(s.evs), err)
	}
	if err := m.Sweep(ctx, genStart.Add(cfg.Linger)); err != nil || len(s.evs) == 0 || m.Stats().Sessions != 1 {
		t.Fatalf("after the linger: %d events, %d sessions (%v), want the session", len(s.evs), m.Stats().Sessions, err)
	}
}

// TestMapEvicts: beyond MaxSpans the oldest trace is dropped, counted.
func TestMapEvicts(t *testing.T) {
	ss := adaptertest.Generate(6, 3, planTools, genStart, false)
	cfg := otelad.DefaultConfig()
	cfg.MaxSpans = 10
	s := &sink{tb: t}
	m, err := otelad.New(cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, g := range ss {
		td := allSpans(oteltest.Exports(1, []adaptertest.GenSession{g}))
		// Everything but the root: the run is not over.
		for _, rs := range td.ResourceSpans().All() {
			for _, sc := range rs.ScopeSpans().All() {
				sc.Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
			}
		}
		if _, err := m.Consume(ctx, td, genStart); err != nil {
			t.Fatal(err)
		}
	}
	if st := m.Stats(); st.Evicted < 2 || st.Sessions != 0 {
		t.Errorf("stats %+v: want at least 2 traces evicted, no session", st)
	}
}

// TestMapConversationRuns: two runs (traces) of one conversation are one
// session whose seqs increase across the runs, each run started and ended.
func TestMapConversationRuns(t *testing.T) {
	// Two generated sessions, ten minutes apart, rendered as two traces; the
	// second's spans then get the first's conversation id.
	ss := adaptertest.Generate(7, 2, planTools, genStart, false)
	ss[0].Conversation, ss[1].Conversation = true, true
	td0 := allSpans(oteltest.Exports(1, ss[:1]))
	td1 := allSpans(oteltest.Exports(1, ss[1:]))
	eachSpan(td1, func(sp ptrace.Span) {
		if _, ok := sp.Attributes().Get("gen_ai.conversation.id"); ok {
			sp.Attributes().PutStr("gen_ai.conversation.id", ss[0].ID)
		}
	})
	// Map the later run first, in another mapper: the seqs still interleave
	// in time order.
	late, _ := mapAll(t, []ptrace.Traces{td1})
	early, _ := mapAll(t, []ptrace.Traces{td0})
	if late.evs[0].Subject != ss[0].ID || early.evs[0].Subject != ss[0].ID {
		t.Fatalf("sessions %s and %s, want both %s", early.evs[0].Subject, late.evs[0].Subject, ss[0].ID)
	}
	if last, first := early.evs[len(early.evs)-1].Seq, late.evs[0].Seq; last >= first {
		t.Errorf("the first run ends at seq %d, the second starts at %d", last, first)
	}
}

// TestMapExpiresAndNotesCut: a trace without a GenAI span idle for MaxIdle
// is dropped by Sweep; when its run's spans then arrive, the session is
// mapped and counted as cut.
func TestMapExpiresAndNotesCut(t *testing.T) {
	ss := adaptertest.Generate(7, 1, planTools, genStart, false)
	td := allSpans(oteltest.Exports(1, ss))
	children, root := ptrace.NewTraces(), ptrace.NewTraces()
	td.CopyTo(children)
	td.CopyTo(root)
	// The children as spans of no convention (an HTTP client's under the
	// agent's): they alone make no session, and expire.
	for _, rs := range children.ResourceSpans().All() {
		for _, sc := range rs.ScopeSpans().All() {
			sc.Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
			for _, sp := range sc.Spans().All() {
				sp.Attributes().Clear()
				sp.SetName("POST /v1/things")
			}
		}
	}
	for _, rs := range root.ResourceSpans().All() {
		for _, sc := range rs.ScopeSpans().All() {
			sc.Spans().RemoveIf(func(sp ptrace.Span) bool { return !sp.ParentSpanID().IsEmpty() })
		}
	}
	cfg := otelad.DefaultConfig()
	s := &sink{tb: t}
	m, err := otelad.New(cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Consume(ctx, children, genStart); err != nil {
		t.Fatal(err)
	}
	if err := m.Sweep(ctx, genStart.Add(cfg.MaxIdle-time.Second)); err != nil || m.Stats().Expired != 0 {
		t.Fatalf("before MaxIdle: %+v (%v), want nothing expired", m.Stats(), err)
	}
	if err := m.Sweep(ctx, genStart.Add(cfg.MaxIdle)); err != nil || m.Stats().Expired != 1 || m.Stats().Waiting != 0 {
		t.Fatalf("after MaxIdle: %+v (%v), want the trace expired", m.Stats(), err)
	}
	if _, err := m.Consume(ctx, root, genStart.Add(cfg.MaxIdle)); err != nil {
		t.Fatal(err)
	}

	if st := m.Stats(); st.Sessions != 1 || st.Cut != 1 || len(st.Notes()) == 0 {
		t.Errorf("stats %+v: want one session, counted as cut, and a note", st)
	}
}

// TestMapEvictsBytes: beyond MaxBytes the least recently active trace is
// dropped, its spans and bytes counted, and what waits stays under it.
func TestMapEvictsBytes(t *testing.T) {
	ss := adaptertest.Generate(8, 12, planTools, genStart, false)
	cfg := otelad.DefaultConfig()
	cfg.MaxBytes = 8 << 10
	m, err := otelad.New(cfg, &sink{tb: t})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range ss {
		td := allSpans(oteltest.Exports(1, []adaptertest.GenSession{g}))
		for _, rs := range td.ResourceSpans().All() {
			for _, sc := range rs.ScopeSpans().All() {
				sc.Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
			}
		}
		if _, err := m.Consume(context.Background(), td, genStart); err != nil {
			t.Fatal(err)
		}
		if st := m.Stats(); st.WaitingBytes > cfg.MaxBytes {
			t.Fatalf("%d bytes waiting, over the limit of %d", st.WaitingBytes, cfg.MaxBytes)
		}
	}
	if st := m.Stats(); st.Evicted == 0 || st.EvictedBytes == 0 || st.EvictedSpans+st.WaitingSpans != st.Spans {
		t.Errorf("stats %+v: want evictions, with every span accounted", st)
	}
}

func mustPayload(tb testing.TB, e *events.Event) any {
	tb.Helper()
	p, err := e.Payload()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestMapSettles: a complete trace waits Settle for a span still on its
// way (an exporter that sends spans concurrently, one a request, delivers a
// model call after the run's root); one that came meanwhile is in the
// session, and the wait starts again from it.
func TestMapSettles(t *testing.T) {
	ss := adaptertest.Generate(9, 1, planTools, genStart, false)
	td := allSpans(oteltest.Exports(1, ss))
	// The last model call to start is held back, as if on its way.
	var late ptrace.Traces
	var lastChat time.Time
	var chats int64
	eachSpan(td, func(sp ptrace.Span) {
		if v, _ := sp.Attributes().Get("gen_ai.operation.name"); v.Str() == "chat" {
			chats++
			if sp.StartTimestamp().AsTime().After(lastChat) {
				lastChat = sp.StartTimestamp().AsTime()
			}
		}
	})
	late = ptrace.NewTraces()
	td.CopyTo(late)
	for _, rs := range late.ResourceSpans().All() {
		for _, sc := range rs.ScopeSpans().All() {
			sc.Spans().RemoveIf(func(sp ptrace.Span) bool { return !sp.StartTimestamp().AsTime().Equal(lastChat) })
		}
	}
	for _, rs := range td.ResourceSpans().All() {
		for _, sc := range rs.ScopeSpans().All() {
			sc.Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.StartTimestamp().AsTime().Equal(lastChat) })
		}
	}
	cfg := otelad.DefaultConfig()
	s := &sink{tb: t}
	m, err := otelad.New(cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The spans come one request each, as such an exporter sends them.
	var c otelad.Consumed
	eachSpan(td, func(sp ptrace.Span) {
		one := ptrace.NewTraces()
		sp.CopyTo(one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
		if c, err = m.Consume(ctx, one, genStart); err != nil {
			t.Fatal(err)
		}
	})
	if c.Settling != 1 || len(s.evs) != 0 {
		t.Fatalf("the trace with its root: %+v, %d events, want it settling", c, len(s.evs))
	}
	half := genStart.Add(cfg.Settle / 2)
	if err := m.MapSettled(ctx, half); err != nil || len(s.evs) != 0 {
		t.Fatalf("before Settle: %d events (%v), want none", len(s.evs), err)
	}
	if _, err := m.Consume(ctx, late, half); err != nil {
		t.Fatal(err)
	}
	if err := m.MapSettled(ctx, genStart.Add(cfg.Settle)); err != nil || len(s.evs) != 0 {
		t.Fatalf("Settle after the root but not after the late span: %d events (%v), want none", len(s.evs), err)
	}
	if err := m.MapSettled(ctx, half.Add(cfg.Settle)); err != nil || len(s.evs) == 0 {
		t.Fatalf("Settle after the late span: %d events (%v), want the session", len(s.evs), err)
	}
	for _, e := range s.evs {
		if d, ok := mustPayload(t, e).(*events.SessionEndedData); ok && d.Iterations != chats {
			t.Errorf("iterations %d, want all %d model calls, the late one included", d.Iterations, chats)
		}
	}
	if st := m.Stats(); st.AfterMapped != 0 {
		t.Errorf("%d spans after the trace was mapped, want none", st.AfterMapped)
	}
}
