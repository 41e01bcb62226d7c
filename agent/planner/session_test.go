package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
)

func TestStart(t *testing.T) {
	rules := ruleset.RuleSet{Version: "2025-06-10.2", Rules: []ruleset.Rule{
		{ID: "r-017", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "search_web"},
		{ID: "r-023", Kind: ruleset.KindPrefer, TaskType: "test", ToolHint: "run_command"},
	}}
	allTools := append(slices.Clone(testTools), ToolCompleteTask, ToolUpdateTaskPlan)
	tests := []struct {
		name string
		cfg  Config
		info StartInfo
		want agent.SessionStarted
	}{
		{
			name: "agent from the source, control tools added",
			cfg:  toolsConfig(),
			info: StartInfo{Goal: "Fix the flaky test", AgentVersion: "0.9.4", Model: "qwen2.5-coder-32b"},
			want: agent.SessionStarted{Goal: "Fix the flaky test", Agent: "skilllite", AgentVersion: "0.9.4", Model: "qwen2.5-coder-32b", Tools: allTools},
		},
		{
			name: "rule set version and every loaded rule, task type",
			cfg:  Config{Tools: testTools, Rules: rules},
			info: StartInfo{Goal: "Replace OldClient", Agent: "skilllite", AgentVersion: "2.3.0", Model: "gpt-4.1-mini", TaskType: "refactor"},
			want: agent.SessionStarted{Goal: "Replace OldClient", Agent: "skilllite", AgentVersion: "2.3.0", Model: "gpt-4.1-mini", Tools: allTools,
				TaskType: "refactor", Ruleset: "2025-06-10.2", Rules: []string{"r-017", "r-023"}},
		},
		{
			name: "control tools listed once, in the caller's order",
			cfg:  Config{Tools: []string{ToolUpdateTaskPlan, "grep"}},
			want: agent.SessionStarted{Agent: "skilllite", Tools: []string{ToolUpdateTaskPlan, "grep", ToolCompleteTask}},
		},
		{
			name: "no tools at all",
			want: agent.SessionStarted{Agent: "skilllite", Tools: []string{ToolCompleteTask, ToolUpdateTaskPlan}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.cfg)
			mustNil(t, "Start()", f.p.Start(t.Context(), tt.info))
			checkEvents(t, f.sink.take(), []string{ev(t, events.SessionStarted, tt.want)})
		})
	}
}

func TestEnd(t *testing.T) {
	tests := []struct {
		name     string
		script   func(tb testing.TB, f *fixture)
		outcome  events.Outcome
		feedback events.Feedback
		want     agent.SessionEnded
	}{
		{
			name:    "ended before any plan",
			script:  func(testing.TB, *fixture) {},
			outcome: events.OutcomeAborted,
			want:    agent.SessionEnded{Outcome: events.OutcomeAborted},
		},
		{
			name: "counts: replans with rejected ones, calls with control ones, failed calls as ok false",
			script: func(tb testing.TB, f *fixture) {
				ctx := tb.Context()
				_, err := f.p.NewPlan(ctx, "g", `[{"description":"a","tool_hint":"grep"},{"description":"b"}]`)
				mustNil(tb, "NewPlan()", err)
				f.p.Iterate()
				_, err = f.p.RecordToolCall(ctx, "grep", true, "", "", 40*time.Millisecond)
				mustNil(tb, "RecordToolCall()", err)
				f.clock.advance(1500 * time.Millisecond)
				f.p.Iterate()
				_, err = f.p.RecordToolCall(ctx, "grep", false, "exit_status", "exit status 2", time.Millisecond)
				mustNil(tb, "RecordToolCall()", err)
				f.p.Iterate()
				_, err = f.p.CompleteTask(ctx, 1, events.CompletionSuccess, "")
				mustNil(tb, "CompleteTask()", err)
				_, err = f.p.CompleteTask(ctx, 1, events.CompletionSuccess, "") // refused: not counted
				mustNil(tb, "CompleteTask()", err)
				f.p.Iterate()
				_, err = f.p.UpdateTaskPlan(ctx, nil, "", "") // rejected: a failed control call
				mustNil(tb, "UpdateTaskPlan()", err)
				f.p.Iterate()
				_, err = f.p.UpdateTaskPlan(ctx, []agent.Task{task(0, "c", "")}, "", "")
				mustNil(tb, "UpdateTaskPlan()", err)
				f.clock.advance(time.Second)
				f.p.Iterate()
			},
			outcome:  events.OutcomePartialSuccess,
			feedback: events.FeedbackNeutral,
			want: agent.SessionEnded{Outcome: events.OutcomePartialSuccess, Replans: 2, ToolCalls: 5, FailedToolCalls: 2,
				Iterations: 6, DurationMS: 2500, Feedback: events.FeedbackNeutral},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, toolsConfig())
			mustNil(t, "Start()", f.p.Start(t.Context(), StartInfo{}))
			tt.script(t, f)
			f.sink.take()
			mustNil(t, "End()", f.p.End(t.Context(), tt.outcome, tt.feedback))
			checkEvents(t, f.sink.take(), []string{ev(t, events.SessionEnded, tt.want)})
		})
	}
}

