package otel_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/realotel"
)

// sp is one span of a hand-built trace: its id, parent (0 for none),
// start offset in ms, name and attributes; failed sets status ERROR.
type sp struct {
	id, parent uint8
	at         int
	name       string
	attrs      map[string]any
	failed     string
}

// trace builds one trace of spans, each 10 ms long and nested ones inside
// their parent (the parent's end is its last child's end + 1 ms).
func trace(spans ...sp) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	ends := map[uint8]int{}
	for i := len(spans) - 1; i >= 0; i-- {
		s := spans[i]
		end := max(s.at+10, ends[s.id]+1)
		ends[s.id] = end
		if s.parent != 0 {
			ends[s.parent] = max(ends[s.parent], end)
		}
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, s := range spans {
		x := ss.AppendEmpty()
		x.SetTraceID(pcommon.TraceID{0xc0, 0x11, 1})
		x.SetSpanID(pcommon.SpanID{s.id})
		if s.parent != 0 {
			x.SetParentSpanID(pcommon.SpanID{s.parent})
		}
		x.SetName(s.name)
		x.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(s.at) * time.Millisecond)))
		x.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(ends[s.id]) * time.Millisecond)))
		if err := x.Attributes().FromRaw(s.attrs); err != nil {
			panic(err)
		}
		if s.failed != "" {
			x.Status().SetCode(ptrace.StatusCodeError)
			x.Status().SetMessage(s.failed)
		}
	}
	return td
}

// TestConventionsMixed: one trace mixing conventions, as instrumented
// stacks do — a GenAI agent over an OpenInference model span with an
// OpenLLMetry client span inside it (one model call, the inner tokens), a
// framework's tool span over an instrumentation's of the same tool (one
// call, the inner arguments), a plan span whose model call writes a
// checklist (the plan) and a later one with a revised checklist (a replan),
// a plan span with no content (counted, noted, never guessed), and a tool
// call whose failure is on a part of it carrying its call id.
func TestConventionsMixed(t *testing.T) {
	plan1 := "Plan:\n- [ ] Read the config\n- [ ] Run the tests\n"
	plan2 := "- [x] Read the config\n- [ ] Write a note that there are no tests\n"
	td := trace(
		sp{id: 1, at: 0, name: "invoke_agent planner", attrs: map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner", "gen_ai.conversation.id": "conv-7"}},
		sp{id: 2, parent: 1, at: 1, name: "plan planner", attrs: map[string]any{"gen_ai.operation.name": "plan"}},
		sp{id: 3, parent: 2, at: 2, name: "chat m", attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
			"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 20,
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":` + quote(plan1) + `}]}]`}},
		sp{id: 4, parent: 1, at: 20, name: "LLM", attrs: map[string]any{"openinference.span.kind": "LLM", "llm.model_name": "m"}},
		sp{id: 5, parent: 4, at: 21, name: "openai.chat", attrs: map[string]any{"llm.request.type": "chat", "gen_ai.request.model": "m",
			"gen_ai.usage.prompt_tokens": 110, "gen_ai.usage.completion_tokens": 9}},
		sp{id: 6, parent: 1, at: 40, name: "read_file", attrs: map[string]any{"traceloop.span.kind": "tool", "traceloop.entity.name": "read_file"}},
		sp{id: 7, parent: 6, at: 41, name: "execute_tool read_file", attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file", "gen_ai.tool.call.arguments": `{"path":"config.toml"}`}},
		sp{id: 8, parent: 1, at: 60, name: "execute_tool run_command", attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "run_command", "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": `{"command":"ls tests"}`}},
		sp{id: 9, parent: 8, at: 61, name: "run", attrs: map[string]any{"gen_ai.tool.call.id": "c1"}, failed: "exit status 2"},
		sp{id: 10, parent: 1, at: 80, name: "plan planner", attrs: map[string]any{"gen_ai.operation.name": "plan"}},
		sp{id: 11, parent: 10, at: 81, name: "chat m", attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 130, "gen_ai.usage.output_tokens": 15,
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":` + quote(plan2) + `}]}]`}},
		sp{id: 12, parent: 1, at: 100, name: "plan planner", attrs: map[string]any{"gen_ai.operation.name": "plan"}},
		sp{id: 13, parent: 12, at: 101, name: "chat m", attrs: map[string]any{"gen_ai.operation.name": "chat"}},
	)
	s, st := mapAll(t, []ptrace.Traces{td})
	got, err := realotel.TruthOf(s.evs)
	if err != nil {
		t.Fatal(err)
	}
	want := realotel.Truth{Sessions: 1, Plans: 1, Replans: 1, Completions: 1, ModelCalls: 4, RealCalls: 2, FailedCalls: 1, InputTokens: 340, OutputTokens: 44}
	if got != want {
		t.Errorf("truth\n %+v\nwant\n %+v", got, want)
	}
	if st.PlanSpansUnread != 1 || !strings.Contains(strings.Join(st.Notes(), "\n"), "1 plan spans (planning boundaries) carried no plan") {
		t.Errorf("plan spans unread %d, notes %q: want the content-less plan span counted and noted", st.PlanSpansUnread, st.Notes())
	}
	var models []string
	for _, e := range s.evs {
		if p, _ := e.Payload(); p != nil {
			if d, ok := p.(*events.ModelCalledData); ok {
				models = append(models, fmt.Sprintf("%s:%v/%v", d.Model, deref(d.InputTokens), deref(d.OutputTokens)))
			}
		}
	}
	// One agent.model.called per model call, with the model and tokens of
	// its span (the outer OpenInference span: the inner client span's).
	if want := []string{"m:100/20", "m:110/9", ":130/15", ":absent/absent"}; !slices.Equal(models, want) {
		t.Errorf("model calls %q, want %q", models, want)
	}
	for _, e := range s.evs {
		if e.Subject != "conv-7" {
			t.Errorf("event %s in session %q, want conv-7", e.ID, e.Subject)
		}
		p, _ := e.Payload()
		switch d := p.(type) {
		case *events.ToolCalledData:
			if d.Tool == "run_command" && (d.OK || d.Error != "exit status 2") {
				t.Errorf("run_command: ok %v, error %q; want the failure of its part", d.OK, d.Error)
			}
		case *events.PlanCreatedData:
			if len(d.Tasks) != 2 || d.Tasks[0].Description != "Read the config" {
				t.Errorf("plan %+v, want the first checklist", d.Tasks)
			}
		case *events.SessionEndedData:
			if d.Usage == nil || d.Usage.ModelCalls != 4 || d.Usage.CachedInputTokens != nil {
				t.Errorf("usage %+v: want 4 calls, no cached count (none reported)", d.Usage)
			}
		}
	}
	if st.Conventions["openinference"] != 1 || st.Conventions["openllmetry"] != 2 || st.Conventions["genai"] != 9 {
		t.Errorf("spans by convention %v", st.Conventions)
	}
}

func quote(s string) string {
	b := new(strings.Builder)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '"':
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
