package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// The translator turns SkillLite agent-rpc lines (see line.go) into evosignal
// events, one session per turn. The mapping, and the choices it makes where
// the stream does not say:
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
// params.config.model, else -model. tools: -tools, then every tool name seen
// in the stream so far (earlier turns, and the line that opens the turn), in
// first-seen order: SkillLite does not announce its tools, so a tool first
// used later in a turn is missing from that turn's list.
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

// replanCap is the soft cap on replans: over_cap from this ordinal on.
const replanCap = 3

// maxErrorLen is the longest error of agent.tool.called, in characters.
const maxErrorLen = 4096

// translatorConfig says who the events come from.
type translatorConfig struct {
	Agent        string // agent name, the first segment of Source
	Source       string
	AgentVersion string
	Model        string   // unless the request names one
	Tools        []string // announced in every session, before the names seen
}

// counts are the translator's totals.
type counts struct {
	Lines     int64 // lines read, blank ones included
	Events    int64 // events emitted
	Sessions  int64
	Ignored   int64
	Malformed int64
}

// lineError is a malformed line, reported and skipped; Translator.Line
// returns it.
type lineError struct {
	Line int
	Err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *lineError) Unwrap() error { return e.Err }

// translator keeps the state of the stream: the open turn and the tool
// names seen. Not safe for concurrent use.
type translator struct {
	cfg  translatorConfig
	sink agent.Sink
	now  func() time.Time

	tools []string // cfg.Tools, then the names seen
	seen  map[string]bool
	turn  *turn
	at    time.Time // the time of the line being translated
	ts    bool      // whether that line carries a timestamp
	n     counts
}

func newTranslator(cfg translatorConfig, sink agent.Sink, now func() time.Time) *translator {
	t := &translator{cfg: cfg, sink: sink, now: now, seen: map[string]bool{}}
	for _, name := range cfg.Tools {
		t.see(name)
	}
	return t
}

// turn is the state of one session.
type turn struct {
	s         *agent.Session
	start     time.Time
	planned   bool
	plan      plan
	calls     []*call        // tool calls awaiting their result, in call order
	replan    *replanCall    // the update_task_plan call in progress
	pending   []completion   // task completions waiting for the open calls
	completed map[int64]bool // tasks whose agent.task.completed is out
	taskCalls map[int64]int64
	taskFails map[int64]int64 // failed work calls per task

	replans, toolCalls, failed, iterations int64
}

// call is a tool call awaiting its result.
type call struct {
	id, name string
	control  bool
	taskID   *int64
	hint     *string
	at       time.Time // the tool_call line's timestamp; zero without one
	reported events.Completion
	summary  string
}

// result is how a call ended.
type result struct {
	ok         bool
	err, kind  string
	durationMS int64
}

// replanCall is an update_task_plan call until its replan is out.
type replanCall struct {
	call       *call
	ordinal    int64
	reason     string
	planSeen   bool // its agent.plan.updated is out
	resultSeen bool
	res        result
}

type completion struct {
	id       int64
	reported events.Completion
	summary  string
}

// Stats returns the totals so far.
func (t *translator) Stats() counts { return t.n }

// Line translates line n (from 1) of the input. It returns a *lineError for
// a line it skipped as malformed; any other error comes from the sink.
func (t *translator) Line(ctx context.Context, n int, raw []byte) error {
	t.n.Lines++
	l, err := parseLine(raw)
	if err != nil {
		t.n.Malformed++
		return &lineError{Line: n, Err: err}
	}
	t.at, t.ts = l.at, !l.at.IsZero()
	if !t.ts {
		t.at = t.now()
	}
	err = t.apply(ctx, l)
	if ee := (*events.Error)(nil); errors.As(err, &ee) {
		// A value the contract cannot carry: a bug of the bridge rather
		// than of the line, but the line is what can be skipped.
		t.n.Malformed++
		return &lineError{Line: n, Err: fmt.Errorf("cannot translate %s: %w", l.name, err)}
	}
	return err
}

