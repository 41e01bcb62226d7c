package plandialect

import "github.com/evosignal/evosignal/internal/events"

// Status is a task's state in a plan version.
type Status string

// Status values. Dialects without an in-progress state (SkillLite) use
// Pending and Completed only.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
)

// Valid reports whether s is one of the Status constants.
func (s Status) Valid() bool { return s == Pending || s == InProgress || s == Completed }

// Task is one task of a parsed plan, in the core's own terms.
type Task struct {
	// ID is the task's id: as given by a dialect with ids (Plan.HasIDs), 0 in a
	// parsed plan of a dialect without; in a Result it is always ≥ 1.
	ID          int64
	Description string
	Hint        string // the planner's tool hint; "" for none or a dialect without hints
	Status      Status
	// Phase is the heading a Markdown plan file lists the task under ("" for
	// none and for the other dialects). It is not part of the task's
	// identity and not on the wire: moving a task to another phase or
	// renaming a heading is not a replan (docs/plan-dialects.md, Markdown).
	Phase string
}

// Done reports whether t is completed.
func (t Task) Done() bool { return t.Status == Completed }

// Event returns t as a task of the wire contract (schema/v1/task.json).
func (t Task) Event() events.Task {
	e := events.Task{ID: t.ID, Description: t.Description, Completed: t.Done()}
	if t.Hint != "" {
		h := t.Hint
		e.ToolHint = &h
	}
	return e
}

// EventTasks returns ts as tasks of the wire contract; never nil.
func EventTasks(ts []Task) []events.Task {
	out := make([]events.Task, len(ts))
	for i, t := range ts {
		out[i] = t.Event()
	}
	return out
}

// Plan is one plan call, parsed.
type Plan struct {
	Tasks  []Task
	Reason string // the call's reason or explanation; "" when none
	// HasIDs: the tasks carry their own ids (≥ 1, unique), which the Tracker
	// uses instead of matching descriptions.
	HasIDs bool
	// Revision: the call replaces the pending part of the plan in force
	// (SkillLite's update_task_plan): the completed tasks stay, the listed
	// tasks follow them, numbered after the highest kept id, and the agent
	// counts the call as a replan whatever it changes. Without Revision the
	// tasks are the whole plan as it now stands, statuses included.
	Revision bool
}

// SnapshotOf returns the plan an agent's own task list states, with ids
// (SkillLite's task_plan and task_progress events): the whole plan, ids
// given, status pending or completed.
func SnapshotOf(ts []events.Task) Plan {
	p := Plan{Tasks: make([]Task, len(ts)), HasIDs: true}
	for i, t := range ts {
		p.Tasks[i] = Task{ID: t.ID, Description: t.Description, Status: Pending}
		if t.ToolHint != nil {
			p.Tasks[i].Hint = *t.ToolHint
		}
		if t.Completed {
			p.Tasks[i].Status = Completed
		}
	}
	return p
}
