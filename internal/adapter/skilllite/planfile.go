package skilllite

import (
	"slices"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// This file reads the plan files a SkillLite agent keeps with its file
// tools (write_file, search_replace, insert_lines on task_plan.md, …:
// Config.Files), and decides which of the session's two plan sources is
// its plan (docs/plan-dialects.md, "Two plan sources").
//
// SkillLite's own task list (task_plan, update_task_plan) is the session's
// plan as soon as it has a task. Before that — SkillLite's simple loop,
// which sends no task_plan, or a planner that listed no task, whose empty
// first plan makes SkillLite run without task mode — a plan file is read
// as a plan tool's calls are: its first version with a task is
// agent.plan.created (in place of the empty first plan, which the turn has
// not sent yet), a changed set of tasks agent.plan.updated, boxes ticked
// agent.task.completed; the call is a control call. Once the list has a
// task (an update_task_plan accepted, a recorder's task_plan), the plan
// file is no longer read: its calls are ordinary tool calls, counted in
// Counts.Quality.PlanFileSuperseded, so that a change of course the agent
// makes in both is counted once. The takeover itself is one replan, the
// one SkillLite counts.

// planSource is where a session's plan comes from.
type planSource int

const (
	sourceNone planSource = iota // no plan with a task yet
	sourceList                   // SkillLite's task list
	sourceFile                   // a plan file
)

// planFile reads call c, settled, as a plan-file operation if it is one,
// and reports whether it recorded c (as a control call): a call that also
// touched other files, or any file call once the task list is the plan, is
// left to recordCall as a real call.
func (t *Translator) planFile(c *call) bool {
	tr := t.turn
	q := &t.n.Quality
	op, ok, err := t.files.Operation(c.name, []byte(c.raw))
	switch {
	case err == nil && !ok:
		return false // not a file tool, or no plan file touched
	case tr.source == sourceList:
		if err == nil {
			q.PlanFileSuperseded++
		}
		return false
	case err != nil:
		// Whether it touched a plan file is unknown; it may have.
		q.FileCallsUnreadable++
		t.forgetFiles()
		return false
	case !c.res.ok || c.res.cancelled:
		q.PlanFileCallsFailed++
		return t.controlUnless(c, op.Other)
	}
	out, _, err := t.fileTracker().Call(c.name, []byte(c.raw))
	if err != nil {
		// Only the Tracker's ErrPlan, which Markdown plans (no ids) never
		// raise; the content is not guessed.
		q.PlanFileUnreadable++
		t.forgetFiles()
		return t.controlUnless(c, out.Other)
	}
	for _, r := range out.Results {
		switch {
		case r.Applied:
			t.filePlan(c, r.Result)
		case r.Quality == plandialect.QualityUnknownPrior:
			q.PlanFileUnknownPrior++
		case r.Quality == plandialect.QualityMismatch:
			q.PlanFileMismatch++
		case r.Quality == plandialect.QualityUnreadable:
			q.PlanFileUnreadable++
		case r.Quality == plandialect.QualityNoTasks:
			q.PlanFileNoTasks++
		case r.Quality == plandialect.QualityDeleted:
			q.PlanFileDeleted++
		}
	}
	return t.controlUnless(c, out.Other)
}

// controlUnless records plan-file call c as a control call, unless it also
// touched other files: then it is a real call, left to recordCall.
func (t *Translator) controlUnless(c *call, other []string) bool {
	if len(other) > 0 {
		return false
	}
	c.control, c.taskID, c.hint = true, nil, nil
	t.recordCall(c)
	return true
}

// filePlan emits what the plan-file call c's version was.
func (t *Translator) filePlan(c *call, r plandialect.Result) {
	tr := t.turn
	switch r.Kind {
	case plandialect.Created:
		// The files' first plan: the session's plan, replacing the empty
		// first plan of SkillLite's list, if any.
		tr.source, tr.track = sourceFile, tr.fileTrack
		if i := tr.emptyPlan; i >= 0 {
			tr.out = slices.Delete(tr.out, i, i+1)
			tr.emptyPlan = -1
		}
		t.record(events.PlanCreated, r.PlanCreated())
	case plandialect.Replanned:
		tr.attempts++
		d := r.PlanUpdated(c.trigger)
		// over_cap is SkillLite's soft cap, which counts update_task_plan
		// calls only: it never warns about a plan file.
		d.Replan, d.OverCap = tr.attempts, tr.counted >= replanCap
		t.record(events.PlanUpdated, agent.PlanUpdated(d))
	}
	for _, id := range r.Completed {
		tr.complete(id, nil)
	}
}

// fileTracker returns the turn's plan files, classified with a plan of
// their own until they are the session's plan.
func (t *Translator) fileTracker() *plandialect.FileTracker {
	tr := t.turn
	if tr.files == nil {
		tr.fileTrack = t.reg.NewTracker()
		tr.files = t.files.NewTracker(tr.fileTrack)
	}
	return tr.files
}

// forgetFiles makes every plan file's content unknown.
func (t *Translator) forgetFiles() {
	t.fileTracker()
	t.turn.files = t.files.NewTracker(t.turn.fileTrack)
}

// listed records that SkillLite's task list has a task: from now on it is
// the session's plan.
func (tr *turn) listed(tasks []events.Task) {
	if len(tasks) > 0 {
		tr.source = sourceList
	}
}
