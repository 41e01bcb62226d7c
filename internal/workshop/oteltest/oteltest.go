// Package oteltest renders generated sessions (session.Session, as
// adaptertest.Generate makes them) as OTLP traces of the GenAI semantic
// conventions, split over several exports in a shuffled order, as tests of
// the OpenTelemetry adapter need them. It is the session model's OTLP
// renderer, in a package of its own so that the collector's pdata stays out
// of the model's other users.
package oteltest

import (
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/evosignal/evosignal/internal/workshop/session"
)

// ServiceName is the resource service.name of the rendered spans.
const ServiceName = "gen-service"

// TraceID is the trace id of generated session s.
func TraceID[S session.Source](s S) pcommon.TraceID { return traceID(s.Script()) }

func traceID(s session.Session) pcommon.TraceID {
	h := sha256.Sum256([]byte("trace/" + s.ID))
	return pcommon.TraceID(h[:16])
}

func spanID(s session.Session, what string) pcommon.SpanID {
	h := sha256.Sum256([]byte("span/" + s.ID + "/" + what))
	return pcommon.SpanID(h[:8])
}

// spanData is one span before it is put in an export.
type spanData func(ptrace.Span)

// Exports renders ss as OTLP exports: each session is one trace (an
// invoke_agent span, a chat span before every tool call, an execute_tool
// span per call), and the spans of all sessions are interleaved in a
// shuffled order and cut into exports of 1 to 7 spans. Within a trace the
// invoke_agent span comes last, as an SDK exports it (it ends last).
func Exports[S session.Source](seed uint64, ss []S) []ptrace.Traces {
	rng := rand.New(rand.NewPCG(seed, 1))
	queues := make([][]spanData, len(ss))
	for i, src := range ss {
		s := src.Script()
		children := sessionSpans(s)
		rng.Shuffle(len(children), func(a, b int) { children[a], children[b] = children[b], children[a] })
		queues[i] = append(children, rootSpan(s))
	}
	var out []ptrace.Traces
	var cur ptrace.SpanSlice
	left := 0
	for {
		var open []int
		for i, q := range queues {
			if len(q) > 0 {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			return out
		}
		if left == 0 {
			td := ptrace.NewTraces()
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", ServiceName)
			rs.Resource().Attributes().PutStr("service.version", "1.2.3")
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("oteltest")
			cur = ss.Spans()
			out = append(out, td)
			left = 1 + rng.IntN(7)
		}
		i := open[rng.IntN(len(open))]
		queues[i][0](cur.AppendEmpty())
		queues[i] = queues[i][1:]
		left--
	}
}

func ts(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

func rootSpan(s session.Session) spanData {
	return func(sp ptrace.Span) {
		sp.SetTraceID(traceID(s))
		sp.SetSpanID(spanID(s, "root"))
		sp.SetName("invoke_agent " + s.Agent)
		sp.SetKind(ptrace.SpanKindInternal)
		sp.SetStartTimestamp(ts(s.Start))
		sp.SetEndTimestamp(ts(s.End))
		a := sp.Attributes()
		a.PutStr("gen_ai.operation.name", "invoke_agent")
		a.PutStr("gen_ai.agent.name", s.Agent)
		a.PutStr("gen_ai.request.model", s.Model)
		a.PutStr("gen_ai.provider.name", "openai")
		if s.Conversation {
			a.PutStr("gen_ai.conversation.id", s.ID)
		}
		msgs, _ := json.Marshal([]any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": s.Goal}}}})
		a.PutStr("gen_ai.input.messages", string(msgs))
		if s.Failed {
			a.PutStr("error.type", "AgentError")
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("the agent gave up")
		}
	}
}

func sessionSpans(s session.Session) []spanData {
	var out []spanData
	parent := spanID(s, "root")
	for _, st := range s.Steps {
		out = append(out, func(sp ptrace.Span) {
			sp.SetTraceID(traceID(s))
			sp.SetSpanID(spanID(s, "chat/"+st.ID))
			sp.SetParentSpanID(parent)
			sp.SetName("chat " + s.Model)
			sp.SetKind(ptrace.SpanKindClient)
			sp.SetStartTimestamp(ts(st.At.Add(-400 * time.Millisecond)))
			sp.SetEndTimestamp(ts(st.At.Add(-10 * time.Millisecond)))
			sp.Attributes().PutStr("gen_ai.operation.name", "chat")
			sp.Attributes().PutStr("gen_ai.request.model", s.Model)
		}, func(sp ptrace.Span) {
			sp.SetTraceID(traceID(s))
			sp.SetSpanID(spanID(s, "tool/"+st.ID))
			sp.SetParentSpanID(parent)
			sp.SetName("execute_tool " + st.Tool)
			sp.SetKind(ptrace.SpanKindInternal)
			sp.SetStartTimestamp(ts(st.At))
			sp.SetEndTimestamp(ts(st.At.Add(st.Dur)))
			a := sp.Attributes()
			a.PutStr("gen_ai.operation.name", "execute_tool")
			a.PutStr("gen_ai.tool.name", st.Tool)
			a.PutStr("gen_ai.tool.call.id", st.ID)
			a.PutStr("gen_ai.tool.type", "function")
			if st.Args != nil {
				a.PutStr("gen_ai.tool.call.arguments", string(st.Args))
			}
			if !st.OK {
				a.PutStr("error.type", "ToolError")
				sp.Status().SetCode(ptrace.StatusCodeError)
				sp.Status().SetMessage(st.Err)
			}
		})
	}
	return out
}
