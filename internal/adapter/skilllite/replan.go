package skilllite

import (
	"slices"
	"strings"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// This file turns task_plan lines and update_task_plan calls into
// agent.plan.created, agent.plan.updated and agent.hint.stripped events.

// replanCap is SkillLite's soft cap on replans: from the third call that
// reaches the handler, its result carries a "⚠️ You have now replanned"
// note (skilllite-agent/src/agent_loop/execution.rs:254-288).
const replanCap = 3

// handlerErrors start the errors of update_task_plan's handler
// (agent_loop/helpers.rs:48-141): the call reached it, and SkillLite counted
// it as a replan (execution.rs:273). Any other error comes from the
// registry's argument validation or permission check, before the handler
// (extensions/registry.rs:1016-1047): not counted.
var handlerErrors = []string{
	"Invalid JSON:",
	"'tasks' must be a JSON array",
	"Missing required field: 'tasks'",
	"Task list cannot be empty",
}

func reachedHandler(err string) bool {
	return slices.ContainsFunc(handlerErrors, func(p string) bool { return strings.HasPrefix(err, p) })
}

func (t *Translator) taskPlan(tasks []events.Task) error {
	tr := t.turn
	if c := tr.open; c != nil && c.name == "update_task_plan" && !c.skipped && tr.planned {
		// The handler's plan, sent before its result (helpers.rs:161).
		c.planLine, c.planSeen = tasks, true
		return nil
	}
	if !tr.planned && tr.source != sourceFile {
		tr.planned = true
		tr.firstTasks = tasks
		tr.hasTasks = len(tasks) > 0
		if _, err := tr.track.Apply(plandialect.SnapshotOf(tasks)); err != nil {
			return err
		}
		tr.listed(tasks)
		origin := events.OriginModel
		switch {
		case len(tasks) == 0:
			origin = events.OriginEmpty
			tr.emptyPlan = len(tr.out) // a plan file may take its place (planfile.go)
		case tr.fallback(tasks):
			origin = events.OriginFallback
		}
		t.record(events.PlanCreated, agent.PlanCreated{Tasks: slices.Clone(tasks), Origin: origin})
		for _, task := range tasks {
			if task.Completed {
				tr.complete(task.ID, nil)
			}
		}
		t.drain()
		return nil
	}
	// A task_plan outside an update_task_plan call: SkillLite sends none,
	// a recorder may. After a plan file became the session's plan, the
	// list's first plan with a task is compared with it (the takeover); one
	// without a task does not claim the session (planfile.go).
	tr.planned = true
	if tr.source == sourceFile && len(tasks) == 0 {
		t.n.Ignored++
		return nil
	}
	tr.hasTasks = tr.hasTasks || len(tasks) > 0
	r, err := tr.track.Apply(plandialect.SnapshotOf(tasks))
	if err != nil {
		return err
	}
	tr.listed(tasks)
	switch r.Kind {
	case plandialect.Replanned:
		tr.renewed(r.Added)
		tr.attempts++
		t.record(events.PlanUpdated, agent.PlanUpdated{
			Replan: tr.attempts, Trigger: tr.trigger, Tasks: slices.Clone(tasks),
			Kept: r.Kept, Dropped: plandialect.EventTasks(r.Dropped), OverCap: tr.counted >= replanCap, Valid: true,
		})
	}
	for _, id := range r.Completed {
		tr.complete(id, nil)
	}
	t.drain()
	return nil
}

// fallback reports whether tasks is SkillLite's fallback plan, made when
// the planning answer did not parse: one task, the user's message, no hint
// (skilllite-agent/src/task_planner.rs:318-343). Only a recorded request
// shows the message.
func (tr *turn) fallback(tasks []events.Task) bool {
	return tr.hasGoal && len(tasks) == 1 && tasks[0].Description == tr.goal && tasks[0].ToolHint == nil
}

// planCall emits the replan attempt of update_task_plan call c, settled, and
// its agent.tool.called.
func (t *Translator) planCall(c *call) {
	tr := t.turn
	reason := c.reason
	switch {
	case c.planSeen:
		tr.counted++
		t.acceptedReplan(c, reason)
	default:
		why := c.res.err
		if c.res.ok {
			// SkillLite always sends the plan before a success.
			why = "the call succeeded but no task_plan followed"
		}
		if !c.res.ok && reachedHandler(c.res.err) || c.res.ok {
			tr.counted++
		}
		tr.attempts++
		t.record(events.PlanUpdated, agent.PlanUpdated{
			Replan: tr.attempts, Trigger: c.trigger, Reason: reason,
			OverCap: tr.counted >= replanCap, Valid: false, Error: truncate(why, maxErrorLen),
		})
	}
	t.recordCall(c)
}

// acceptedReplan emits the agent.plan.updated of an accepted call, and an
// agent.hint.stripped per hint it proposed that the plan SkillLite kept
// does not have (sanitised away as unavailable: task_planner.rs:163-183).
func (t *Translator) acceptedReplan(c *call, reason string) {
	tr := t.turn
	tr.hasTasks = tr.hasTasks || len(c.planLine) > 0
	var kept []int64
	var dropped []events.Task
	var proposed []plandialect.Task
	// A plan file was the session's plan: SkillLite's own list had no
	// task, so the handler kept none and numbered the listed tasks from 1;
	// the new list is compared with the file's plan (planfile.go).
	takeover := tr.source == sourceFile
	switch {
	case c.proposed == nil:
	case takeover:
		if r, err := t.reg.NewTracker().Apply(*c.proposed); err == nil {
			proposed = r.Tasks
		}
	default:
		r, err := tr.track.Apply(*c.proposed)
		if err == nil {
			kept, dropped = r.Kept, plandialect.EventTasks(r.Dropped)
			proposed = r.Tasks
			tr.renewed(r.Added)
		}
	}
	// The plan in force is the one SkillLite kept: its sanitised hints, and
	// any task it added (auto_enhance_tasks, task_planner.rs:454-475).
	r, err := tr.track.Apply(plandialect.SnapshotOf(c.planLine))
	if err == nil && (c.proposed == nil || takeover) {
		kept, dropped = r.Kept, plandialect.EventTasks(r.Dropped)
		tr.renewed(r.Added)
	}
	tr.listed(c.planLine)
	tr.attempts++
	t.record(events.PlanUpdated, agent.PlanUpdated{
		Replan: tr.attempts, Trigger: c.trigger, Reason: reason, Tasks: slices.Clone(c.planLine),
		Kept: kept, Dropped: dropped, OverCap: tr.counted >= replanCap, Valid: true,
	})
	for _, p := range proposed {
		if p.Hint == "" || slices.Contains(kept, p.ID) {
			continue
		}
		i := slices.IndexFunc(c.planLine, func(k events.Task) bool { return k.ID == p.ID })
		if i >= 0 && c.planLine[i].ToolHint == nil {
			t.record(events.HintStripped, agent.HintStripped{
				TaskID: p.ID, ToolHint: p.Hint, Phase: events.PhaseReplan, Reason: events.StripUnavailable,
			})
		}
	}
}
