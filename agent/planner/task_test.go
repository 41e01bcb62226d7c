package planner

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

func TestCompleteTask(t *testing.T) {
	plan := []agent.Task{task(1, "Read the handler", "read_file"), task(2, "Patch it", "write_file"), task(3, "Explain", "")}
	calls := func(specs ...bool) func(tb testing.TB, f *fixture) {
		return func(tb testing.TB, f *fixture) {
			tb.Helper()
			for _, ok := range specs {
				errText := ""
				if !ok {
					errText = "boom"
				}
				_, err := f.p.RecordToolCall(tb.Context(), "read_file", ok, "", errText, time.Millisecond)
				mustNil(tb, "RecordToolCall()", err)
			}
		}
	}
	completeUpTo := func(id int64) func(tb testing.TB, f *fixture) {
		return func(tb testing.TB, f *fixture) {
			tb.Helper()
			for i := int64(1); i <= id; i++ {
				_, err := f.p.CompleteTask(tb.Context(), i, events.CompletionSuccess, "")
				mustNil(tb, "CompleteTask()", err)
			}
		}
	}
	tests := []struct {
		name       string
		setup      func(tb testing.TB, f *fixture)
		id         int64
		reported   events.Completion
		summary    string
		want       Result
		wantEvents func(tb testing.TB) []string
	}{
		{
			name:     "current task, success",
			setup:    calls(true, true),
			id:       1,
			reported: events.CompletionSuccess,
			summary:  "found the race",
			want: Result{Accepted: true, Completion: events.CompletionSuccess, Message: fmt.Sprintf(msgTaskCompleted, 1, "success", 2, "Patch it"),
				Tasks: []agent.Task{done(plan[0]), plan[1], plan[2]}},
			wantEvents: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.ToolCalled, control(1, ToolCompleteTask, "read_file", true, "", "")),
					ev(tb, events.TaskCompleted, agent.TaskCompleted{TaskID: 1, Completion: events.CompletionSuccess, Reported: events.CompletionSuccess, ToolCalls: 3, Summary: "found the race"}),
				}
			},
		},
		{
			name: "nothing reported: success, reported omitted",
			id:   1,
			want: Result{Accepted: true, Completion: events.CompletionSuccess, Message: fmt.Sprintf(msgTaskCompleted, 1, "success", 2, "Patch it"),
				Tasks: []agent.Task{done(plan[0]), plan[1], plan[2]}},
			wantEvents: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.ToolCalled, control(1, ToolCompleteTask, "read_file", true, "", "")),
					ev(tb, events.TaskCompleted, agent.TaskCompleted{TaskID: 1, Completion: events.CompletionSuccess, ToolCalls: 1}),
				}
			},
		},
		{
			name:     "failed tool calls: success reconciled to partial_success",
			setup:    calls(false, true),
			id:       1,
			reported: events.CompletionSuccess,
			want: Result{Accepted: true, Completion: events.CompletionPartialSuccess, Message: fmt.Sprintf(msgTaskCompleted, 1, "partial_success", 2, "Patch it"),
				Tasks: []agent.Task{done(plan[0]), plan[1], plan[2]}},
			wantEvents: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.ToolCalled, control(1, ToolCompleteTask, "read_file", true, "", "")),
					ev(tb, events.TaskCompleted, agent.TaskCompleted{TaskID: 1, Completion: events.CompletionPartialSuccess, Reported: events.CompletionSuccess, ToolCalls: 3}),
				}
			},
		},
		{
			name: "the run replanned (even a rejected call): success reconciled to partial_success",
			setup: func(tb testing.TB, f *fixture) {
				_, err := f.p.UpdateTaskPlan(tb.Context(), nil, "", events.TriggerModel)
				mustNil(tb, "UpdateTaskPlan()", err)
			},
			id: 1,
			want: Result{Accepted: true, Completion: events.CompletionPartialSuccess, Message: fmt.Sprintf(msgTaskCompleted, 1, "partial_success", 2, "Patch it"),
				Tasks: []agent.Task{done(plan[0]), plan[1], plan[2]}},
			wantEvents: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.ToolCalled, control(1, ToolCompleteTask, "read_file", true, "", "")),
					ev(tb, events.TaskCompleted, agent.TaskCompleted{TaskID: 1, Completion: events.CompletionPartialSuccess, ToolCalls: 1}),
				}
			},
		},
		{
			name:     "partial_success and failure are never reconciled",
			setup:    calls(false),
			id:       1,
			reported: events.CompletionPartialSuccess,
			want: Result{Accepted: true, Completion: events.CompletionPartialSuccess, Message: fmt.Sprintf(msgTaskCompleted, 1, "partial_success", 2, "Patch it"),
				Tasks: []agent.Task{done(plan[0]), plan[1], plan[2]}},
			wantEvents: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.ToolCalled, control(1, ToolCompleteTask, "read_file", true, "", "")),
					ev(tb, events.TaskCompleted, agent.TaskCompleted{TaskID: 1, Completion: events.CompletionPartialSuccess, Reported: events.CompletionPartialSuccess, ToolCalls: 2}),
				}
			},
		},
		{
			name:     "failure: recorded, the task stays current",
			setup:    calls(false),
			id:       1,
			reported: events.CompletionFailure,
			summary:  "no permission",
			want:     Result{Accepted: true, Completion: events.CompletionFailure, Message: fmt.Sprintf(msgTaskFailed, 1), Tasks: plan},
			wantEvents: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.ToolCalled, control(1, ToolCompleteTask, "read_file", true, "", "")),
					ev(tb, events.TaskCompleted, agent.TaskCompleted{TaskID: 1, Completion: events.CompletionFailure, Reported: events.CompletionFailure, ToolCalls: 2, Summary: "no permission"}),
				}
			},
		},
		{
			name:     "last task: all done",
			setup:    completeUpTo(2),
			id:       3,
			reported: events.CompletionSuccess,
			want: Result{Accepted: true, Completion: events.CompletionSuccess, Message: fmt.Sprintf(msgAllTasksCompleted, 3, "success"),
				Tasks: []agent.Task{done(plan[0]), done(plan[1]), done(plan[2])}},
			wantEvents: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.ToolCalled, control(3, ToolCompleteTask, "", true, "", "")),
					ev(tb, events.TaskCompleted, agent.TaskCompleted{TaskID: 3, Completion: events.CompletionSuccess, Reported: events.CompletionSuccess, ToolCalls: 1}),
				}
			},
		},
		{
			name:       "a later task is not current: refused, nothing emitted",
			id:         2,
			reported:   events.CompletionSuccess,
			want:       Result{Message: fmt.Sprintf(msgNotCurrentTask, 2, 1, "Read the handler"), Tasks: plan},
			wantEvents: func(testing.TB) []string { return nil },
		},
		{
			name:       "a completed task is not current",
			setup:      completeUpTo(1),
			id:         1,
			want:       Result{Message: fmt.Sprintf(msgNotCurrentTask, 1, 2, "Patch it"), Tasks: []agent.Task{done(plan[0]), plan[1], plan[2]}},
			wantEvents: func(testing.TB) []string { return nil },
		},
		{
			name:       "an unknown task is not current",
			id:         42,
			want:       Result{Message: fmt.Sprintf(msgNotCurrentTask, 42, 1, "Read the handler"), Tasks: plan},
			wantEvents: func(testing.TB) []string { return nil },
		},
		{
			name:       "no pending task",
			setup:      completeUpTo(3),
			id:         3,
			want:       Result{Message: fmt.Sprintf(msgNoPendingTask, 3), Tasks: []agent.Task{done(plan[0]), done(plan[1]), done(plan[2])}},
			wantEvents: func(testing.TB) []string { return nil },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := plannedFixture(t, toolsConfig(), StartInfo{}, plan...)
			if tt.setup != nil {
				tt.setup(t, f)
			}
			f.sink.take()
			got, err := f.p.CompleteTask(t.Context(), tt.id, tt.reported, tt.summary)
			if err != nil {
				t.Fatalf("CompleteTask(%d) error = %v", tt.id, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CompleteTask(%d) = %+v\nwant %+v", tt.id, got, tt.want)
			}
			checkEvents(t, f.sink.take(), tt.wantEvents(t))
		})
	}
}

