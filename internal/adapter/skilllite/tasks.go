package skilllite

import (
	"slices"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// This file completes tasks: agent.task.completed, once no call is open.

// completion is a task completed, its event waiting for the open call.
type completion struct {
	id       int64
	reported events.Completion
	summary  string
}

// progress applies a task_progress line: SkillLite sends one when
// complete_task (or its auto-recovery) marks a task, with the whole plan
// after it (skilllite-agent/src/rpc.rs:411-416, agent_loop/helpers.rs:305-306,
// execution.rs:441-446).
func (t *Translator) progress(p taskProgress) error {
	tr := t.turn
	if tr.open != nil {
		tr.open.progressed = true
	}
	// While a plan file is the session's plan, SkillLite's list has no
	// task its progress could be about.
	if !p.completed || !tr.inPlan(p.taskID) && !p.hasTasks || tr.source == sourceFile {
		t.n.Ignored++
		return nil
	}
	if p.hasTasks {
		r, err := tr.track.Apply(plandialect.SnapshotOf(p.tasks))
		if err != nil {
			return err
		}
		for _, id := range r.Completed {
			tr.complete(id, nil)
		}
		t.drain()
		return nil
	}
	tr.complete(p.taskID, nil)
	t.drain()
	return nil
}

// complete marks task id completed and queues its agent.task.completed,
// with what the complete_task call c declared, if c is not nil.
func (tr *turn) complete(id int64, c *call) {
	if plan := tr.track.Plan(); slices.ContainsFunc(plan, func(task plandialect.Task) bool { return task.ID == id && !task.Done() }) {
		for i := range plan {
			if plan[i].ID == id {
				plan[i].Status = plandialect.Completed
			}
		}
		snap := plandialect.Plan{Tasks: plan, HasIDs: true}
		_, _ = tr.track.Apply(snap) // its own plan, one status changed: cannot fail
	}
	if tr.completed[id] {
		return
	}
	i := slices.IndexFunc(tr.completions, func(p completion) bool { return p.id == id })
	if i < 0 {
		tr.completions = append(tr.completions, completion{id: id})
		i = len(tr.completions) - 1
	}
	if c != nil {
		tr.completions[i].reported, tr.completions[i].summary = c.reported, c.summary
	}
}

// drain emits the queued task completions once no call is open: SkillLite
// marks a task between a call and its result.
func (t *Translator) drain() {
	tr := t.turn
	if tr.open != nil {
		return
	}
	for len(tr.completions) > 0 {
		p := tr.completions[0]
		tr.completions = tr.completions[1:]
		tr.completed[p.id] = true
		c := events.CompletionSuccess
		if tr.taskFails[p.id] > 0 {
			c = events.CompletionPartialSuccess
		}
		t.record(events.TaskCompleted, agent.TaskCompleted{
			TaskID: p.id, Completion: c, Reported: p.reported, ToolCalls: tr.taskCalls[p.id], Summary: p.summary,
		})
	}
}
