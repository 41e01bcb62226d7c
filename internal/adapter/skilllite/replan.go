package skilllite

import (
	"context"
	"slices"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// This file turns task_plan lines and update_task_plan calls into
// agent.plan.created and agent.plan.updated events.

// replanCap is the soft cap on replans: over_cap from this ordinal on.
const replanCap = 3

// replanCall is an update_task_plan call until its replan is out.
type replanCall struct {
	call       *call
	ordinal    int64
	reason     string
	planSeen   bool // its agent.plan.updated is out
	resultSeen bool
	res        result
}

func (t *Translator) taskPlan(ctx context.Context, tasks []events.Task) error {
	tr := t.turn
	if !tr.planned {
		tr.planned = true
		tr.setPlan(tasks)
		if tr.replan != nil {
			// The first plan of the turn came from an update_task_plan
			// call: there is no previous plan to update.
			tr.replan.planSeen = true
		}
		origin := events.OriginModel
		if len(tasks) == 0 {
			origin = events.OriginEmpty
		}
		return t.emit(ctx, events.PlanCreated, agent.PlanCreated{Tasks: slices.Clone(tasks), Origin: origin})
	}
	if r := tr.replan; r != nil && !r.planSeen {
		r.planSeen = true
		if err := t.emitReplan(ctx, r.ordinal, r.reason, tasks); err != nil {
			return err
		}
		if !r.resultSeen {
			return nil
		}
		tr.replan = nil
		if err := t.emitCall(ctx, r.call, r.res); err != nil {
			return err
		}
		return t.drain(ctx)
	}
	if tr.plan.sameList(tasks) {
		for _, task := range tasks {
			if task.Completed && !tr.plan.find(task.ID).Completed {
				tr.complete(task.ID, nil)
			}
		}
		return t.drain(ctx)
	}
	tr.replans++
	return t.emitReplan(ctx, tr.replans, "", tasks)
}

// setPlan makes tasks the current plan. An id that now names another task
// (SkillLite renumbers the tasks a replan adds) starts a fresh tally.
func (tr *turn) setPlan(tasks []events.Task) {
	for _, task := range tasks {
		if old := tr.plan.find(task.ID); old == nil || !sameTask(*old, task) {
			delete(tr.completed, task.ID)
			delete(tr.taskCalls, task.ID)
			delete(tr.taskFails, task.ID)
		}
	}
	tr.plan = slices.Clone(tasks)
}

func (t *Translator) emitReplan(ctx context.Context, ordinal int64, reason string, tasks []events.Task) error {
	tr := t.turn
	kept, dropped := tr.plan.diff(tasks)
	tr.setPlan(tasks)
	return t.emit(ctx, events.PlanUpdated, agent.PlanUpdated{
		Replan: ordinal, Trigger: events.TriggerModel, Reason: reason,
		Tasks: slices.Clone(tasks), Kept: kept, Dropped: dropped,
		OverCap: ordinal >= replanCap, Valid: true,
	})
}

// finishReplan settles the open update_task_plan call: its rejected replan
// unless its task_plan came, then its agent.tool.called, failed with
// noResultWhy when its result did not come.
func (t *Translator) finishReplan(ctx context.Context, noResultWhy string) error {
	tr := t.turn
	r := tr.replan
	tr.replan = nil
	res := r.res
	if !r.resultSeen {
		tr.calls = slices.DeleteFunc(tr.calls, func(c *call) bool { return c == r.call })
		res = noResult(noResultWhy)
	}
	if !r.planSeen {
		why := res.err
		if res.ok {
			why = "the call succeeded but no task_plan followed"
		}
		if why == "" {
			why = "update_task_plan failed"
		}
		if err := t.emit(ctx, events.PlanUpdated, agent.PlanUpdated{
			Replan: r.ordinal, Trigger: events.TriggerModel, Reason: r.reason,
			OverCap: r.ordinal >= replanCap, Valid: false, Error: why,
		}); err != nil {
			return err
		}
	}
	if err := t.emitCall(ctx, r.call, res); err != nil {
		return err
	}
	return t.drain(ctx)
}
