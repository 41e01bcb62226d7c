package planner

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
)

func TestUpdateTaskPlan(t *testing.T) {
	plan := []agent.Task{task(1, "Build the docs", "run_command"), task(2, "Upload the site", "run_command"), task(3, "Check the site", "")}
	completeFirst := func(tb testing.TB, f *fixture) {
		tb.Helper()
		_, err := f.p.CompleteTask(tb.Context(), 1, events.CompletionSuccess, "")
		mustNil(tb, "CompleteTask(1)", err)
	}
	replans := func(n int) func(tb testing.TB, f *fixture) {
		return func(tb testing.TB, f *fixture) {
			tb.Helper()
			for range n {
				_, err := f.p.UpdateTaskPlan(tb.Context(), nil, "warm-up", events.TriggerModel)
				mustNil(tb, "UpdateTaskPlan(warm-up)", err)
			}
		}
	}
	updated := func(replan int64, trigger events.Trigger, reason string, tasks []agent.Task, kept []int64, dropped []agent.Task, overCap bool) agent.PlanUpdated {
		return agent.PlanUpdated{Replan: replan, Trigger: trigger, Reason: reason, Tasks: tasks, Kept: kept, Dropped: dropped, OverCap: overCap, Valid: true}
	}
	rejected := func(replan int64, reason, msg string, overCap bool) agent.PlanUpdated {
		return agent.PlanUpdated{Replan: replan, Trigger: events.TriggerModel, Reason: reason, OverCap: overCap, Error: msg}
	}
	okCall := control(0, ToolUpdateTaskPlan, "", true, "", "")
	badCall := func(msg string) agent.ToolCalled {
		return control(0, ToolUpdateTaskPlan, "", false, errKindInvalid, msg)
	}

	tests := []struct {
		name    string
		cfg     Config
		setup   func(tb testing.TB, f *fixture)
		tasks   []agent.Task
		reason  string
		trigger events.Trigger
		want    Result
		events  func(tb testing.TB) []string
	}{
		{
			name:    "completed tasks kept, pending ones dropped, new ones numbered after the highest kept id",
			setup:   completeFirst,
			tasks:   []agent.Task{task(1, "Check the credentials", "run_command"), done(task(2, "Retry the upload", "run_command"))},
			reason:  "AccessDenied",
			trigger: events.TriggerToolFailures,
			want: Result{Accepted: true, Message: fmt.Sprintf(msgPlanUpdated, 2, "Check the credentials"),
				Tasks: []agent.Task{done(plan[0]), task(2, "Check the credentials", "run_command"), task(3, "Retry the upload", "run_command")}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, updated(1, events.TriggerToolFailures, "AccessDenied",
						[]agent.Task{done(plan[0]), task(2, "Check the credentials", "run_command"), task(3, "Retry the upload", "run_command")},
						[]int64{1}, plan[1:], false)),
					ev(tb, events.ToolCalled, okCall),
				}
			},
		},
		{
			name:   "restated completed task skipped, the rest new",
			setup:  completeFirst,
			tasks:  []agent.Task{done(task(1, "Build the docs", "run_command")), task(2, "Upload with the CLI", "run_command")},
			reason: "use the CLI",
			want: Result{Accepted: true, Message: fmt.Sprintf(msgPlanUpdated, 2, "Upload with the CLI"),
				Tasks: []agent.Task{done(plan[0]), task(2, "Upload with the CLI", "run_command")}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, updated(1, events.TriggerModel, "use the CLI",
						[]agent.Task{done(plan[0]), task(2, "Upload with the CLI", "run_command")}, []int64{1}, plan[1:], false)),
					ev(tb, events.ToolCalled, okCall),
				}
			},
		},
		{
			name:  "nothing completed: nothing kept, all dropped",
			tasks: []agent.Task{task(0, "Start over", "")},
			want:  Result{Accepted: true, Message: fmt.Sprintf(msgPlanUpdated, 1, "Start over"), Tasks: []agent.Task{task(1, "Start over", "")}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, updated(1, events.TriggerModel, "", []agent.Task{task(1, "Start over", "")}, nil, plan, false)),
					ev(tb, events.ToolCalled, okCall),
				}
			},
		},
		{
			name: "new tasks sanitised: hint.stripped (replan) between plan.updated and the call",
			cfg: Config{Tools: testTools, Rules: ruleset.RuleSet{Version: "v1", Rules: []ruleset.Rule{
				{ID: "r-9", Kind: ruleset.KindReplace, TaskType: "search", ToolHint: "search_web", Instead: "grep"}}}},
			tasks: []agent.Task{task(0, "Group by owner", "spreadsheet"), typed(task(0, "Find owners", "search_web"), "search")},
			want: Result{Accepted: true, Message: fmt.Sprintf(msgPlanUpdated, 1, "Group by owner"),
				Tasks: []agent.Task{task(1, "Group by owner", ""), typed(task(2, "Find owners", "grep"), "search")}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, updated(1, events.TriggerModel, "",
						[]agent.Task{task(1, "Group by owner", ""), typed(task(2, "Find owners", "grep"), "search")}, nil, plan, false)),
					ev(tb, events.HintStripped, agent.HintStripped{TaskID: 1, ToolHint: "spreadsheet", Phase: events.PhaseReplan, Reason: events.StripUnavailable}),
					ev(tb, events.HintStripped, agent.HintStripped{TaskID: 2, ToolHint: "search_web", Phase: events.PhaseReplan, Reason: events.StripRule, RuleID: "r-9"}),
					ev(tb, events.ToolCalled, okCall),
				}
			},
		},
		{
			name:   "empty list rejected, still counted",
			setup:  completeFirst,
			tasks:  []agent.Task{},
			reason: "nothing left",
			want:   Result{Message: msgRejectedEmptyPlan, Tasks: []agent.Task{done(plan[0]), plan[1], plan[2]}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, rejected(1, "nothing left", errEmptyList, false)),
					ev(tb, events.ToolCalled, badCall(errEmptyList)),
				}
			},
		},
		{
			name:  "only restated completed tasks: rejected",
			setup: completeFirst,
			tasks: []agent.Task{done(task(1, "Build the docs", "run_command"))},
			want:  Result{Message: msgRejectedEmptyPlan, Tasks: []agent.Task{done(plan[0]), plan[1], plan[2]}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, rejected(1, "", errNoNewTask, false)),
					ev(tb, events.ToolCalled, badCall(errNoNewTask)),
				}
			},
		},
		{
			name:  "third call is over the default cap of 3: stop replanning",
			setup: replans(2),
			tasks: []agent.Task{task(0, "Use list prices", "")},
			want: Result{Accepted: true, OverCap: true, Message: fmt.Sprintf(msgSoftCap, 3, 3, 1, "Use list prices"),
				Tasks: []agent.Task{task(1, "Use list prices", "")}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, updated(3, events.TriggerModel, "", []agent.Task{task(1, "Use list prices", "")}, nil, plan, true)),
					ev(tb, events.ToolCalled, okCall),
				}
			},
		},
		{
			name:  "second call is under the cap",
			setup: replans(1),
			tasks: []agent.Task{task(0, "x", "")},
			want:  Result{Accepted: true, Message: fmt.Sprintf(msgPlanUpdated, 1, "x"), Tasks: []agent.Task{task(1, "x", "")}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, updated(2, events.TriggerModel, "", []agent.Task{task(1, "x", "")}, nil, plan, false)),
					ev(tb, events.ToolCalled, okCall),
				}
			},
		},
		{
			name:  "rejected over the cap: both messages",
			setup: replans(2),
			want:  Result{OverCap: true, Message: msgRejectedEmptyPlan + "\n\n" + fmt.Sprintf(msgSoftCap, 3, 3, 1, "Build the docs"), Tasks: plan},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, rejected(3, "", errEmptyList, true)),
					ev(tb, events.ToolCalled, badCall(errEmptyList)),
				}
			},
		},
		{
			name:  "configured cap of 1",
			cfg:   Config{Tools: testTools, ReplanSoftCap: 1},
			tasks: []agent.Task{task(0, "x", "grep")},
			want:  Result{Accepted: true, OverCap: true, Message: fmt.Sprintf(msgSoftCap, 1, 1, 1, "x"), Tasks: []agent.Task{task(1, "x", "grep")}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, updated(1, events.TriggerModel, "", []agent.Task{task(1, "x", "grep")}, nil, plan, true)),
					ev(tb, events.ToolCalled, okCall),
				}
			},
		},
		{
			name: "no trigger after the depth limit: depth_limit",
			cfg:  Config{Tools: testTools, TaskToolBudget: 1},
			setup: func(tb testing.TB, f *fixture) {
				_, err := f.p.RecordToolCall(tb.Context(), "run_command", false, "exit_status", "exit status 1", time.Second)
				mustNil(tb, "RecordToolCall()", err)
			},
			tasks: []agent.Task{task(0, "Mock the API", "write_file")},
			want:  Result{Accepted: true, Message: fmt.Sprintf(msgPlanUpdated, 1, "Mock the API"), Tasks: []agent.Task{task(1, "Mock the API", "write_file")}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, updated(1, events.TriggerDepthLimit, "", []agent.Task{task(1, "Mock the API", "write_file")}, nil, plan, false)),
					ev(tb, events.ToolCalled, okCall),
				}
			},
		},
		{
			name: "with nothing kept, ids restart at 1: a dropped id names a new task",
			setup: func(tb testing.TB, f *fixture) {
				_, err := f.p.UpdateTaskPlan(tb.Context(), []agent.Task{task(0, "a", ""), task(0, "b", "")}, "", events.TriggerModel)
				mustNil(tb, "UpdateTaskPlan()", err)
			},
			tasks: []agent.Task{task(0, "c", "")},
			want:  Result{Accepted: true, Message: fmt.Sprintf(msgPlanUpdated, 1, "c"), Tasks: []agent.Task{task(1, "c", "")}},
			events: func(tb testing.TB) []string {
				return []string{
					ev(tb, events.PlanUpdated, updated(2, events.TriggerModel, "", []agent.Task{task(1, "c", "")}, nil,
						[]agent.Task{task(1, "a", ""), task(2, "b", "")}, false)),
					ev(tb, events.ToolCalled, okCall),
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.Tools == nil {
				cfg = toolsConfig()
			}
			f := plannedFixture(t, cfg, StartInfo{}, plan...)
			if tt.setup != nil {
				tt.setup(t, f)
			}
			f.sink.take()
			in := cloneTasks(tt.tasks)
			got, err := f.p.UpdateTaskPlan(t.Context(), in, tt.reason, tt.trigger)
			if err != nil {
				t.Fatalf("UpdateTaskPlan() error = %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("UpdateTaskPlan() = %+v\nwant %+v\ntasks %s\nwant  %s", got, tt.want, tasksJSON(t, got.Tasks), tasksJSON(t, tt.want.Tasks))
			}
			if !reflect.DeepEqual(in, tt.tasks) {
				t.Errorf("UpdateTaskPlan() changed its input to %s", tasksJSON(t, in))
			}
			if pl := f.p.Tasks(); !reflect.DeepEqual(pl, tt.want.Tasks) {
				t.Errorf("Tasks() = %s, want %s", tasksJSON(t, pl), tasksJSON(t, tt.want.Tasks))
			}
			checkEvents(t, f.sink.take(), tt.events(t))
		})
	}
}

func TestUpdateTaskPlanInvalidTrigger(t *testing.T) {
	f := plannedFixture(t, toolsConfig(), StartInfo{}, task(1, "a", ""))
	_, err := f.p.UpdateTaskPlan(t.Context(), []agent.Task{task(0, "b", "")}, "", "whim")
	if err == nil || err.Error() != `update task plan: trigger "whim" is not valid` {
		t.Fatalf("UpdateTaskPlan(trigger whim) error = %v", err)
	}
	if n := f.p.Replans(); n != 0 {
		t.Errorf("Replans() = %d after a bad call, want 0", n)
	}
	if evs := f.sink.take(); len(evs) != 0 {
		t.Errorf("emitted %d events for a bad call, want none", len(evs))
	}
	if errors.Is(err, ErrSequence) {
		t.Errorf("a bad trigger is not ErrSequence")
	}
}
