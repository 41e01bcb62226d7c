// Package plandialect is the plan-dialect core every foreign agent format
// feeds: it parses the arguments of the plan tools agents really call
// (SkillLite update_task_plan, Claude Code TodoWrite, Codex CLI update_plan,
// LangChain deep agents write_todos) into tasks, and per session decides what
// each call is: the first plan, a replan, progress, or nothing new.
//
// It translates and classifies one session at a time; it never counts across
// sessions and never emits events. An adapter (agent-rpc, OTel GenAI spans,
// Claude Code hooks) looks a tool up in a Registry, parses the call's raw
// arguments with the Dialect found, and hands the Plan to the session's
// Tracker; the Result says which events to emit (Result.PlanCreated,
// Result.PlanUpdated, one agent.task.completed per Result.Completed id), and
// Tracker.Current gives the task a following tool call belongs to.
//
// The rules, in words and with an example payload per dialect, are in
// docs/plan-dialects.md. In short: the first plan of a session is Created; a
// call that adds, removes (a pending task) or rewords a task is Replanned;
// one that only changes statuses (or removes completed tasks) is Progressed;
// an identical call, a reorder, or a change of spelling only is Unchanged.
// Tasks of dialects without ids get stable ids by matching descriptions
// across versions (exact, normalised, then similar).
//
// Incremental task tools (Claude Code's TaskCreate, TaskUpdate) change one
// task per call: a StepDialect parses a call (and its result, where the
// agent assigns the id) into a Step, and a StepTracker holds a session's
// steps until the adapter's Flush — before a real tool call, at a turn's
// end — classifies the burst as one plan call through the same Tracker.
//
// New dialects implement Dialect and are added to the builtin table in
// dialects.go. Plans kept as Markdown files (task_plan.md, Cursor's
// *.plan.md) are read by MarkdownDialect from the content a FileTracker
// rebuilds out of a session's file tool calls (Files recognises them);
// each content is classified by the same Tracker.
//
// The package imports only the standard library and internal/events.
package plandialect