// TooLong counts line n, longer than max bytes, as malformed.
func (t *translator) TooLong(n, max int) error {
	t.n.Lines++
	t.n.Malformed++
	return &lineError{Line: n, Err: fmt.Errorf("longer than %d bytes", max)}
}

// Close ends the open turn, if any, as aborted: the input ended mid-turn.
func (t *translator) Close(ctx context.Context) error {
	if t.turn == nil {
		return nil
	}
	// The session ends at the last line read, whose time t.at still is.
	return t.end(ctx, events.OutcomeAborted)
}

func (t *translator) apply(ctx context.Context, l rpcLine) error {
	switch l.kind {
	case kindBlank:
		return nil
	case kindOtherRequest, kindUnknownEvent:
		t.n.Ignored++
		return nil
	case kindChat:
		if t.turn != nil {
			if err := t.end(ctx, events.OutcomeAborted); err != nil {
				return err
			}
		}
		goal, model := l.chat.message, l.chat.model
		if !l.chat.hasMessage {
			goal = "unknown"
		}
		if model == "" {
			model = t.cfg.Model
		}
		return t.begin(ctx, goal, model)
	case kindError:
		if t.turn == nil {
			t.n.Ignored++
			return nil
		}
		return t.end(ctx, events.OutcomeFailure)
	case kindToolCall:
		t.see(l.call.name)
	case kindToolResult:
		t.see(l.res.name)
	}
	if t.turn == nil {
		goal := "unknown"
		if l.kind == kindTaskPlan && len(l.tasks) > 0 && l.tasks[0].Description != "" {
			goal = l.tasks[0].Description
		}
		if err := t.begin(ctx, goal, t.cfg.Model); err != nil {
			return err
		}
	}
	if r := t.turn.replan; r != nil && r.resultSeen && l.kind != kindTaskPlan {
		// An accepted update_task_plan call no task_plan followed.
		if err := t.finishReplan(ctx, ""); err != nil {
			return err
		}
	}
	switch l.kind {
	case kindTaskPlan:
		return t.taskPlan(ctx, l.tasks)
	case kindTaskProgress:
		return t.progress(ctx, l.prog)
	case kindToolCall:
		return t.toolCall(ctx, l.call)
	case kindToolResult:
		return t.toolResult(ctx, l.res)
	default: // kindDone
		return t.done(ctx, l.done)
	}
}

// see records a tool name for the next sessions' tools.
func (t *translator) see(name string) {
	if name == "" || t.seen[name] {
		return
	}
	t.seen[name] = true
	t.tools = append(t.tools, name)
}

func (t *translator) emit(ctx context.Context, typ events.Type, data any) error {
	if err := t.turn.s.Emit(ctx, typ, data); err != nil {
		return err
	}
	t.n.Events++
	return nil
}

func (t *translator) begin(ctx context.Context, goal, model string) error {
	s := agent.NewSession(t.sink, t.cfg.Source, "").WithClock(func() time.Time { return t.at })
	t.turn = &turn{
		s: s, start: t.at,
		completed: map[int64]bool{}, taskCalls: map[int64]int64{}, taskFails: map[int64]int64{},
	}
	t.n.Sessions++
	return t.emit(ctx, events.SessionStarted, agent.SessionStarted{
		Goal: goal, Agent: t.cfg.Agent, AgentVersion: t.cfg.AgentVersion, Model: model,
		Tools: slices.Clone(t.tools),
	})
}

// end settles what is open and ends the turn with outcome.
func (t *translator) end(ctx context.Context, outcome events.Outcome) error {
	tr := t.turn
	defer func() { t.turn = nil }()
	if tr.replan != nil {
		if err := t.finishReplan(ctx, "no tool_result before the turn ended"); err != nil {
			return err
		}
	}
	for len(tr.calls) > 0 {
		c := tr.calls[0]
		tr.calls = tr.calls[1:]
		if err := t.emitCall(ctx, c, noResult("no tool_result before the turn ended")); err != nil {
			return err
		}
	}
	if err := t.drain(ctx); err != nil {
		return err
	}
	return t.emit(ctx, events.SessionEnded, agent.SessionEnded{
		Outcome: outcome, Replans: tr.replans, ToolCalls: tr.toolCalls, FailedToolCalls: tr.failed,
		Iterations: tr.iterations, DurationMS: max(0, t.at.Sub(tr.start).Milliseconds()),
	})
}

