package plandialect

import (
	"encoding/json"
	"strconv"
)

// Names of the built-in dialects.
const (
	SkillLite  = "skilllite"   // SkillLite update_task_plan
	ClaudeCode = "claude-code" // Claude Code TodoWrite
	Codex      = "codex"       // Codex CLI update_plan
	DeepAgents = "deepagents"  // LangChain deep agents write_todos
)

// Dialect reads one kind of plan tool call. Parse turns the call's raw JSON
// arguments into a Plan, or fails with an *ArgsError; it keeps no state, so
// one Dialect serves every session.
//
// A new input format implements Dialect and joins the builtin table below.
// MarkdownDialect is not in it: it reads a plan file's content, which a
// FileTracker rebuilds from file tool calls, not a plan tool's arguments.
type Dialect interface {
	Name() string
	Parse(args []byte) (Plan, error)
}

// builtin holds the dialects a Registry can name.
var builtin = map[string]Dialect{
	SkillLite:  skillLite{},
	ClaudeCode: todoList{name: ClaudeCode},
	Codex:      codex{},
	DeepAgents: todoList{name: DeepAgents},
}

// skillLite reads SkillLite's update_task_plan {tasks:[{id, description,
// tool_hint?, completed?}], reason?}, as its tool schema states it
// (skilllite-agent extensions/builtin/chat_data.rs): tasks required and not
// empty (the handler refuses an empty list), each task an object with a
// numeric id and a string description. The call is a Revision: SkillLite
// ignores the ids and completed flags it is given and renumbers the listed
// tasks after the kept completed ones (agent_loop/helpers.rs).
type skillLite struct{}

func (skillLite) Name() string { return SkillLite }

func (skillLite) Parse(b []byte) (Plan, error) {
	a := args{dialect: SkillLite}
	m, err := a.root(b)
	if err != nil {
		return Plan{}, err
	}
	items, err := a.array(m, "tasks", "")
	if err != nil {
		return Plan{}, err
	}
	if len(items) == 0 {
		return Plan{}, a.fail("/tasks", "task list cannot be empty")
	}
	p := Plan{Tasks: make([]Task, len(items)), Revision: true}
	if p.Reason, err = a.str(m, "reason", "", true); err != nil {
		return Plan{}, err
	}
	for i, raw := range items {
		path := "/tasks/" + strconv.Itoa(i)
		if p.Tasks[i], err = skillLiteTask(a, raw, path); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}

func skillLiteTask(a args, raw json.RawMessage, path string) (Task, error) {
	t, err := a.object(raw, path)
	if err != nil {
		return Task{}, err
	}
	var task Task
	if task.ID, err = a.number(t, "id", path); err != nil {
		return Task{}, err
	}
	if task.Description, err = a.str(t, "description", path, false); err != nil {
		return Task{}, err
	}
	if task.Hint, err = a.str(t, "tool_hint", path, true); err != nil {
		return Task{}, err
	}
	done, err := a.boolean(t, "completed", path)
	if err != nil {
		return Task{}, err
	}
	task.Status = Pending
	if done {
		task.Status = Completed
	}
	return task, nil
}

// todoList reads {todos:[{content, status, …}]}: Claude Code's TodoWrite
// (whose todos also carry activeForm, and in older versions id and priority)
// and LangChain deep agents' write_todos. Members other than content and
// status are tolerated and ignored: ids come from matching descriptions.
type todoList struct{ name string }

func (d todoList) Name() string { return d.name }

func (d todoList) Parse(b []byte) (Plan, error) {
	a := args{dialect: d.name}
	m, err := a.root(b)
	if err != nil {
		return Plan{}, err
	}
	items, err := a.array(m, "todos", "")
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Tasks: make([]Task, len(items))}
	for i, raw := range items {
		path := "/todos/" + strconv.Itoa(i)
		t, err := a.object(raw, path)
		if err != nil {
			return Plan{}, err
		}
		if p.Tasks[i].Description, err = a.str(t, "content", path, false); err != nil {
			return Plan{}, err
		}
		if p.Tasks[i].Status, err = a.status(t, "status", path); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}

// codex reads Codex CLI's update_plan {explanation?, plan:[{step, status}]}
// (codex-rs protocol/src/plan_tool.rs). Codex refuses unknown members
// (serde deny_unknown_fields), and so does this dialect.
type codex struct{}

func (codex) Name() string { return Codex }

func (codex) Parse(b []byte) (Plan, error) {
	a := args{dialect: Codex}
	m, err := a.root(b)
	if err != nil {
		return Plan{}, err
	}
	if err := a.only(m, "", "explanation", "plan"); err != nil {
		return Plan{}, err
	}
	items, err := a.array(m, "plan", "")
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Tasks: make([]Task, len(items))}
	if p.Reason, err = a.str(m, "explanation", "", true); err != nil {
		return Plan{}, err
	}
	for i, raw := range items {
		path := "/plan/" + strconv.Itoa(i)
		t, err := a.object(raw, path)
		if err != nil {
			return Plan{}, err
		}
		if err := a.only(t, path, "step", "status"); err != nil {
			return Plan{}, err
		}
		if p.Tasks[i].Description, err = a.str(t, "step", path, false); err != nil {
			return Plan{}, err
		}
		if p.Tasks[i].Status, err = a.status(t, "status", path); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}
