// Package skilllite is the adapter of SkillLite, the seed agent: it
// translates the JSON lines of SkillLite's agent-rpc mode into evosignal
// events (a Translator, fed line by line or by ReadLines), and writes
// learned rules in SkillLite's rules.json format (Rules). It translates
// only: what the events add up to is for the analyzers to count.
//
// The wire format is read in line.go. The mapping, one session per turn,
// and the choices it makes where the stream does not say:
//
// Turns. A turn is one evosignal session with a fresh UUIDv7 id, even when
// turns share a session_key. An agent_chat request starts a turn (an open
// one is first ended as aborted: the agent never finished it); without
// request lines, the first task_plan, task_progress, tool_call, tool_result
// or done line outside a turn starts one. done ends a turn, error ends it as
// failure, and the end of the input ends an open turn as aborted.
//
// agent.session.started is emitted as the turn starts. goal: the request's
// message; without a request line, the first task's description when a
// task_plan opens the turn; else "unknown". model: the request's
// params.config.model, else Config.Model. tools: Config.Tools, then every
// tool name seen in the stream so far (earlier turns, and the line that
// opens the turn), in first-seen order: SkillLite does not announce its
// tools, so a tool first used later in a turn is missing from that turn's
// list.
//
// Plans. The first task_plan of a turn is agent.plan.created (origin
// "model", or "empty" for no tasks). A task_plan while an update_task_plan
// call is open is that call's accepted replan: agent.plan.updated with valid
// true, trigger "model", the call's "reason" argument, and the call's
// ordinal (every update_task_plan call of the session counts). A later
// task_plan repeating the current list (same ids, descriptions, hints) is
// progress: tasks it shows completed are completed. Any other task_plan is a
// replan the agent made without a call, with the next ordinal and no reason.
// kept and dropped split the previous list: a task is kept when the new list
// has a task with its id and description (SkillLite renumbers the pending
// tasks it replaces, so an id alone does not identify one), else dropped.
// over_cap: ordinal ≥ 3.
//
// An update_task_plan call whose result is an error (and no task_plan came)
// is a rejected replan: valid false, no tasks, the result as error. One
// that reports success but is followed by no task_plan, or that never gets a
// result, is reported the same way, with an error saying so (best effort).
// As in the sample sessions, agent.plan.updated comes before the call's
// agent.tool.called.
//
// Tool calls. A tool_call and its tool_result (paired by id when both have
// one, else by name, oldest first) are one agent.tool.called, emitted at the
// result. It is attributed to the current task when the call is made (the
// first task of the plan not completed) with that task's tool_hint;
// update_task_plan calls have task_id null, complete_task calls are
// attributed to the task they complete (their task_id argument, when it is in
// the plan). Both are control calls. ok is the result's error flag negated;
// error is the result text (cut to 4096 characters). duration_ms is the time
// between the two lines when both carry timestamps, else 0. A result without
// a call is a call of duration 0; a call without a result when the turn ends
// is a failed call with error_kind "no_result".
//
// Tasks. A task_progress marking a task of the plan completed, or a
// successful complete_task call, completes the task: agent.task.completed,
// once per task, after the agent.tool.called of the call that was open when
// it completed (SkillLite marks a task between a call and its result).
// completion is success unless a (non-control) call for the task failed,
// then partial_success; reported is the complete_task call's "completion",
// "status" or "outcome" argument when it names one; summary its "summary".
//
// End. done → agent.session.ended, outcome from completion_type when it
// names one (success, partial_success, failure, aborted, timeout and their
// usual spellings), else from task_completed: true is success, false is
// partial_success if some task was completed, else failure; without either,
// from the plan: all tasks (or none) completed is success. Counts are the
// bridge's own tally: replans = replan ordinals given (update_task_plan
// calls, rejected ones included, and replans made without a call),
// tool_calls and failed_tool_calls = agent.tool.called events (control
// calls included), iterations = tool_call lines,
// duration_ms = time from the turn's first line to its last (timestamps
// when the lines carry them, else the wall clock). The event times are the
// lines' timestamps, else the wall clock as the line is read.
//
// Everything else is ignored and counted: unknown events (text_chunk, text,
// usage, confirmation_request, pong, …), requests other than agent_chat,
// an error outside a turn, a task_progress not completing a task of the
// plan.
package skilllite