func noResult(why string) result {
	return result{ok: false, err: why, kind: "no_result"}
}

func (t *translator) taskPlan(ctx context.Context, tasks []events.Task) error {
	tr := t.turn
	if !tr.planned {
		tr.planned = true
		tr.setPlan(tasks)
		if tr.replan != nil {
			// The first plan of the turn came from an update_task_plan
			// call: there is no previous plan to update.
			tr.replan.planSeen = true
		}
		origin := events.OriginModel
		if len(tasks) == 0 {
			origin = events.OriginEmpty
		}
		return t.emit(ctx, events.PlanCreated, agent.PlanCreated{Tasks: slices.Clone(tasks), Origin: origin})
	}
	if r := tr.replan; r != nil && !r.planSeen {
		r.planSeen = true
		if err := t.emitReplan(ctx, r.ordinal, r.reason, tasks); err != nil {
			return err
		}
		if !r.resultSeen {
			return nil
		}
		tr.replan = nil
		if err := t.emitCall(ctx, r.call, r.res); err != nil {
			return err
		}
		return t.drain(ctx)
	}
	if tr.plan.sameList(tasks) {
		for _, task := range tasks {
			if task.Completed && !tr.plan.find(task.ID).Completed {
				tr.complete(task.ID, nil)
			}
		}
		return t.drain(ctx)
	}
	tr.replans++
	return t.emitReplan(ctx, tr.replans, "", tasks)
}

// setPlan makes tasks the current plan. An id that now names another task
// (SkillLite renumbers the tasks a replan adds) starts a fresh tally.
func (tr *turn) setPlan(tasks []events.Task) {
	for _, task := range tasks {
		if old := tr.plan.find(task.ID); old == nil || !sameTask(*old, task) {
			delete(tr.completed, task.ID)
			delete(tr.taskCalls, task.ID)
			delete(tr.taskFails, task.ID)
		}
	}
	tr.plan = slices.Clone(tasks)
}

func (t *translator) emitReplan(ctx context.Context, ordinal int64, reason string, tasks []events.Task) error {
	tr := t.turn
	kept, dropped := tr.plan.diff(tasks)
	tr.setPlan(tasks)
	return t.emit(ctx, events.PlanUpdated, agent.PlanUpdated{
		Replan: ordinal, Trigger: events.TriggerModel, Reason: reason,
		Tasks: slices.Clone(tasks), Kept: kept, Dropped: dropped,
		OverCap: ordinal >= replanCap, Valid: true,
	})
}

// finishReplan settles the open update_task_plan call: its rejected replan
// unless its task_plan came, then its agent.tool.called, failed with
// noResultWhy when its result did not come.
func (t *translator) finishReplan(ctx context.Context, noResultWhy string) error {
	tr := t.turn
	r := tr.replan
	tr.replan = nil
	res := r.res
	if !r.resultSeen {
		tr.calls = slices.DeleteFunc(tr.calls, func(c *call) bool { return c == r.call })
		res = noResult(noResultWhy)
	}
	if !r.planSeen {
		why := res.err
		if res.ok {
			why = "the call succeeded but no task_plan followed"
		}
		if why == "" {
			why = "update_task_plan failed"
		}
		if err := t.emit(ctx, events.PlanUpdated, agent.PlanUpdated{
			Replan: r.ordinal, Trigger: events.TriggerModel, Reason: r.reason,
			OverCap: r.ordinal >= replanCap, Valid: false, Error: why,
		}); err != nil {
			return err
		}
	}
	if err := t.emitCall(ctx, r.call, res); err != nil {
		return err
	}
	return t.drain(ctx)
}

