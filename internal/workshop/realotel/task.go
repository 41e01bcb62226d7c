package realotel

import (
	"fmt"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
)

// The task's plan tool calls: SkillLite's update_task_plan dialect
// (internal/plandialect), a revision keeping the completed tasks and
// replacing the pending ones by the listed ones, and complete_task
// {task_id}.
var (
	firstPlan = map[string]any{"tasks": []any{
		map[string]any{"id": 1, "description": "Read the project configuration", "tool_hint": "file_read", "completed": false},
		map[string]any{"id": 2, "description": "Run the test suite", "tool_hint": "command", "completed": false},
	}}
	// replan, after the tests failed to run: task 1 is completed and
	// stays; the pending "Run the test suite" is replaced.
	replan = map[string]any{"reason": "the project has no tests folder", "tasks": []any{
		map[string]any{"id": 2, "description": "Write a note that the project has no tests", "tool_hint": "file_write", "completed": false},
	}}
)

// Answer is the model's last text, the end of the task.
const Answer = "config.toml is read; there is no tests folder, so nothing ran: NOTES.md says so."

// Script is the model's side of the task, the same for every framework,
// one tool call a step: plan, read a file, complete task 1, run a command
// that fails, replan, write a file, complete task 2, answer.
func Script() []fakemodel.Step {
	return []fakemodel.Step{
		{Calls: []fakemodel.Call{{Name: "update_task_plan", Input: firstPlan}}},
		{Calls: []fakemodel.Call{{Name: "read_file", Input: map[string]any{"path": "config.toml"}}}},
		{Calls: []fakemodel.Call{{Name: "complete_task", Input: map[string]any{"task_id": 1}}}},
		{Calls: []fakemodel.Call{{Name: "run_command", Input: map[string]any{"command": "ls tests"}}}},
		{Calls: []fakemodel.Call{{Name: "update_task_plan", Input: replan}}},
		{Calls: []fakemodel.Call{{Name: "write_file", Input: map[string]any{"path": "NOTES.md", "content": "# Notes\n\nThe project has no tests folder.\n"}}}},
		{Calls: []fakemodel.Call{{Name: "complete_task", Input: map[string]any{"task_id": 2}}}},
		{Text: Answer},
	}
}

// Workspace is the task's work directory's content before the run.
var Workspace = map[string]string{
	"config.toml": "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n",
}

// toolCall is one call the script makes and whether the tool throws.
type toolCall struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
}

// scriptCalls is every call of the script, in order, with whether the
// real tool succeeds: run_command's "ls tests" exits non-zero, so the
// script's tool throws.
func scriptCalls() []toolCall {
	var out []toolCall
	for _, s := range Script() {
		for _, c := range s.Calls {
			out = append(out, toolCall{Name: c.Name, OK: c.Name != "run_command"})
		}
	}
	return out
}

// Truth is what the task makes certain, counted by hand from Script
// (testdata/realotel/README.md shows the count), and the tokens the fake
// model server reported: what an adapter reading a framework's traces
// must find.
type Truth struct {
	// Sessions is the number of agent sessions (one run of the task).
	Sessions int
	// Plans is the number of plans created; Replans the number of
	// update_task_plan revisions after it.
	Plans, Replans int
	// Completions is the number of complete_task calls.
	Completions int
	// ModelCalls is the number of model requests the server answered
	// with a step.
	ModelCalls int
	// RealCalls counts the calls of real tools (read_file, run_command,
	// write_file), FailedCalls those that threw.
	RealCalls, FailedCalls int
	// InputTokens, OutputTokens and CachedTokens are the sums of the usage
	// the server reported (fakemodel.ChatUsage of each step answered).
	InputTokens, OutputTokens, CachedTokens int
}

// ScriptTruth is the task's truth when a framework asks for every step
// and for usage: the hand count.
func ScriptTruth() Truth {
	t := Truth{Sessions: 1, Plans: 1, Replans: 1, Completions: 2, ModelCalls: len(Script()), RealCalls: 3, FailedCalls: 1}
	for _, u := range fakemodel.ChatUsage(Script()) {
		t.InputTokens += u.Input
		t.OutputTokens += u.Output
		t.CachedTokens += u.Cached
	}
	return t
}

// Expected is the script's truth as framework name's telemetry can carry
// it (testdata/realotel/README.md says why for each).
func Expected(name string) Truth {
	t := ScriptTruth()
	switch name {
	case "openllmetry":
		// Traceloop 0.27.0's withTool never ends the span of a tool that
		// throws: the failed run_command has no span. It records no cached
		// tokens.
		t.RealCalls, t.FailedCalls, t.CachedTokens = t.RealCalls-1, 0, 0
	}
	return t
}

// TruthOf counts in evs what a Truth counts: sessions started, plans
// created, replans (agent.plan.updated), completions, model calls and
// their tokens (agent.model.called), real tool calls and the failed ones
// (agent.tool.called, control false): what an adapter made of a
// framework's telemetry, to hold against the script's truth. A session
// whose agent.session.ended disagrees with its model calls (iterations
// other than their number, usage other than their sums) is an error.
func TruthOf(evs []*events.Event) (Truth, error) {
	var got Truth
	type sum struct{ calls, in, out, cached int64 }
	sums := map[string]*sum{}
	at := func(session string) *sum {
		if sums[session] == nil {
			sums[session] = new(sum)
		}
		return sums[session]
	}
	for _, e := range evs {
		p, err := e.Payload()
		if err != nil {
			return Truth{}, fmt.Errorf("event %s: %w", e.ID, err)
		}
		switch d := p.(type) {
		case *events.SessionStartedData:
			got.Sessions++
		case *events.PlanCreatedData:
			got.Plans++
		case *events.PlanUpdatedData:
			got.Replans++
		case *events.TaskCompletedData:
			got.Completions++
		case *events.ToolCalledData:
			if !d.Control {
				got.RealCalls++
				if !d.OK {
					got.FailedCalls++
				}
			}
		case *events.ModelCalledData:
			s := at(e.Subject)
			s.calls++
			s.in += deref(d.InputTokens)
			s.out += deref(d.OutputTokens)
			s.cached += deref(d.CachedInputTokens)
			got.ModelCalls++
			got.InputTokens += int(deref(d.InputTokens))
			got.OutputTokens += int(deref(d.OutputTokens))
			got.CachedTokens += int(deref(d.CachedInputTokens))
		case *events.SessionEndedData:
			s := at(e.Subject)
			var u sum
			if d.Usage != nil {
				u = sum{d.Usage.ModelCalls, deref(d.Usage.InputTokens), deref(d.Usage.OutputTokens), deref(d.Usage.CachedInputTokens)}
			}
			if d.Iterations != s.calls || u != *s {
				return Truth{}, fmt.Errorf("session %s ended with iterations %d and usage %+v; its agent.model.called events sum to %+v", e.Subject, d.Iterations, u, *s)
			}
			delete(sums, e.Subject)
		}
	}
	return got, nil
}

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}
