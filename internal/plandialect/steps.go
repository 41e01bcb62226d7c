package plandialect

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Names of the built-in incremental dialects (StepDialect).
const (
	// ClaudeCodeTaskCreate is Claude Code's TaskCreate (since 2.1.16).
	ClaudeCodeTaskCreate = "claude-code-task-create"
	// ClaudeCodeTaskUpdate is Claude Code's TaskUpdate.
	ClaudeCodeTaskUpdate = "claude-code-task-update"
	// SkillLiteCompleteTask is SkillLite's complete_task {task_id}: the
	// task is completed (the SkillLite adapter reads it itself; this is for
	// agents of SkillLite's protocol seen through OpenTelemetry).
	SkillLiteCompleteTask = "skilllite-complete-task"
	// Control is a tool that neither plans nor works: it reads the task list
	// (Claude Code's TaskList, TaskGet) or loads tools (ToolSearch). Its calls
	// are control calls and do not end a burst of plan calls.
	Control = "control"
)

// StepOp is what one incremental call does.
type StepOp int

// Step operations.
const (
	// StepRead changes nothing (a Control tool).
	StepRead StepOp = iota
	// StepCreate adds one task, pending.
	StepCreate
	// StepUpdate changes one task: its status, its subject, or deletes it.
	StepUpdate
)

// Step is one incremental task call, parsed: one task created or changed.
type Step struct {
	Op StepOp
	// ID is the task's id as the agent numbers it (≥ 1): for StepCreate it
	// comes from the call's result, which is where the agent assigns it.
	ID int64
	// Subject is the created task's subject (StepCreate) or the new subject
	// ("" for unchanged, StepUpdate).
	Subject string
	// Status is the new status (StepUpdate; "" for unchanged).
	Status Status
	// Delete: the task is deleted (StepUpdate with status "deleted").
	Delete bool
}

// StepDialect reads one kind of incremental task call: its JSON arguments
// and its JSON result (the agent assigns a created task's id there). It
// keeps no state. Errors are *ArgsError.
type StepDialect interface {
	Name() string
	ParseStep(args, result []byte) (Step, error)
}

// builtinSteps holds the incremental dialects a Registry can name.
var builtinSteps = map[string]StepDialect{
	ClaudeCodeTaskCreate:  taskCreate{},
	ClaudeCodeTaskUpdate:  taskUpdate{},
	SkillLiteCompleteTask: completeTask{},
	Control:               control{},
}

// completeTask reads complete_task {task_id: integer ≥ 1} (a numeric
// string is taken too), a StepUpdate to completed.
type completeTask struct{}

func (completeTask) Name() string { return SkillLiteCompleteTask }

func (completeTask) ParseStep(b, _ []byte) (Step, error) {
	a := args{dialect: SkillLiteCompleteTask}
	m, err := a.root(b)
	if err != nil {
		return Step{}, err
	}
	raw, ok := m["task_id"]
	if !ok {
		return Step{}, a.fail("/task_id", "missing")
	}
	var id int64
	if err := json.Unmarshal(raw, &id); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return Step{}, a.fail("/task_id", "not an integer")
		}
		if id, err = strconv.ParseInt(s, 10, 64); err != nil {
			return Step{}, a.fail("/task_id", "task id %q is not an integer", s)
		}
	}
	if id < 1 || id > maxID {
		return Step{}, a.fail("/task_id", "task id %d is not positive", id)
	}
	return Step{Op: StepUpdate, ID: id, Status: Completed}, nil
}

// taskCreate reads TaskCreate {subject, description, activeForm?,
// metadata?} (subject and description required, as Claude Code 2.1.332's
// schema states them) and its result {"task": {"id": "1", …}}.
type taskCreate struct{}

func (taskCreate) Name() string { return ClaudeCodeTaskCreate }