func (t *translator) progress(ctx context.Context, p taskProgress) error {
	tr := t.turn
	if !p.completed || tr.plan.find(p.taskID) == nil {
		t.n.Ignored++
		return nil
	}
	tr.complete(p.taskID, nil)
	return t.drain(ctx)
}

// complete marks task id completed and queues its agent.task.completed,
// with what the complete_task call c declared, if c is not nil.
func (tr *turn) complete(id int64, c *call) {
	if task := tr.plan.find(id); task != nil {
		task.Completed = true
	}
	if tr.completed[id] {
		return
	}
	i := slices.IndexFunc(tr.pending, func(p completion) bool { return p.id == id })
	if i < 0 {
		tr.pending = append(tr.pending, completion{id: id})
		i = len(tr.pending) - 1
	}
	if c != nil {
		tr.pending[i].reported, tr.pending[i].summary = c.reported, c.summary
	}
}

// drain emits the queued task completions once no call is open.
func (t *translator) drain(ctx context.Context) error {
	tr := t.turn
	if len(tr.calls) > 0 {
		return nil
	}
	for len(tr.pending) > 0 {
		p := tr.pending[0]
		tr.pending = tr.pending[1:]
		tr.completed[p.id] = true
		c := events.CompletionSuccess
		if tr.taskFails[p.id] > 0 {
			c = events.CompletionPartialSuccess
		}
		if err := t.emit(ctx, events.TaskCompleted, agent.TaskCompleted{
			TaskID: p.id, Completion: c, Reported: p.reported, ToolCalls: tr.taskCalls[p.id], Summary: p.summary,
		}); err != nil {
			return err
		}
	}
	return nil
}

// newCall attributes a call of tc made now.
func (t *translator) newCall(tc toolCall) *call {
	tr := t.turn
	c := &call{id: tc.id, name: tc.name}
	if t.ts {
		c.at = t.at
	}
	target := tr.plan.current()
	switch tc.name {
	case "update_task_plan":
		c.control = true
		target = nil
	case "complete_task":
		c.control = true
		if id, ok, _ := tc.args.id("task_id"); ok && tr.plan.find(id) != nil {
			target = tr.plan.find(id)
		}
		for _, k := range []string{"completion", "status", "outcome"} {
			if s, ok, _ := tc.args.str(k); ok {
				c.reported = completionOf(s)
				break
			}
		}
		c.summary, _, _ = tc.args.str("summary")
	}
	if target != nil {
		id := target.ID
		c.taskID = &id
		if target.ToolHint != nil {
			hint := *target.ToolHint
			c.hint = &hint
		}
	}
	return c
}

func (t *translator) toolCall(ctx context.Context, tc toolCall) error {
	tr := t.turn
	tr.iterations++
	if tc.name == "update_task_plan" && tr.replan != nil {
		if err := t.finishReplan(ctx, "no tool_result before the next update_task_plan call"); err != nil {
			return err
		}
	}
	c := t.newCall(tc)
	tr.calls = append(tr.calls, c)
	if tc.name == "update_task_plan" {
		tr.replans++
		reason, _, _ := tc.args.str("reason")
		tr.replan = &replanCall{call: c, ordinal: tr.replans, reason: reason}
	}
	return nil
}

// take removes and returns the open call res answers, or nil.
func (tr *turn) take(res toolResult) *call {
	i := -1
	if res.id != "" {
		i = slices.IndexFunc(tr.calls, func(c *call) bool { return c.id == res.id })
	}
	if i < 0 && res.name != "" {
		i = slices.IndexFunc(tr.calls, func(c *call) bool { return c.name == res.name })
	}
	if i < 0 && res.name == "" && len(tr.calls) > 0 {
		i = 0
	}
	if i < 0 {
		return nil
	}
	c := tr.calls[i]
	tr.calls = slices.Delete(tr.calls, i, i+1)
	return c
}

