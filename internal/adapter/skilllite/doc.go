// Package skilllite is the adapter of SkillLite, the seed agent: it
// translates the JSON lines of SkillLite's agent-rpc mode into evosignal
// events (a Translator, fed line by line or by ReadLines), and writes
// learned rules as SkillLite planning rules (Rules). It translates only:
// what the events add up to is for the analyzers to count.
//
// It follows what the agent does, read in its source (EXboys/skilllite;
// docs/bridge-skilllite.md has one row per behaviour with its file:line),
// not its protocol comments. The wire format is read in line.go; the
// choices, where the stream does not say:
//
// Turns. A turn is one agent_chat: the lines up to its done (or error).
// agent-rpc's stdout holds no requests; a recording that holds them too
// starts a turn at each request, ending an open one as aborted. The end of
// the input ends an open turn as aborted. A turn's events are sent when it
// ends, under ids derived from its lines (ids.go): bridging the same input
// twice gives the same events, which the store keeps once.
//
// A turn that ends (done) with neither a task nor a tool call is a plain
// answer: SkillLite reports it as a failure (its completion type for a turn
// without tool calls), but there was nothing to plan. It is counted
// (Counts.PlainAnswers), not made a session, so that it is never a failed
// planning session in the replan and success figures.
//
// agent.session.started: goal, the request's message when the input has
// it, else the first task's description, else "unknown"; model, the
// request's params.config.model, else Config.Model; tools, Config.Tools and
// every tool name seen in the input up to the turn's end, in first-seen
// order.
//
// Plans. The first task_plan of a turn is agent.plan.created: origin
// "empty" without tasks, "fallback" for SkillLite's fallback plan (one task,
// the request's message, no hint: only with the request), else "model". An
// update_task_plan call is a replan attempt, one agent.plan.updated, before
// the call's agent.tool.called. If SkillLite's handler accepted it (a
// task_plan came while it ran), the event holds that plan, kept and
// dropped as the handler makes them (the completed tasks stay, the pending
// ones go, the listed ones follow, renumbered; the plan-dialect core
// computes them), and an agent.hint.stripped follows per hint the call
// proposed that the plan SkillLite kept does not have. Otherwise it is
// rejected (valid false, the result as error). Every call gets the next
// ordinal; over_cap follows SkillLite's own count, which leaves out calls
// its argument validation refused (see replan.go), from its soft cap of 3.
// The trigger is depth_limit when the previous batch of calls ended at the
// depth limit, tool_failures when a call of that batch failed, else model.
// A task_plan outside an update_task_plan call (SkillLite sends none; a
// recorder may) is compared with the plan in force: a replan without a
// call, progress, or nothing.
//
// Plan files. A write_file, search_replace or insert_lines on a plan file
// (task_plan.md, …: Config.Files) is read by the plan-dialect core's
// Markdown dialect while SkillLite's task list has no task (its simple
// loop, or an empty first plan, whose agent.plan.created the file's first
// version replaces): plan events as for a plan tool, the call a control
// call. Once the list has a task it is the session's plan, and plan-file
// calls are ordinary calls, counted in Counts.Quality (planfile.go;
// docs/plan-dialects.md, "Two plan sources").
//
// Tool calls. SkillLite runs the calls of one LLM response (a batch,
// between llm_usage lines) one after the other: tool_call, what the call
// changes (task_plan, task_progress), tool_result. A call is one
// agent.tool.called, attributed to SkillLite's current task when made (the
// first task not completed; complete_task to the task it names), with that
// task's hint; update_task_plan and complete_task are control calls. A call
// whose result never came was suppressed as a duplicate: its outcome is that
// of the earlier call it repeats (calls.go); at the end of the input it is
// a failed call with error_kind "no_result". A call after a task transition
// in the same batch is skipped by SkillLite, not run: no event. SkillLite's
// tool_call_id rides on agent.tool.called as the extension attribute
// ToolCallIDExtension.
//
// Depth limit. SkillLite counts the calls run on the current task (a call
// that moves the current task starts the count afresh) and, when a batch
// ends with Config.DepthLimit or more, tells the model: the bridge emits
// agent.depth_limit.reached and starts the count again.
//
// Tasks. A task_progress completing a task of the plan is
// agent.task.completed, once per task, after the agent.tool.called of the
// call that made it. completion is success unless a (non-control) call for
// the task failed, then partial_success; reported is the complete_task
// call's completion_type; summary its summary.
//
// End. done → agent.session.ended, outcome from completion_type (success,
// partial_success, failure; other spellings tolerated), else task_completed,
// else the plan. Counts: replans = agent.plan.updated events; tool_calls and
// failed_tool_calls = agent.tool.called events (control calls included:
// SkillLite's own tool_calls, compared in Counts.CountMismatches);
// iterations = llm_usage lines; duration_ms from the turn's first line to
// its last. Event times are the lines' timestamps when a recorder added
// them, else the wall clock as the line is read.
//
// Everything else is ignored and counted: text, text_chunk, command_*,
// preview_*, swarm_*, confirmation_request, clarification_request, requests
// other than agent_chat, an error outside a turn, a task_progress not
// completing a task of the plan.
package skilllite
