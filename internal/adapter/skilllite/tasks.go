package skilllite

import (
	"context"
	"slices"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// This file completes tasks: agent.task.completed, once no call is open.

// completion is a task completed, its event waiting for the open calls.
type completion struct {
	id       int64
	reported events.Completion
	summary  string
}

func (t *Translator) progress(ctx context.Context, p taskProgress) error {
	tr := t.turn
	if !p.completed || tr.plan.find(p.taskID) == nil {
		t.n.Ignored++
		return nil
	}
	tr.complete(p.taskID, nil)
	return t.drain(ctx)
}

// complete marks task id completed and queues its agent.task.completed,
// with what the complete_task call c declared, if c is not nil.
func (tr *turn) complete(id int64, c *call) {
	if task := tr.plan.find(id); task != nil {
		task.Completed = true
	}
	if tr.completed[id] {
		return
	}
	i := slices.IndexFunc(tr.pending, func(p completion) bool { return p.id == id })
	if i < 0 {
		tr.pending = append(tr.pending, completion{id: id})
		i = len(tr.pending) - 1
	}
	if c != nil {
		tr.pending[i].reported, tr.pending[i].summary = c.reported, c.summary
	}
}

// drain emits the queued task completions once no call is open.
func (t *Translator) drain(ctx context.Context) error {
	tr := t.turn
	if len(tr.calls) > 0 {
		return nil
	}
	for len(tr.pending) > 0 {
		p := tr.pending[0]
		tr.pending = tr.pending[1:]
		tr.completed[p.id] = true
		c := events.CompletionSuccess
		if tr.taskFails[p.id] > 0 {
			c = events.CompletionPartialSuccess
		}
		if err := t.emit(ctx, events.TaskCompleted, agent.TaskCompleted{
			TaskID: p.id, Completion: c, Reported: p.reported, ToolCalls: tr.taskCalls[p.id], Summary: p.summary,
		}); err != nil {
			return err
		}
	}
	return nil
}
