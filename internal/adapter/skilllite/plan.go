package skilllite

import (
	"slices"

	"github.com/evosignal/evosignal/internal/events"
)

// plan is a turn's current task list, as the last task_plan line gave it,
// with completions applied.
type plan []events.Task

// current returns the task being worked on, the first one not completed,
// or nil.
func (p plan) current() *events.Task {
	for i := range p {
		if !p[i].Completed {
			return &p[i]
		}
	}
	return nil
}

// find returns task id, or nil.
func (p plan) find(id int64) *events.Task {
	for i := range p {
		if p[i].ID == id {
			return &p[i]
		}
	}
	return nil
}

// sameTask reports whether a and b are the same task of a plan: same id and
// description. SkillLite renumbers the pending tasks of a replan, so an id
// alone does not identify a task across plans.
func sameTask(a, b events.Task) bool {
	return a.ID == b.ID && a.Description == b.Description
}

// sameList reports whether next lists the tasks of p, in order, with the
// same hints: a task_plan line repeating the plan (completed flags aside)
// is progress, not a replan.
func (p plan) sameList(next []events.Task) bool {
	return slices.EqualFunc(p, next, func(a, b events.Task) bool {
		return sameTask(a, b) && equalHint(a.ToolHint, b.ToolHint)
	})
}

func equalHint(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// diff splits the tasks of p into those carried over into next (kept, by
// id) and those not (dropped), so that kept and dropped together are p.
func (p plan) diff(next []events.Task) (kept []int64, dropped []events.Task) {
	kept, dropped = []int64{}, []events.Task{}
	for _, t := range p {
		if slices.ContainsFunc(next, func(n events.Task) bool { return sameTask(t, n) }) {
			kept = append(kept, t.ID)
		} else {
			dropped = append(dropped, t)
		}
	}
	return kept, dropped
}
