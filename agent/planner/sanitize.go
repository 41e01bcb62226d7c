package planner

import (
	"strings"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// SanitizeAndEnhance is what the planner does to every plan it accepts, the
// first (phase plan) and every replan (phase replan). It returns a copy of
// tasks with, for each task in turn:
//
//  1. a blank hint made null, and the others trimmed;
//  2. a hint that names no available tool (Config.Tools and the control
//     tools) removed: reason unavailable;
//  3. otherwise, a hint that an avoid or replace rule forbids for the task's
//     type removed, or replaced by the rule's instead when that is
//     available: reason rule, with the rule's id (the first such rule in
//     the set wins; the replacement is not checked against other rules);
//  4. a task left without a hint given the hint of the first prefer rule
//     for its type whose hint is available and not forbidden for that
//     type (no event: the plan event shows it).
//
// A replaced hint is reported as stripped (reason rule) although the plan
// event shows the task with the instead hint, not null: the contract's
// "already shows the task with tool_hint: null" holds for removals only.
//
// A task's type is its task_type, else the session's (StartInfo.TaskType);
// with neither, no rule applies. The second result lists the removals, one
// agent.hint.stripped each, in task order; the caller emits them (NewPlan
// and UpdateTaskPlan do, after the plan event). It emits nothing itself and
// does not change the planner's state.
func (p *Planner) SanitizeAndEnhance(tasks []agent.Task, phase events.Phase) ([]agent.Task, []agent.HintStripped) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sanitize(tasks, phase)
}

func (p *Planner) sanitize(tasks []agent.Task, phase events.Phase) ([]agent.Task, []agent.HintStripped) {
	out := cloneTasks(tasks)
	var strips []agent.HintStripped
	for i := range out {
		t := &out[i]
		typ := t.TaskType
		if typ == "" {
			typ = p.info.TaskType
		}
		if t.ToolHint != nil {
			hint := strings.TrimSpace(*t.ToolHint)
			t.ToolHint = nil
			switch r, forbidden := forbidding(p.cfg.Rules, typ, hint); {
			case hint == "":
			case !p.available(hint):
				strips = append(strips, agent.HintStripped{TaskID: t.ID, ToolHint: hint, Phase: phase, Reason: events.StripUnavailable})
			case forbidden:
				strips = append(strips, agent.HintStripped{TaskID: t.ID, ToolHint: hint, Phase: phase, Reason: events.StripRule, RuleID: r.ID})
				if r.Instead != "" && p.available(r.Instead) {
					t.ToolHint = ptr(r.Instead)
				}
			default:
				t.ToolHint = &hint
			}
		}
		if t.ToolHint == nil {
			if r, ok := preferred(p.cfg.Rules, typ, p.available); ok {
				t.ToolHint = ptr(r.ToolHint)
			}
		}
	}
	return out, strips
}

func (p *Planner) available(tool string) bool { return p.tools[tool] }

func ptr[T any](v T) *T { return &v }

// cloneTasks copies tasks deeply (the hints too), so that callers and the
// planner never share a task.
func cloneTasks(tasks []agent.Task) []agent.Task {
	if tasks == nil {
		return nil
	}
	out := make([]agent.Task, len(tasks))
	for i, t := range tasks {
		out[i] = cloneTask(t)
	}
	return out
}

func cloneTask(t agent.Task) agent.Task {
	if t.ToolHint != nil {
		t.ToolHint = ptr(*t.ToolHint)
	}
	return t
}