func (taskCreate) ParseStep(b, result []byte) (Step, error) {
	a := args{dialect: ClaudeCodeTaskCreate}
	m, err := a.root(b)
	if err != nil {
		return Step{}, err
	}
	s := Step{Op: StepCreate}
	if s.Subject, err = a.str(m, "subject", "", false); err != nil {
		return Step{}, err
	}
	if s.Subject == "" {
		return Step{}, a.fail("/subject", "empty subject")
	}
	if _, err = a.str(m, "description", "", false); err != nil {
		return Step{}, err
	}
	r := args{dialect: ClaudeCodeTaskCreate + " result"}
	rm, err := r.root(result)
	if err != nil {
		return Step{}, err
	}
	raw, ok := rm["task"]
	if !ok {
		return Step{}, r.fail("/task", "missing: the created task's id is not known")
	}
	task, err := r.object(raw, "/task")
	if err != nil {
		return Step{}, err
	}
	if s.ID, err = taskID(r, task, "id", "/task"); err != nil {
		return Step{}, err
	}
	return s, nil
}

// taskUpdate reads TaskUpdate {taskId, status?, subject?, description?,
// activeForm?, addBlocks?, addBlockedBy?, owner?, metadata?}: status one of
// pending, in_progress, completed, or deleted. Only taskId, status and
// subject matter to the plan; the rest is tolerated and ignored.
type taskUpdate struct{}

func (taskUpdate) Name() string { return ClaudeCodeTaskUpdate }

func (taskUpdate) ParseStep(b, _ []byte) (Step, error) {
	a := args{dialect: ClaudeCodeTaskUpdate}
	m, err := a.root(b)
	if err != nil {
		return Step{}, err
	}
	s := Step{Op: StepUpdate}
	if s.ID, err = taskID(a, m, "taskId", ""); err != nil {
		return Step{}, err
	}
	if s.Subject, err = a.str(m, "subject", "", true); err != nil {
		return Step{}, err
	}
	status, err := a.str(m, "status", "", true)
	if err != nil {
		return Step{}, err
	}
	switch st := Status(status); {
	case status == "":
	case status == "deleted":
		s.Delete = true
	case st.Valid():
		s.Status = st
	default:
		return Step{}, a.fail("/status", "unknown status %q", status)
	}
	return s, nil
}

// taskID reads a task id, a string of digits as Claude Code gives them
// ("1", "2", …).
func taskID(a args, m map[string]json.RawMessage, name, path string) (int64, error) {
	s, err := a.str(m, name, path, false)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 || id > maxID {
		return 0, a.fail(path+"/"+name, "task id %q is not a positive integer", s)
	}
	return id, nil
}

// control reads any call: it changes nothing.
type control struct{}

func (control) Name() string                        { return Control }
func (control) ParseStep(_, _ []byte) (Step, error) { return Step{Op: StepRead}, nil }

// StepTracker follows one session's incremental task list (docs/plan-
// dialects.md, "Incremental task tools") on top of the session's Tracker.
// Steps change a working list; Flush compares it with the plan in force,
// through the Tracker, once a real tool call (or the end of the session)
// shows that the burst of plan calls before it is over. So the tasks
// created before the first real call are one plan (Created), a burst of
// revisions is one replan, and a change undone within its burst is nothing.
// Not safe for concurrent use.
type StepTracker struct {
	tr   *Tracker
	list []Task // the working list, in creation order
	held bool   // steps applied to list since the last Flush
}

// NewStepTracker returns a StepTracker classifying through tr. Use one per
// session, and tr for nothing else.
func NewStepTracker(tr *Tracker) *StepTracker {
	return &StepTracker{tr: tr, list: tr.Plan()}
}

// Held reports whether steps wait for a Flush.
func (st *StepTracker) Held() bool { return st.held }

// Finishes reports whether s would create a task while the steps held
// have completed every task of the request: the caller flushes first, so
// that the finish is seen and the new task begins the next request
// (Config.Requests) instead of riding along one burst with the finish.
func (st *StepTracker) Finishes(s Step) bool {
	return st.held && s.Op == StepCreate && finished(st.tr.own(st.list))
}