func TestEndInvalidArguments(t *testing.T) {
	tests := []struct {
		name     string
		outcome  events.Outcome
		feedback events.Feedback
		want     string
	}{
		{name: "outcome", outcome: "fine", want: `end: outcome "fine" is not valid`},
		{name: "empty outcome", outcome: "", want: `end: outcome "" is not valid`},
		{name: "feedback", outcome: events.OutcomeSuccess, feedback: "meh", want: `end: feedback "meh" is not valid`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			mustNil(t, "Start()", f.p.Start(t.Context(), StartInfo{}))
			f.sink.take()
			if err := f.p.End(t.Context(), tt.outcome, tt.feedback); err == nil || err.Error() != tt.want {
				t.Fatalf("End(%q, %q) error = %v, want %q", tt.outcome, tt.feedback, err, tt.want)
			}
			if evs := f.sink.take(); len(evs) != 0 {
				t.Errorf("emitted %d events, want none", len(evs))
			}
		})
	}
}

// TestSequence checks every step taken out of order: ErrSequence, nothing
// emitted.
func TestSequence(t *testing.T) {
	type stepFn func(ctx context.Context, p *Planner) error
	start := func(ctx context.Context, p *Planner) error { return p.Start(ctx, StartInfo{}) }
	plan := func(ctx context.Context, p *Planner) error { _, err := p.NewPlan(ctx, "g", "[]"); return err }
	planTasks := func(ctx context.Context, p *Planner) error { _, err := p.NewPlanFromTasks(ctx, nil); return err }
	replan := func(ctx context.Context, p *Planner) error {
		_, err := p.UpdateTaskPlan(ctx, []agent.Task{task(0, "a", "")}, "", "")
		return err
	}
	complete := func(ctx context.Context, p *Planner) error { _, err := p.CompleteTask(ctx, 1, "", ""); return err }
	record := func(ctx context.Context, p *Planner) error {
		_, err := p.RecordToolCall(ctx, "grep", true, "", "", 0)
		return err
	}
	end := func(ctx context.Context, p *Planner) error { return p.End(ctx, events.OutcomeSuccess, "") }
	tests := []struct {
		name   string
		before []stepFn
		step   stepFn
		want   string
	}{
		{name: "plan before start", step: plan, want: "new plan: planner step out of order: not started"},
		{name: "end before start", step: end, want: "end: planner step out of order: not started"},
		{name: "start twice", before: []stepFn{start}, step: start, want: "start: planner step out of order: already started"},
		{name: "second plan", before: []stepFn{start, plan}, step: planTasks, want: "new plan: planner step out of order: the session has a plan; replan with UpdateTaskPlan"},
		{name: "replan before the plan", before: []stepFn{start}, step: replan, want: "update task plan: planner step out of order: no plan yet"},
		{name: "complete before the plan", before: []stepFn{start}, step: complete, want: "complete task: planner step out of order: no plan yet"},
		{name: "tool call before the plan", before: []stepFn{start}, step: record, want: "record tool call grep: planner step out of order: no plan yet"},
		{name: "tool call after end", before: []stepFn{start, plan, end}, step: record, want: "record tool call grep: planner step out of order: session ended"},
		{name: "end twice", before: []stepFn{start, end}, step: end, want: "end: planner step out of order: session ended"},
		{name: "plan after end", before: []stepFn{start, end}, step: plan, want: "new plan: planner step out of order: session ended"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, toolsConfig())
			for i, s := range tt.before {
				mustNil(t, fmt.Sprintf("step %d", i), s(t.Context(), f.p))
			}
			f.sink.take()
			err := tt.step(t.Context(), f.p)
			if !errors.Is(err, ErrSequence) || err.Error() != tt.want {
				t.Fatalf("step error = %v, want %q (ErrSequence)", err, tt.want)
			}
			if evs := f.sink.take(); len(evs) != 0 {
				t.Errorf("emitted %d events, want none", len(evs))
			}
		})
	}
}

