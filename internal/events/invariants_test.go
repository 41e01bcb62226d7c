package events

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"
)

// TestSessionInvariants checks that every sample session in
// testdata/events/valid tells a consistent story, so that analyzer golden
// tests built on them can trust the numbers. The conventions are listed
// above the session scripts in sessions_test.go.
func TestSessionInvariants(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdataDir, "valid", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sessions: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var evs []*Event
			for i, raw := range readLines(t, file) {
				ev, err := Decode(raw)
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				evs = append(evs, ev)
			}
			if err := checkSession(evs); err != nil {
				t.Error(err)
			}
		})
	}
}

func checkSession(evs []*Event) error {
	second := 1 // the first event after the start that is not a model call
	for second < len(evs) && evs[second].Type == ModelCalled {
		second++
	}
	if second >= len(evs) || evs[0].Type != SessionStarted || evs[second].Type != PlanCreated {
		return fmt.Errorf("a session starts with %s, %s (model calls between them aside)", SessionStarted, PlanCreated)
	}
	var (
		started   *SessionStartedData
		plan      []Task
		replans   int64
		calls     int64
		failed    int64
		taskCalls = map[int64]int64{}
		ids       = map[string]bool{}
		usage     *Usage // the model calls' totals
	)
	hintOf := func(id int64) (*string, error) {
		i := slices.IndexFunc(plan, func(t Task) bool { return t.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("task %d is not in the current plan", id)
		}
		return plan[i].ToolHint, nil
	}
	for i, ev := range evs {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("seq %d (%s): %s", ev.Seq, ev.Type, fmt.Sprintf(format, args...))
		}
		if ev.Seq != int64(i+1) {
			return fail("seq %d, want %d", ev.Seq, i+1)
		}
		if ev.Source != evs[0].Source || ev.Subject != evs[0].Subject {
			return fail("source/subject %s/%s differ from the first event's", ev.Source, ev.Subject)
		}
		if i > 0 && !ev.Time.After(evs[i-1].Time) {
			return fail("time %v is not after the previous event's", ev.Time)
		}
		id, err := uuid.Parse(ev.ID)
		if err != nil || id.Version() != 7 || ids[ev.ID] {
			return fail("id %q is not a fresh UUIDv7", ev.ID)
		}
		if sec, nsec := id.Time().UnixTime(); sec*1000+nsec/1e6 != ev.Time.UnixMilli() {
			return fail("id %s time differs from the event time", ev.ID)
		}
		ids[ev.ID] = true
		if ev.Type == SessionEnded && i != len(evs)-1 {
			return fail("session.ended is not the last event")
		}
		if (ev.Type == SessionStarted) != (i == 0) || (ev.Type == PlanCreated) != (i == second) {
			return fail("session.started and plan.created come once, first")
		}
		p, err := ev.Payload()
		if err != nil {
			return fail("%v", err)
		}
		switch d := p.(type) {
		case *SessionStartedData:
			started = d
			if d.Agent != ev.Agent() {
				return fail("agent %q, want the source's %q", d.Agent, ev.Agent())
			}
		case *PlanCreatedData:
			plan = d.Tasks
			if (d.Origin == OriginEmpty) != (len(d.Tasks) == 0) || (d.Origin == OriginFallback) != (d.ParseError != "") {
				return fail("origin %s does not fit %d tasks, parse_error %q", d.Origin, len(d.Tasks), d.ParseError)
			}
		case *HintStrippedData:
			hint, err := hintOf(d.TaskID)
			if err != nil || (hint != nil && (d.Reason != StripRule || *hint == d.ToolHint)) {
				return fail("the stripped task must be in the plan with tool_hint null, or a rule's replacement (%v)", err)
			}
			j := i - 1
			for evs[j].Type == HintStripped {
				j--
			}
			want := map[Type]Phase{PlanCreated: PhasePlan, PlanUpdated: PhaseReplan}[evs[j].Type]
			if d.Phase != want {
				return fail("phase %s, want %s: hint.stripped follows its plan event", d.Phase, want)
			}
			if d.Reason == StripRule && !slices.Contains(started.Rules, d.RuleID) {
				return fail("rule_id %q is not among the session's rules %v", d.RuleID, started.Rules)
			}
			if d.Reason == StripUnavailable && slices.Contains(started.Tools, d.ToolHint) {
				return fail("hint %q is available, yet stripped as unavailable", d.ToolHint)
			}
		case *PlanUpdatedData:
			replans++
			if d.Replan != replans || d.OverCap != (d.Replan >= 3) {
				return fail("replan %d over_cap %v, want %d, %v (cap 3)", d.Replan, d.OverCap, replans, replans >= 3)
			}
			if !d.Valid {
				if len(d.Tasks)+len(d.Kept)+len(d.Dropped) != 0 || d.Error == "" {
					return fail("a rejected replan has no tasks, kept or dropped, and an error")
				}
				break
			}
			for _, task := range d.Dropped {
				if slices.Contains(d.Kept, task.ID) || !slices.ContainsFunc(plan, func(p Task) bool { return p == task || p.ID == task.ID }) {
					return fail("dropped task %d was not in the plan, or is kept", task.ID)
				}
			}
			if len(d.Kept)+len(d.Dropped) != len(plan) {
				return fail("kept %v and dropped %d tasks do not make up the previous %d", d.Kept, len(d.Dropped), len(plan))
			}
			plan = d.Tasks
		case *ToolCalledData:
			calls++
			if !d.OK {
				failed++
				if d.Error == "" {
					return fail("a failed call has an error")
				}
			}
			if d.Control != (d.Tool == "complete_task" || d.Tool == "update_task_plan") {
				return fail("tool %s control %v", d.Tool, d.Control)
			}
			if !slices.Contains(started.Tools, d.Tool) {
				return fail("tool %s is not among the session's tools", d.Tool)
			}
			if d.Tool == "update_task_plan" {
				prev, ok := mustPayload[*PlanUpdatedData](evs, i)
				if !ok || d.TaskID != nil || d.OK != prev.Valid {
					return fail("update_task_plan follows its plan.updated (and stripped hints), task_id null, ok = valid")
				}
			}
			if d.TaskID == nil {
				if d.Hint != nil {
					return fail("hint without a task")
				}
				break
			}
			taskCalls[*d.TaskID]++
			hint, err := hintOf(*d.TaskID)
			if err != nil {
				return fail("%v", err)
			}
			if (hint == nil) != (d.Hint == nil) || hint != nil && *hint != *d.Hint {
				return fail("hint differs from the task's tool_hint")
			}
		case *TaskCompletedData:
			prev, ok := payloadAt[*ToolCalledData](evs, i-1)
			if !ok || prev.Tool != "complete_task" || prev.TaskID == nil || *prev.TaskID != d.TaskID {
				return fail("task.completed follows its complete_task call")
			}
			if d.ToolCalls != taskCalls[d.TaskID] {
				return fail("tool_calls %d, want %d", d.ToolCalls, taskCalls[d.TaskID])
			}
			if d.Completion != CompletionFailure {
				for j := range plan {
					if plan[j].ID == d.TaskID {
						plan[j].Completed = true
					}
				}
			}
		case *DepthLimitReachedData:
			if d.ToolCalls != taskCalls[d.TaskID] || d.ToolCalls < d.Limit {
				return fail("tool_calls %d, want %d and at least the limit %d", d.ToolCalls, taskCalls[d.TaskID], d.Limit)
			}
		case *ModelCalledData:
			if usage == nil {
				usage = &Usage{InputTokens: new(int64), OutputTokens: new(int64), CachedInputTokens: new(int64)}
			}
			if d.InputTokens == nil || d.OutputTokens == nil || d.CachedInputTokens == nil || *d.CachedInputTokens > *d.InputTokens {
				return fail("every sample model call reports its tokens, cached ones a part of the input")
			}
			usage.ModelCalls++
			*usage.InputTokens += *d.InputTokens
			*usage.OutputTokens += *d.OutputTokens
			*usage.CachedInputTokens += *d.CachedInputTokens
			usage.ModelMS += d.DurationMS
		case *SessionEndedData:
			want := SessionEndedData{
				Outcome: d.Outcome, Replans: replans, ToolCalls: calls, FailedToolCalls: failed,
				Iterations: calls + 1, DurationMS: ev.Time.Sub(evs[0].Time).Milliseconds(), Feedback: d.Feedback,
			}
			got := *d
			got.Usage = nil
			if got != want {
				return fail("%+v, want %+v", got, want)
			}
			if (usage == nil) != (d.Usage == nil) || usage != nil && !reflect.DeepEqual(*usage, *d.Usage) {
				return fail("usage %+v, want the model calls' totals %+v", d.Usage, usage)
			}
		}
	}
	return nil
}

func payloadAt[T any](evs []*Event, i int) (T, bool) {
	var zero T
	if i < 0 {
		return zero, false
	}
	p, err := evs[i].Payload()
	if err != nil {
		return zero, false
	}
	v, ok := p.(T)
	return v, ok
}

// mustPayload finds the event before i, skipping hint.stripped events.
func mustPayload[T any](evs []*Event, i int) (T, bool) {
	j := i - 1
	for j >= 0 && evs[j].Type == HintStripped {
		j--
	}
	return payloadAt[T](evs, j)
}