// finished reports whether ts has a task and every task is completed.
func finished(ts []Task) bool {
	return len(ts) > 0 && !slices.ContainsFunc(ts, func(t Task) bool { return !t.Done() })
}

// Step applies s to the working list; nothing is classified until Flush.
// It fails (ErrPlan), changing nothing, on a task created twice or an
// update of a task the session never created.
func (st *StepTracker) Step(s Step) error {
	switch s.Op {
	case StepRead:
		return nil
	case StepCreate:
		if st.find(s.ID) >= 0 {
			return fmt.Errorf("task %d created twice: %w", s.ID, ErrPlan)
		}
		st.list = append(st.list, Task{ID: s.ID, Description: s.Subject, Status: Pending})
	case StepUpdate:
		i := st.find(s.ID)
		if i < 0 {
			return fmt.Errorf("update of task %d, never created: %w", s.ID, ErrPlan)
		}
		switch {
		case s.Delete:
			st.list = slices.Delete(st.list, i, i+1)
		default:
			if s.Subject != "" {
				st.list[i].Description = s.Subject
			}
			if s.Status != "" {
				st.list[i].Status = s.Status
			}
		}
	default:
		return fmt.Errorf("step op %d: %w", s.Op, ErrPlan)
	}
	st.held = true
	return nil
}

func (st *StepTracker) find(id int64) int {
	return slices.IndexFunc(st.list, func(t Task) bool { return t.ID == id })
}

// Flush classifies the steps held since the last Flush as one call: false
// when none was held. The first is Created; later ones compare the working
// list with the plan in force by id: a task created, a task not completed
// deleted, or a task not completed given a subject that does not normalise
// to its old one is Replanned (one replan, however many steps); status
// changes alone, or deleting completed tasks, are Progressed; anything else
// (a change undone) Unchanged.
func (st *StepTracker) Flush() (Result, bool) {
	if !st.held {
		return Result{}, false
	}
	st.held = false
	t := st.tr
	if !t.created {
		return t.settle(t.create(Plan{Tasks: slices.Clone(st.list), HasIDs: true}), false), true
	}
	prev := t.plan
	next := slices.Clone(st.list)
	var r Result
	statusMoved := false
	seen := map[int64]bool{}
	for j, task := range next {
		seen[task.ID] = true
		t.maxID = max(t.maxID, task.ID)
		i := slices.IndexFunc(prev, func(p Task) bool { return p.ID == task.ID })
		if i < 0 {
			r.Added = append(r.Added, task.ID)
			if task.Done() {
				r.Completed = append(r.Completed, task.ID)
			}
			continue
		}
		before := prev[i]
		if normalize(before.Description) != normalize(task.Description) {
			if before.Done() {
				// A finished task renamed changes nothing of the course.
				next[j].Description = before.Description
			} else {
				r.Reworded = append(r.Reworded, task.ID)
			}
		}
		if task.Done() {
			r.Kept = append(r.Kept, task.ID)
		}
		if task.Status != before.Status {
			statusMoved = true
		}
		switch {
		case task.Done() && !before.Done():
			r.Completed = append(r.Completed, task.ID)
		case !task.Done() && before.Done():
			r.Reopened = append(r.Reopened, task.ID)
		}
	}
	for _, task := range prev {
		switch {
		case seen[task.ID]:
		case task.Done():
			r.Removed = append(r.Removed, task)
		default:
			r.Dropped = append(r.Dropped, task)
		}
	}
	switch {
	case len(r.Added) > 0 || len(r.Dropped) > 0 || len(r.Reworded) > 0:
		r.Kind = Replanned
		t.replans++
		r.Replan, r.OverCap = t.replans, t.overCap()
	case statusMoved || len(r.Removed) > 0:
		r.Kind, r.Kept = Progressed, nil
	default:
		r.Kind, r.Kept = Unchanged, nil
	}
	t.plan = next
	st.list = slices.Clone(next)
	r.Tasks = t.Plan()
	return t.settle(r, false), true
}