// TestSessionFollowsContract drives a whole session and checks the stream
// against the contract and the session conventions of the sample sessions
// (internal/events/invariants_test.go): seqs from 1, every event decodes,
// hint.stripped right after its plan event, update_task_plan right after its
// plan.updated, task.completed right after its complete_task call, hints of
// calls as in the plan, and session.ended's counts equal to the calls seen.
func TestSessionFollowsContract(t *testing.T) {
	rules := ruleset.RuleSet{Version: "v1", Rules: []ruleset.Rule{{ID: "r-1", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "search_web"}}}
	f := newFixture(t, Config{Tools: testTools, Rules: rules, TaskToolBudget: 2})
	ctx := t.Context()
	steps := []func() error{
		func() error {
			return f.p.Start(ctx, StartInfo{Goal: "g", AgentVersion: "1", Model: "m", TaskType: "edit"})
		},
		func() error {
			_, err := f.p.NewPlan(ctx, "g", `[{"description":"a","tool_hint":"search_web"},{"description":"b","tool_hint":"pdf"},{"description":"c","tool_hint":"grep"}]`)
			return err
		},
		func() error { _, err := f.p.RecordToolCall(ctx, "read_file", true, "", "", time.Second); return err },
		func() error { _, err := f.p.CompleteTask(ctx, 1, events.CompletionSuccess, "ok"); return err },
		func() error {
			_, err := f.p.RecordToolCall(ctx, "grep", false, "exit_status", "x", time.Second)
			return err
		},
		func() error {
			_, err := f.p.RecordToolCall(ctx, "grep", false, "exit_status", "x", time.Second)
			return err
		},
		func() error { _, err := f.p.UpdateTaskPlan(ctx, nil, "", ""); return err },
		func() error {
			_, err := f.p.UpdateTaskPlan(ctx, []agent.Task{task(0, "d", "spreadsheet"), task(0, "e", "search_web")}, "", "")
			return err
		},
		func() error { _, err := f.p.CompleteTask(ctx, 2, events.CompletionFailure, ""); return err },
		func() error {
			_, err := f.p.UpdateTaskPlan(ctx, []agent.Task{task(0, "f", "write_file")}, "", "")
			return err
		},
		func() error { _, err := f.p.RecordToolCall(ctx, "write_file", true, "", "", time.Second); return err },
		func() error { _, err := f.p.CompleteTask(ctx, 2, "", ""); return err },
		func() error { return f.p.End(ctx, events.OutcomePartialSuccess, events.FeedbackNeg) },
	}
	for i, s := range steps {
		f.clock.advance(time.Second)
		f.p.Iterate()
		mustNil(t, fmt.Sprintf("step %d", i), s())
	}
	evs := f.sink.all()
	checkSeqs(t, evs)
	wire(t, evs) // every event passes the contract
	if err := checkConventions(evs); err != nil {
		t.Fatal(err)
	}
	var types []events.Type
	for _, e := range evs {
		types = append(types, e.Type)
	}
	want := []events.Type{
		events.SessionStarted, events.PlanCreated, events.HintStripped, events.HintStripped,
		events.ToolCalled, events.ToolCalled, events.TaskCompleted,
		events.ToolCalled, events.ToolCalled, events.DepthLimitReached,
		events.PlanUpdated, events.ToolCalled,
		events.PlanUpdated, events.HintStripped, events.HintStripped, events.ToolCalled,
		events.ToolCalled, events.TaskCompleted,
		events.PlanUpdated, events.ToolCalled,
		events.ToolCalled, events.ToolCalled, events.TaskCompleted,
		events.SessionEnded,
	}
	if !slices.Equal(types, want) {
		t.Fatalf("event types:\n got %v\nwant %v", types, want)
	}
}

