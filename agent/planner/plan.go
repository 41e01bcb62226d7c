package planner

import (
	"context"
	"fmt"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// NewPlan records the session's first plan from the model's answer raw (see
// Parse). An answer that does not parse falls back to one task made from
// goal, with no hint (origin fallback, parse_error the parse error); an
// empty list is a plan with no tasks (origin empty); otherwise origin model.
// The plan is sanitised (SanitizeAndEnhance, phase plan), then
// agent.plan.created and the agent.hint.stripped events are emitted, in
// that order. The Result is always accepted and has no message.
func (p *Planner) NewPlan(ctx context.Context, goal, raw string) (Result, error) {
	tasks, err := Parse(raw)
	if err != nil {
		fallback := []agent.Task{{ID: 1, Description: goal}}
		return p.createPlan(ctx, fallback, events.OriginFallback, err.Error())
	}
	return p.createPlan(ctx, tasks, originOf(tasks), "")
}

// NewPlanFromTasks is NewPlan for an agent that gets the plan as structured
// output: origin model, or empty for no tasks. The tasks are numbered from 1
// in order and not completed, whatever their ids and flags.
func (p *Planner) NewPlanFromTasks(ctx context.Context, tasks []agent.Task) (Result, error) {
	tasks = cloneTasks(tasks)
	for i := range tasks {
		tasks[i].ID = int64(i + 1)
		tasks[i].Completed = false
	}
	return p.createPlan(ctx, tasks, originOf(tasks), "")
}

func originOf(tasks []agent.Task) events.Origin {
	if len(tasks) == 0 {
		return events.OriginEmpty
	}
	return events.OriginModel
}

func (p *Planner) createPlan(ctx context.Context, tasks []agent.Task, origin events.Origin, parseErr string) (Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.check("new plan", false); err != nil {
		return Result{}, err
	}
	if p.phase == planned {
		return Result{}, fmt.Errorf("new plan: %w: the session has a plan; replan with UpdateTaskPlan", ErrSequence)
	}
	tasks, strips := p.sanitize(tasks, events.PhasePlan)
	p.phase = planned
	p.tasks = tasks
	e := emitter{ctx: ctx, s: p.s}
	e.emit(events.PlanCreated, agent.PlanCreated{Tasks: cloneTasks(tasks), Origin: origin, ParseError: parseErr})
	e.strips(strips)
	return p.result(""), e.err("new plan")
}
