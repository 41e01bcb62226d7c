package planner

import (
	"context"
	"fmt"
	"slices"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// What agent.plan.updated's error and the rejected call's error say.
const (
	errEmptyList   = "empty task list"
	errNoNewTask   = "no new task: every task listed is already completed"
	errKindInvalid = "invalid_plan"
)

// UpdateTaskPlan handles an update_task_plan call: tasks is the model's new
// list, reason its stated reason, trigger what prompted the call ("" infers
// it: depth_limit when the current task used up its budget, else model).
//
// Every call counts: the replan ordinal increments and over_cap is ordinal
// >= the soft cap, accepted or not. The completed tasks of the current plan
// are kept, in order; the pending ones are dropped. Each listed task is new,
// except one marked completed whose id is a kept task's (a model restating
// the done work): it is skipped. New tasks are numbered after the highest
// kept id, as the seed agent does (so a dropped task's id is reused by a new
// task: a task is identified by its id within one plan version), not
// completed, and sanitised
// (SanitizeAndEnhance, phase replan). The new plan is the kept tasks, then
// the new ones.
//
// With no new task the call is rejected: the plan stays, and the Result is
// not accepted. Either way agent.plan.updated is emitted (with valid, and
// error when rejected), then any agent.hint.stripped, then the call as a
// control agent.tool.called (ok = accepted). Over the cap, the message
// tells the model to stop replanning and execute the plan step by step.
func (p *Planner) UpdateTaskPlan(ctx context.Context, tasks []agent.Task, reason string, trigger events.Trigger) (Result, error) {
	if trigger != "" && !trigger.Valid() {
		return Result{}, fmt.Errorf("update task plan: trigger %q is not valid", trigger)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.check("update task plan", true); err != nil {
		return Result{}, err
	}
	if trigger == "" {
		trigger = events.TriggerModel
		if i := p.current(); i >= 0 && p.statsOf(p.tasks[i].ID).atCap {
			trigger = events.TriggerDepthLimit
		}
	}
	p.replans++
	p.calls++
	d := agent.PlanUpdated{Replan: p.replans, Trigger: trigger, Reason: reason, OverCap: p.replans >= int64(p.cfg.ReplanSoftCap)}
	step := fmt.Sprintf("update task plan #%d", p.replans)
	e := emitter{ctx: ctx, s: p.s}
	call := agent.ToolCalled{Tool: ToolUpdateTaskPlan, OK: true, Control: true}

	var kept, pending []agent.Task
	for _, t := range p.tasks {
		if t.Completed {
			kept = append(kept, t)
		} else {
			pending = append(pending, t)
		}
	}
	var fresh []agent.Task
	for _, t := range tasks {
		if t.Completed && slices.ContainsFunc(kept, func(k agent.Task) bool { return k.ID == t.ID }) {
			continue
		}
		fresh = append(fresh, t)
	}

	if len(fresh) == 0 {
		p.failed++
		d.Valid = false
		d.Error = errEmptyList
		if len(tasks) > 0 {
			d.Error = errNoNewTask
		}
		call.OK, call.ErrorKind, call.Error = false, errKindInvalid, d.Error
		e.emit(events.PlanUpdated, d)
		e.emit(events.ToolCalled, call)
		res := p.result(msgRejectedEmptyPlan)
		res.Accepted = false
		if d.OverCap {
			res.Message += "\n\n" + p.softCapMessage()
		}
		res.OverCap = d.OverCap
		return res, e.err(step)
	}

	fresh = cloneTasks(fresh)
	var next int64
	for _, t := range kept {
		next = max(next, t.ID)
	}
	for i := range fresh {
		next++
		fresh[i].ID = next
		fresh[i].Completed = false
	}
	fresh, strips := p.sanitize(fresh, events.PhaseReplan)
	p.tasks = append(cloneTasks(kept), fresh...)

	d.Valid = true
	d.Tasks = cloneTasks(p.tasks)
	d.Kept = make([]int64, len(kept))
	for i, t := range kept {
		d.Kept[i] = t.ID
	}
	d.Dropped = cloneTasks(pending)
	e.emit(events.PlanUpdated, d)
	e.strips(strips)
	e.emit(events.ToolCalled, call)

	var msg string
	if d.OverCap {
		msg = p.softCapMessage()
	} else {
		cur := p.tasks[p.current()] // a new task is pending
		msg = fmt.Sprintf(msgPlanUpdated, cur.ID, cur.Description)
	}
	res := p.result(msg)
	res.OverCap = d.OverCap
	return res, e.err(step)
}

func (p *Planner) softCapMessage() string {
	i := p.current()
	if i < 0 {
		return fmt.Sprintf(msgSoftCapNoTask, p.replans, p.cfg.ReplanSoftCap)
	}
	return fmt.Sprintf(msgSoftCap, p.replans, p.cfg.ReplanSoftCap, p.tasks[i].ID, p.tasks[i].Description)
}