func TestCompleteTaskInvalidCompletion(t *testing.T) {
	f := plannedFixture(t, toolsConfig(), StartInfo{}, task(1, "a", ""))
	_, err := f.p.CompleteTask(t.Context(), 1, "done", "")
	if err == nil || err.Error() != `complete task 1: completion "done" is not valid` {
		t.Fatalf("CompleteTask(done) error = %v", err)
	}
	if evs := f.sink.take(); len(evs) != 0 {
		t.Errorf("emitted %d events, want none", len(evs))
	}
}

func TestRecordToolCall(t *testing.T) {
	long := strings.Repeat("é", maxErrorLen+10)
	tests := []struct {
		name    string
		plan    []agent.Task
		setup   func(tb testing.TB, f *fixture)
		tool    string
		ok      bool
		kind    string
		errText string
		took    time.Duration
		want    Result
		events  func(tb testing.TB) []string
		wantErr error
	}{
		{
			name: "attributed to the current task and its hint",
			plan: []agent.Task{task(1, "Run tests", "run_command")},
			tool: "run_command", ok: true, took: 18230 * time.Millisecond,
			want: Result{Accepted: true, Tasks: []agent.Task{task(1, "Run tests", "run_command")}},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(1, "run_command", "run_command", true, "", "", 18230))}
			},
		},
		{
			name: "another tool than the hint, failing",
			plan: []agent.Task{task(1, "Run tests", "run_command")},
			tool: "grep", kind: "exit_status", errText: "exit status 2", took: 41 * time.Millisecond,
			want: Result{Accepted: true, Tasks: []agent.Task{task(1, "Run tests", "run_command")}},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(1, "grep", "run_command", false, "exit_status", "exit status 2", 41))}
			},
		},
		{
			name: "task without hint: hint null",
			plan: []agent.Task{task(1, "Think", "")},
			tool: "read_file", ok: true,
			want: Result{Accepted: true, Tasks: []agent.Task{task(1, "Think", "")}},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(1, "read_file", "", true, "", "", 0))}
			},
		},
		{
			name: "the next task once the first is done",
			plan: []agent.Task{task(1, "a", "grep"), task(2, "b", "write_file")},
			setup: func(tb testing.TB, f *fixture) {
				_, err := f.p.CompleteTask(tb.Context(), 1, "", "")
				mustNil(tb, "CompleteTask()", err)
			},
			tool: "write_file", ok: true, took: 9 * time.Millisecond,
			want: Result{Accepted: true, Tasks: []agent.Task{done(task(1, "a", "grep")), task(2, "b", "write_file")}},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(2, "write_file", "write_file", true, "", "", 9))}
			},
		},
		{
			name: "no pending task (empty plan): task and hint null",
			plan: nil,
			tool: "search_web", ok: true, took: 3 * time.Millisecond,
			want: Result{Accepted: true},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(0, "search_web", "", true, "", "", 3))}
			},
		},
		{
			name: "long error cut to 4096 characters, negative duration 0",
			plan: []agent.Task{task(1, "a", "")},
			tool: "run_command", kind: "exit_status", errText: long, took: -time.Second,
			want: Result{Accepted: true, Tasks: []agent.Task{task(1, "a", "")}},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(1, "run_command", "", false, "exit_status", strings.Repeat("é", maxErrorLen), 0))}
			},
		},
		{
			name: "a tool that is not in the session is still recorded",
			plan: []agent.Task{task(1, "a", "")},
			tool: "made_up", kind: "unknown_tool", errText: "no such tool",
			want: Result{Accepted: true, Tasks: []agent.Task{task(1, "a", "")}},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(1, "made_up", "", false, "unknown_tool", "no such tool", 0))}
			},
		},
		{name: "complete_task is a control call", plan: []agent.Task{task(1, "a", "")}, tool: ToolCompleteTask, wantErr: ErrControlTool},
		{name: "update_task_plan is a control call", plan: []agent.Task{task(1, "a", "")}, tool: ToolUpdateTaskPlan, wantErr: ErrControlTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := plannedFixture(t, toolsConfig(), StartInfo{}, tt.plan...)
			if tt.setup != nil {
				tt.setup(t, f)
			}
			f.sink.take()
			got, err := f.p.RecordToolCall(t.Context(), tt.tool, tt.ok, tt.kind, tt.errText, tt.took)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("RecordToolCall(%s) error = %v, want %v", tt.tool, err, tt.wantErr)
				}
				if evs := f.sink.take(); len(evs) != 0 {
					t.Errorf("emitted %d events, want none", len(evs))
				}
				return
			}
			if err != nil {
				t.Fatalf("RecordToolCall(%s) error = %v", tt.tool, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("RecordToolCall(%s) = %+v, want %+v", tt.tool, got, tt.want)
			}
			checkEvents(t, f.sink.take(), tt.events(t))
		})
	}
}