func (t *translator) toolResult(ctx context.Context, res toolResult) error {
	tr := t.turn
	c := tr.take(res)
	if c == nil {
		// The result of a call the stream does not show (it began
		// mid-call): attributed as if made now.
		name := res.name
		if name == "" {
			name = "unknown"
		}
		c = t.newCall(toolCall{id: res.id, name: name})
	}
	r := result{ok: !res.isError}
	if !r.ok {
		r.err = res.text
		if r.err == "" {
			r.err = "the tool reported an error"
		}
	}
	if t.ts && !c.at.IsZero() {
		r.durationMS = max(0, t.at.Sub(c.at).Milliseconds())
	}
	if rp := tr.replan; rp != nil && rp.call == c {
		rp.resultSeen, rp.res = true, r
		if rp.planSeen || !r.ok {
			return t.finishReplan(ctx, "")
		}
		return nil // its task_plan may still come
	}
	if err := t.emitCall(ctx, c, r); err != nil {
		return err
	}
	if c.name == "complete_task" && r.ok && c.taskID != nil {
		tr.complete(*c.taskID, c)
	}
	return t.drain(ctx)
}

func (t *translator) emitCall(ctx context.Context, c *call, r result) error {
	tr := t.turn
	d := agent.ToolCalled{TaskID: c.taskID, Tool: c.name, Hint: c.hint, OK: r.ok, DurationMS: r.durationMS, Control: c.control}
	if !r.ok {
		d.Error, d.ErrorKind = truncate(r.err, maxErrorLen), r.kind
	}
	tr.toolCalls++
	if !r.ok {
		tr.failed++
	}
	if c.taskID != nil {
		tr.taskCalls[*c.taskID]++
		if !r.ok && !c.control {
			tr.taskFails[*c.taskID]++
		}
	}
	return t.emit(ctx, events.ToolCalled, d)
}

func (t *translator) done(ctx context.Context, d doneData) error {
	// d.toolCalls, the agent's own count, is not used: SkillLite's count
	// leaves update_task_plan calls out (and an older one counted only
	// skill calls), while tool_calls in agent.session.ended counts every
	// agent.tool.called, control calls included. The bridge reports its
	// own tally, consistent with the events it emitted.
	return t.end(ctx, outcomeOf(d, t.turn.plan))
}

// outcomeOf maps a done line to the session's outcome.
func outcomeOf(d doneData, p plan) events.Outcome {
	switch normalize(d.completionType) {
	case "success", "succeeded", "successful", "completed", "complete", "done", "ok":
		return events.OutcomeSuccess
	case "partial_success", "partial", "partially_completed", "partial_completion":
		return events.OutcomePartialSuccess
	case "failure", "failed", "fail", "error", "incomplete", "not_completed":
		return events.OutcomeFailure
	case "aborted", "abort", "cancelled", "canceled", "interrupted", "stopped":
		return events.OutcomeAborted
	case "timeout", "timed_out", "time_out":
		return events.OutcomeTimeout
	}
	completed := 0
	for _, task := range p {
		if task.Completed {
			completed++
		}
	}
	switch {
	case d.hasTaskCompleted && d.taskCompleted:
		return events.OutcomeSuccess
	case d.hasTaskCompleted || completed < len(p):
		if completed > 0 {
			return events.OutcomePartialSuccess
		}
		return events.OutcomeFailure
	}
	return events.OutcomeSuccess
}

// completionOf maps what a complete_task call declared; "" when it names
// no completion.
func completionOf(s string) events.Completion {
	switch normalize(s) {
	case "success", "succeeded", "successful", "completed", "complete", "done", "ok":
		return events.CompletionSuccess
	case "partial_success", "partial", "partially_completed":
		return events.CompletionPartialSuccess
	case "failure", "failed", "fail", "error":
		return events.CompletionFailure
	}
	return ""
}

func normalize(s string) string {
	return strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
}
