package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

func i64(n int64) *int64 { return &n }

// TestModelCall records model calls before and after the plan and a tool
// call with arguments: each model call is an agent.model.called for the task
// in progress, the session's end sums them, and a tool call's arguments
// travel as their digest.
func TestModelCall(t *testing.T) {
	f := newFixture(t, toolsConfig())
	ctx := t.Context()
	mustNil(t, "Start()", f.p.Start(ctx, StartInfo{Model: "m-1"}))
	n, err := f.p.ModelCall(ctx, ModelCall{InputTokens: i64(100), OutputTokens: i64(20), Took: 300 * time.Millisecond})
	mustNil(t, "ModelCall()", err)
	if n != 1 {
		t.Errorf("ModelCall() = %d iterations, want 1", n)
	}
	_, err = f.p.NewPlanFromTasks(ctx, []agent.Task{task(0, "a", "grep"), task(0, "b", "")})
	mustNil(t, "NewPlanFromTasks()", err)
	_, err = f.p.ModelCall(ctx, ModelCall{Model: "m-2", InputTokens: i64(150), OutputTokens: i64(5), CachedInputTokens: i64(90), Took: 200 * time.Millisecond})
	mustNil(t, "ModelCall()", err)
	_, err = f.p.RecordCall(ctx, Call{Tool: "grep", Args: []byte(`{"pattern": "x", "path": "."}`), OK: false, ErrorKind: "exit_status", Error: "exit 1"})
	mustNil(t, "RecordCall()", err)
	if _, err := f.p.ModelCall(ctx, ModelCall{InputTokens: i64(-1)}); err == nil {
		t.Error("ModelCall() with -1 input tokens: no error")
	}
	mustNil(t, "End()", f.p.End(ctx, events.OutcomeFailure, ""))

	var got []string
	for _, e := range wire(t, f.sink.all()) {
		typ, _, _ := strings.Cut(e, " ")
		if typ == string(events.ModelCalled) || typ == string(events.ToolCalled) || typ == string(events.SessionEnded) {
			got = append(got, e)
		}
	}
	want := []string{
		ev(t, events.ModelCalled, agent.ModelCalled{Model: "m-1", InputTokens: i64(100), OutputTokens: i64(20), DurationMS: 300}),
		ev(t, events.ModelCalled, agent.ModelCalled{TaskID: i64(1), Model: "m-2", InputTokens: i64(150), OutputTokens: i64(5), CachedInputTokens: i64(90), DurationMS: 200}),
		ev(t, events.ToolCalled, agent.ToolCalled{TaskID: i64(1), Hint: ptr("grep"), Tool: "grep", ErrorKind: "exit_status", Error: "exit 1",
			ArgsDigest: events.ArgsDigest([]byte(`{"path":".","pattern":"x"}`))}),
		ev(t, events.SessionEnded, agent.SessionEnded{Outcome: events.OutcomeFailure, ToolCalls: 1, FailedToolCalls: 1, Iterations: 2,
			Usage: &agent.Usage{ModelCalls: 2, InputTokens: i64(250), OutputTokens: i64(25), CachedInputTokens: i64(90), ModelMS: 500}}),
	}
	if len(got) != len(want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if _, err := f.p.ModelCall(ctx, ModelCall{}); err == nil {
		t.Error("ModelCall() after End: no error")
	}
}
