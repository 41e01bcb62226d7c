package plandialect

import "github.com/evosignal/evosignal/internal/events"

// PlanCreated returns the data of the agent.plan.created a Created result
// stands for: origin model, or empty when the plan has no task.
func (r Result) PlanCreated() events.PlanCreatedData {
	d := events.PlanCreatedData{Tasks: EventTasks(r.Tasks), Origin: events.OriginModel}
	if len(r.Tasks) == 0 {
		d.Origin = events.OriginEmpty
	}
	return d
}

// PlanUpdated returns the data of the agent.plan.updated a Replanned result
// stands for; trigger is the adapter's to say (the core cannot see what
// prompted the call).
func (r Result) PlanUpdated(trigger events.Trigger) events.PlanUpdatedData {
	return events.PlanUpdatedData{
		Replan:  r.Replan,
		Trigger: trigger,
		Valid:   true,
		Reason:  r.Reason,
		Tasks:   EventTasks(r.Tasks),
		Kept:    append([]int64{}, r.Kept...),
		Dropped: EventTasks(r.Dropped),
		OverCap: r.OverCap,
	}
}
