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
	// Replan is the ordinal of a Replanned call in the session, from 1; 0
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
	plan      []Task
	created   bool
	maxID     int64 // the highest id issued in the session
	replans   int64
}

// Replans returns the number of Replanned results so far.
func (t *Tracker) Replans() int64 { return t.replans }

// Plan returns a copy of the plan in force; nil before the first plan.
func (t *Tracker) Plan() []Task { return slices.Clone(t.plan) }

// Current returns the task a tool call made now belongs to: the first task
// of the plan in force that is in progress, else the first pending one; false
// when there is no plan or every task is completed.
func (t *Tracker) Current() (Task, bool) {
	for _, task := range t.plan {
		if task.Status == InProgress {
			return task, true
		}
	}
	for _, task := range t.plan {
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
		return t.create(p), nil
	case p.Revision:
		return t.revise(p), nil
	default:
		return t.compare(p), nil
	}
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