// checkConventions is a subset of the sample-session invariants that the
// planner's streams must keep.
func checkConventions(evs []*events.Event) error {
	var (
		started              *events.SessionStartedData
		plan                 []events.Task
		replans, calls, fail int64
		taskCalls            = map[int64]int64{}
	)
	payload := func(i int) any { p, _ := evs[i].Payload(); return p }
	for i, e := range evs {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("seq %d (%s): %s", e.Seq, e.Type, fmt.Sprintf(format, args...))
		}
		switch d := payload(i).(type) {
		case *events.SessionStartedData:
			started = d
		case *events.PlanCreatedData:
			plan = d.Tasks
		case *events.PlanUpdatedData:
			replans++
			if d.Replan != replans {
				return bad("replan %d, want %d", d.Replan, replans)
			}
			if d.Valid {
				if len(d.Kept)+len(d.Dropped) != len(plan) {
					return bad("kept %v and dropped %d do not make up %d tasks", d.Kept, len(d.Dropped), len(plan))
				}
				plan = d.Tasks
			}
		case *events.HintStrippedData:
			j := i - 1
			for evs[j].Type == events.HintStripped {
				j--
			}
			want := map[events.Type]events.Phase{events.PlanCreated: events.PhasePlan, events.PlanUpdated: events.PhaseReplan}[evs[j].Type]
			if d.Phase != want {
				return bad("phase %s, want %s", d.Phase, want)
			}
			if d.Reason == events.StripRule && !slices.Contains(started.Rules, d.RuleID) {
				return bad("rule %s not among the session's", d.RuleID)
			}
			if d.Reason == events.StripUnavailable && slices.Contains(started.Tools, d.ToolHint) {
				return bad("hint %s is available", d.ToolHint)
			}
		case *events.ToolCalledData:
			calls++
			if !d.OK {
				fail++
			}
			if d.Control != (d.Tool == ToolCompleteTask || d.Tool == ToolUpdateTaskPlan) {
				return bad("control %v for %s", d.Control, d.Tool)
			}
			if !slices.Contains(started.Tools, d.Tool) {
				return bad("tool %s not among the session's", d.Tool)
			}
			if d.Tool == ToolUpdateTaskPlan {
				j := i - 1
				for evs[j].Type == events.HintStripped {
					j--
				}
				prev, ok := payload(j).(*events.PlanUpdatedData)
				if !ok || d.TaskID != nil || d.OK != prev.Valid {
					return bad("update_task_plan does not follow its plan.updated")
				}
			}
			if d.TaskID != nil {
				taskCalls[*d.TaskID]++
				k := slices.IndexFunc(plan, func(t events.Task) bool { return t.ID == *d.TaskID })
				if k < 0 || (plan[k].ToolHint == nil) != (d.Hint == nil) || d.Hint != nil && *d.Hint != *plan[k].ToolHint {
					return bad("hint differs from task %d's", *d.TaskID)
				}
			}
		case *events.TaskCompletedData:
			prev, ok := payload(i - 1).(*events.ToolCalledData)
			if !ok || prev.Tool != ToolCompleteTask || prev.TaskID == nil || *prev.TaskID != d.TaskID {
				return bad("task.completed does not follow its complete_task call")
			}
			if d.ToolCalls != taskCalls[d.TaskID] {
				return bad("tool_calls %d, want %d", d.ToolCalls, taskCalls[d.TaskID])
			}
			if d.Completion != events.CompletionFailure {
				for k := range plan {
					if plan[k].ID == d.TaskID {
						plan[k].Completed = true
					}
				}
			}
		case *events.DepthLimitReachedData:
			if d.ToolCalls != taskCalls[d.TaskID] || d.ToolCalls < d.Limit {
				return bad("tool_calls %d, want %d and at least %d", d.ToolCalls, taskCalls[d.TaskID], d.Limit)
			}
		case *events.SessionEndedData:
			if d.Replans != replans || d.ToolCalls != calls || d.FailedToolCalls != fail {
				return bad("%+v, want replans %d, calls %d, failed %d", *d, replans, calls, fail)
			}
		}
	}
	return nil
}

// TestConcurrentToolCalls records parallel tool calls from several
// goroutines (run with -race): every call is counted once, seqs have no
// gaps, and the depth limit is reached once.
func TestConcurrentToolCalls(t *testing.T) {
	const workers, each, budget = 8, 10, 15
	f := plannedFixture(t, Config{Tools: testTools, TaskToolBudget: budget}, StartInfo{}, task(1, "a", "grep"))
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		limits int
	)
	for range workers {
		wg.Go(func() {
			for range each {
				res, err := f.p.RecordToolCall(t.Context(), "grep", true, "", "", time.Millisecond)
				if err != nil {
					t.Errorf("RecordToolCall() error = %v", err)
					return
				}
				if res.DepthLimit {
					mu.Lock()
					limits++
					mu.Unlock()
				}
				f.p.Iterate()
			}
		})
	}
	wg.Wait()
	mustNil(t, "End()", f.p.End(t.Context(), events.OutcomeSuccess, ""))
	evs := f.sink.all()
	checkSeqs(t, evs)
	if err := checkConventions(evs); err != nil {
		t.Fatal(err)
	}
	counts := map[events.Type]int{}
	for _, e := range evs {
		counts[e.Type]++
	}
	if got, want := counts[events.ToolCalled], workers*each; got != want {
		t.Errorf("%d tool.called, want %d", got, want)
	}
	if got := counts[events.DepthLimitReached]; got != 1 {
		t.Errorf("%d depth_limit.reached, want 1", got)
	}
	if got, want := limits, workers*each-budget+1; got != want {
		t.Errorf("%d results with DepthLimit, want %d", got, want)
	}
	last, _ := evs[len(evs)-1].Payload()
	if d := last.(*events.SessionEndedData); d.ToolCalls != workers*each || d.Iterations != workers*each {
		t.Errorf("session.ended = %+v, want %d calls and iterations", *d, workers*each)
	}
}
