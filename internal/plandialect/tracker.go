package plandialect

import (
	"fmt"
	"slices"
)

// Kind is what a plan call was, compared with the plan in force.
type Kind int

// Kinds of Result.
const (
	// Unchanged: nothing to emit. The call restated the plan in force, or
	// changed only the order of its tasks, the spelling of a description
	// (case, spaces, punctuation) or a hint; the plan in force takes the new
	// version all the same.
	Unchanged Kind = iota
	// Created: the first plan of the session (agent.plan.created).
	Created
	// Replanned: the set of tasks changed (agent.plan.updated, valid).
	Replanned
	// Progressed: only statuses changed, or completed tasks left the list;
	// never a replan (agent.task.completed per Result.Completed id).
	Progressed
	// Began: the first plan of the agent's next request (Config.Requests):
	// the call listed a new task when every task of the plan in force was
	// completed. The adapter ends the request in force and begins the next
	// one, whose agent.plan.created this is. Tasks holds only the new
	// request's tasks; the finished ones stay known to the tracker (so a
	// list that restates them matches them) but are left out of every
	// result from now on.
	Began
)

func (k Kind) String() string {
	switch k {
	case Unchanged:
		return "unchanged"
	case Created:
		return "created"
	case Replanned:
		return "replanned"
	case Progressed:
		return "progressed"
	case Began:
		return "began"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Result is what one plan call was. Ids are those of the plan in force after
// the call (Tasks), except Dropped and Removed, which keep the ids they had
// in the plan before.
type Result struct {
	Kind Kind
	// Tasks is the plan in force after the call, every id ≥ 1 and unique.
	Tasks []Task
	// Replan is the ordinal of a Replanned call in the request, from 1; 0
	// otherwise.
	Replan int64
	// OverCap: Replan ≥ the soft cap (with a cap).
	OverCap bool
	// Reason is the call's reason or explanation (Replanned).
	Reason string
	// Kept (Replanned only): completed tasks of the new version carried over
	// from the plan before (reworded ones, and ones completed by this very
	// call, included), in plan order. Pending tasks carried over are neither
	// kept nor dropped.
	Kept []int64
	// Dropped: tasks of the plan before, not completed there, that the new
	// version no longer lists.
	Dropped []Task
	// Removed: tasks completed in the plan before that the new version no
	// longer lists (a pruned list; not a replan on its own).
	Removed []Task
	// Added: tasks new in this version (Created: every task).
	Added []int64
	// Reworded: tasks carried over whose description was rewritten (matched
	// by similarity); they keep their id and count as a change of the set.
	Reworded []int64
	// Completed: tasks completed now that were not before (a task new in this
	// version and already completed included), in plan order.
	Completed []int64
	// Reopened: tasks completed before and no longer now.
	Reopened []int64
	// Rehinted: tasks carried over whose hint changed (not a replan).
	Rehinted []int64
}

// Tracker holds the plan in force of one session and classifies each plan
// call against it. It is not safe for concurrent use: one session's events
// arrive in order.
type Tracker struct {
	softCap   int64
	threshold float64
	requests  bool // Config.Requests
	plan      []Task
	created   bool
	maxID     int64 // the highest id issued in the session
	replans   int64 // in the request in force
	// finished: the plan in force lists a task of this request and all of
	// them are completed, or its last tasks left the list completed.
	finished bool
	// prior holds the ids of tasks of earlier requests (Began) still on the
	// list; results leave them out.
	prior map[int64]bool
}

// Replans returns the number of Replanned results in the request in force.
func (t *Tracker) Replans() int64 { return t.replans }

// Finishes reports whether applying p, a whole-list plan call, shows the
// request's plan done: every task it lists completed, or none listed
// (Claude Code prunes a finished list). An adapter holding a burst of
// plan calls applies such a call before the next one, so that the finish
// is seen.
func Finishes(p Plan) bool {
	return len(p.Tasks) == 0 || finished(p.Tasks)
}

// Finished reports whether the request's plan is done by the agent's own
// account: it listed a task, and every task it lists is completed (or the
// completed tasks were pruned from the list, as Claude Code does).
func (t *Tracker) Finished() bool { return t.finished }

// Plan returns a copy of the plan in force, the tasks of earlier requests
// left out; nil before the first plan.
func (t *Tracker) Plan() []Task { return t.own(t.plan) }

// own returns a copy of ts without the tasks of earlier requests.
func (t *Tracker) own(ts []Task) []Task {
	if len(t.prior) == 0 {
		return slices.Clone(ts)
	}
	var out []Task
	for _, task := range ts {
		if !t.prior[task.ID] {
			out = append(out, task)
		}
	}
	return out
}

// Current returns the task a tool call made now belongs to: the first task
// of the plan in force that is in progress, else the first pending one; false
// when there is no plan or every task is completed.
func (t *Tracker) Current() (Task, bool) {
	plan := t.Plan()
	for _, task := range plan {
		if task.Status == InProgress {
			return task, true
		}
	}
	for _, task := range plan {
		if task.Status == Pending {
			return task, true
		}
	}
	return Task{}, false
}

func (t *Tracker) overCap() bool { return t.softCap > 0 && t.replans >= t.softCap }

// Apply classifies p against the plan in force and makes p's version the
// plan in force. It fails, leaving the tracker as it was, on a plan it
// cannot use (ErrPlan).
func (t *Tracker) Apply(p Plan) (Result, error) {
	if err := check(p); err != nil {
		return Result{}, err
	}
	switch {
	case !t.created:
		return t.settle(t.create(p), false), nil
	case p.Revision:
		return t.settle(t.revise(p), true), nil
	default:
		return t.settle(t.compare(p), false), nil
	}
}

// settle finishes r, a result computed over the whole list with the new
// version in force: a Replanned call that adds a task when the request's
// plan was finished begins the next request (Config.Requests; never a
// SkillLite revision); the tasks of earlier requests are left out of the
// result, and a replan that only touched them is none; Finished follows.
func (t *Tracker) settle(r Result, revision bool) Result {
	if t.requests && !revision && t.finished && r.Kind == Replanned && len(r.Added) > 0 {
		return t.begin(r)
	}
	if len(t.prior) > 0 {
		r = t.scoped(r)
	}
	own := t.Plan()
	switch {
	case len(own) > 0:
		t.finished = finished(own)
	case r.Kind == Progressed && len(r.Removed) > 0:
		t.finished = true // its last tasks left the list completed
	case r.Kind != Unchanged:
		t.finished = false
	}
	return r
}

// begin makes r, a call that listed new tasks when every task of the plan
// in force was completed, the next request's first plan: the finished
// tasks it still lists become prior (a finished task listed again as not
// completed is the new request's), its replans start from 0.
func (t *Tracker) begin(r Result) Result {
	if t.prior == nil {
		t.prior = map[int64]bool{}
	}
	fresh := map[int64]bool{}
	for _, id := range append(slices.Clone(r.Added), r.Reopened...) {
		fresh[id] = true
	}
	for _, task := range t.plan {
		if !fresh[task.ID] {
			t.prior[task.ID] = true
		}
	}
	t.replans = 0
	b := Result{Kind: Began, Tasks: t.Plan()}
	for _, task := range b.Tasks {
		b.Added = append(b.Added, task.ID)
		if task.Done() {
			b.Completed = append(b.Completed, task.ID)
		}
	}
	t.finished = finished(b.Tasks)
	return b
}

// scoped leaves the tasks of earlier requests out of r; a replan left with
// no change of the request's own tasks is undone (Progressed or
// Unchanged).
func (t *Tracker) scoped(r Result) Result {
	keep := func(ids []int64) []int64 {
		return slices.DeleteFunc(ids, func(id int64) bool { return t.prior[id] })
	}
	keepTasks := func(ts []Task) []Task {
		return slices.DeleteFunc(ts, func(task Task) bool { return t.prior[task.ID] })
	}
	gone := slices.Clone(r.Removed)
	r.Tasks = t.Plan()
	r.Kept, r.Completed, r.Reopened = keep(r.Kept), keep(r.Completed), keep(r.Reopened)
	r.Rehinted, r.Reworded, r.Added = keep(r.Rehinted), keep(r.Reworded), keep(r.Added)
	r.Dropped, r.Removed = keepTasks(r.Dropped), keepTasks(r.Removed)
	for _, task := range gone {
		delete(t.prior, task.ID) // off the list for good
	}
	if r.Kind == Replanned && len(r.Added)+len(r.Dropped)+len(r.Reworded) == 0 {
		t.replans--
		r.Kind, r.Replan, r.OverCap, r.Reason, r.Kept = Unchanged, 0, false, "", nil
		if len(r.Completed)+len(r.Reopened)+len(r.Removed) > 0 {
			r.Kind = Progressed
		}
	}
	return r
}

// check reports a plan the tracker cannot use.
func check(p Plan) error {
	seen := make(map[int64]bool, len(p.Tasks))
	for i, task := range p.Tasks {
		if !task.Status.Valid() {
			return fmt.Errorf("task %d: status %q: %w", i, task.Status, ErrPlan)
		}
		if !p.HasIDs || p.Revision {
			continue
		}
		if task.ID < 1 || task.ID > maxID {
			return fmt.Errorf("task %d: id %d out of range: %w", i, task.ID, ErrPlan)
		}
		if seen[task.ID] {
			return fmt.Errorf("task %d: id %d repeated: %w", i, task.ID, ErrPlan)
		}
		seen[task.ID] = true
	}
	return nil
}

// create makes p the first plan: ids as given (HasIDs), else 1, 2, … in list
// order; a Revision's tasks all pending, as SkillLite numbers them.
func (t *Tracker) create(p Plan) Result {
	tasks := slices.Clone(p.Tasks)
	r := Result{Kind: Created}
	for i := range tasks {
		if p.Revision {
			tasks[i].Status = Pending
		}
		if !p.HasIDs || p.Revision {
			tasks[i].ID = int64(i + 1)
		}
		t.maxID = max(t.maxID, tasks[i].ID)
		r.Added = append(r.Added, tasks[i].ID)
		if tasks[i].Done() {
			r.Completed = append(r.Completed, tasks[i].ID)
		}
	}
	t.plan, t.created = tasks, true
	r.Tasks = t.Plan()
	return r
}

// revise applies a Revision as SkillLite's update_task_plan handler does:
// the completed tasks of the plan in force stay (kept), the pending ones go
// (dropped), and every listed task follows, pending, numbered after the
// highest kept id. It is always a replan.
func (t *Tracker) revise(p Plan) Result {
	r := Result{Kind: Replanned, Reason: p.Reason}
	var tasks []Task
	var next int64
	for _, task := range t.plan {
		if task.Done() {
			tasks = append(tasks, task)
			r.Kept = append(r.Kept, task.ID)
			next = max(next, task.ID)
		} else {
			r.Dropped = append(r.Dropped, task)
		}
	}
	for _, task := range p.Tasks {
		next++
		task.ID, task.Status = next, Pending
		tasks = append(tasks, task)
		r.Added = append(r.Added, task.ID)
	}
	t.maxID = max(t.maxID, next)
	t.replans++
	r.Replan, r.OverCap = t.replans, t.overCap()
	t.plan = tasks
	r.Tasks = t.Plan()
	return r
}

// compare classifies a whole-plan snapshot by matching its tasks with the
// plan in force (see match). A matched task keeps its id (or takes its
// given one); a new task takes the next id after the highest issued in the
// session (or its given one).
func (t *Tracker) compare(p Plan) Result {
	prev := t.plan
	m := match(prev, p.Tasks, p.HasIDs, t.threshold)
	tasks := slices.Clone(p.Tasks)
	var r Result
	for j := range tasks {
		switch i := m.prevOf[j]; {
		case p.HasIDs:
		case i >= 0:
			tasks[j].ID = prev[i].ID
		default:
			tasks[j].ID = t.maxID + 1
		}
		t.maxID = max(t.maxID, tasks[j].ID)
	}
	for j, task := range tasks {
		i := m.prevOf[j]
		if i < 0 {
			r.Added = append(r.Added, task.ID)
			if task.Done() {
				r.Completed = append(r.Completed, task.ID)
			}
			continue
		}
		before := prev[i]
		if m.tier[j] == tierReworded {
			r.Reworded = append(r.Reworded, task.ID)
		}
		if task.Done() {
			r.Kept = append(r.Kept, task.ID)
		}
		switch {
		case task.Done() && !before.Done():
			r.Completed = append(r.Completed, task.ID)
		case !task.Done() && before.Done():
			r.Reopened = append(r.Reopened, task.ID)
		}
		if task.Hint != before.Hint {
			r.Rehinted = append(r.Rehinted, task.ID)
		}
	}
	statusMoved := false
	for j, task := range tasks {
		if i := m.prevOf[j]; i >= 0 && task.Status != prev[i].Status {
			statusMoved = true
		}
	}
	for i, task := range prev {
		if m.taken[i] {
			continue
		}
		if task.Done() {
			r.Removed = append(r.Removed, task)
		} else {
			r.Dropped = append(r.Dropped, task)
		}
	}
	switch {
	case len(r.Added) > 0 || len(r.Dropped) > 0 || len(r.Reworded) > 0:
		r.Kind = Replanned
		r.Reason = p.Reason
		t.replans++
		r.Replan, r.OverCap = t.replans, t.overCap()
	case statusMoved || len(r.Removed) > 0:
		r.Kind, r.Kept = Progressed, nil
	default:
		r.Kind, r.Kept = Unchanged, nil
	}
	t.plan = tasks
	r.Tasks = t.Plan()
	return r
}