func TestRecordToolCallEmptyName(t *testing.T) {
	f := plannedFixture(t, toolsConfig(), StartInfo{}, task(1, "a", ""))
	if _, err := f.p.RecordToolCall(t.Context(), " ", true, "", "", 0); err == nil || err.Error() != "record tool call: empty tool name" {
		t.Fatalf("RecordToolCall(\" \") error = %v", err)
	}
}

// TestDepthLimit walks a task through its budget: each step is one more
// call (or a completion), with the result and events it must give.
func TestDepthLimit(t *testing.T) {
	const budget = 3
	plan := []agent.Task{task(1, "Fix the client", "write_file"), task(2, "Run the tests", "run_command")}
	limitMsg := func(calls, id int64) string { return fmt.Sprintf(msgDepthLimit, calls, id, budget, id) }
	type step struct {
		name     string
		complete bool // CompleteTask(current) instead of a tool call
		ok       bool
		want     Result // Tasks not compared
		events   func(tb testing.TB) []string
	}
	steps := []step{
		{name: "call 1", ok: true, want: Result{Accepted: true},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(1, "run_command", "write_file", true, "", "", 5))}
			}},
		{name: "call 2 fails", ok: false, want: Result{Accepted: true},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(1, "run_command", "write_file", false, "timeout", "i/o timeout", 5))}
			}},
		{name: "call 3 uses the budget up: message and event", ok: true, want: Result{Accepted: true, DepthLimit: true, Message: limitMsg(3, 1)},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.ToolCalled, call(1, "run_command", "write_file", true, "", "", 5)),
					ev(tb, events.DepthLimitReached, agent.DepthLimit{TaskID: 1, ToolCalls: 3, Limit: budget}),
				}
			}},
		{name: "call 4: message again, no second event", ok: true, want: Result{Accepted: true, DepthLimit: true, Message: limitMsg(4, 1)},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(1, "run_command", "write_file", true, "", "", 5))}
			}},
		{name: "complete task 1", complete: true,
			want: Result{Accepted: true, Completion: events.CompletionPartialSuccess, Message: fmt.Sprintf(msgTaskCompleted, 1, "partial_success", 2, "Run the tests")},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.ToolCalled, control(1, ToolCompleteTask, "write_file", true, "", "")),
					ev(tb, events.TaskCompleted, agent.TaskCompleted{TaskID: 1, Completion: events.CompletionPartialSuccess, Reported: events.CompletionSuccess, ToolCalls: 5}),
				}
			}},
		{name: "task 2 has its own budget", ok: true, want: Result{Accepted: true},
			events: func(tb testing.TB) []string {
				return []string{ev(tb, events.ToolCalled, call(2, "run_command", "run_command", true, "", "", 5))}
			}},
	}
	f := plannedFixture(t, Config{Tools: testTools, TaskToolBudget: budget}, StartInfo{}, plan...)
	for _, s := range steps {
		var (
			got Result
			err error
		)
		if s.complete {
			cur, _ := f.p.Current()
			got, err = f.p.CompleteTask(t.Context(), cur.ID, events.CompletionSuccess, "")
		} else {
			kind, msg := "", ""
			if !s.ok {
				kind, msg = "timeout", "i/o timeout"
			}
			got, err = f.p.RecordToolCall(t.Context(), "run_command", s.ok, kind, msg, 5*time.Millisecond)
		}
		if err != nil {
			t.Fatalf("%s: error = %v", s.name, err)
		}
		got.Tasks = nil
		if !reflect.DeepEqual(got, s.want) {
			t.Errorf("%s: result = %+v, want %+v", s.name, got, s.want)
		}
		checkEvents(t, f.sink.take(), s.events(t))
	}
}
