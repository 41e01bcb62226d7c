package planner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// maxErrorLen is the contract's limit on agent.tool.called's error, in
// characters.
const maxErrorLen = 4096

// CompleteTask handles a complete_task call: the model says task taskID
// ended with reported ("" when it did not say, taken as success) and
// summary.
//
// Only the current task, the first not completed, can be completed. For any
// other id nothing is emitted and the Result, not accepted, says which task
// is current (or that none is); it is not an error.
//
// A reported success is reconciled to partial_success when the task had
// failed tool calls or the session replanned (any update_task_plan call,
// rejected ones included). The call is emitted as a control
// agent.tool.called for the task, then agent.task.completed with the
// reconciled completion, reported, and tool_calls counting every call for
// the task, this one included. A task completed as failure stays pending
// (completed false) and current: the model retries it or replans.
func (p *Planner) CompleteTask(ctx context.Context, taskID int64, reported events.Completion, summary string) (Result, error) {
	if reported != "" && !reported.Valid() {
		return Result{}, fmt.Errorf("complete task %d: completion %q is not valid", taskID, reported)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.check("complete task", true); err != nil {
		return Result{}, err
	}
	i := p.current()
	if i < 0 {
		return Result{Message: fmt.Sprintf(msgNoPendingTask, taskID), Tasks: cloneTasks(p.tasks)}, nil
	}
	task := p.tasks[i]
	if task.ID != taskID {
		return Result{Message: fmt.Sprintf(msgNotCurrentTask, taskID, task.ID, task.Description), Tasks: cloneTasks(p.tasks)}, nil
	}

	st := p.statsOf(taskID)
	completion := reported
	if completion == "" {
		completion = events.CompletionSuccess
	}
	if completion == events.CompletionSuccess && (st.failed > 0 || p.replans > 0) {
		completion = events.CompletionPartialSuccess
	}
	st.calls++
	p.calls++
	if completion != events.CompletionFailure {
		p.tasks[i].Completed = true
	}

	e := emitter{ctx: ctx, s: p.s}
	e.emit(events.ToolCalled, agent.ToolCalled{TaskID: ptr(taskID), Tool: ToolCompleteTask, Hint: cloneTask(task).ToolHint, OK: true, Control: true})
	e.emit(events.TaskCompleted, agent.TaskCompleted{TaskID: taskID, Completion: completion, Reported: reported, ToolCalls: st.calls, Summary: summary})

	var msg string
	switch next := p.current(); {
	case completion == events.CompletionFailure:
		msg = fmt.Sprintf(msgTaskFailed, taskID)
	case next < 0:
		msg = fmt.Sprintf(msgAllTasksCompleted, taskID, completion)
	default:
		msg = fmt.Sprintf(msgTaskCompleted, taskID, completion, p.tasks[next].ID, p.tasks[next].Description)
	}
	res := p.result(msg)
	res.Completion = completion
	return res, e.err(fmt.Sprintf("complete task %d", taskID))
}

// RecordToolCall records a call of tool (not a control tool: ErrControlTool)
// that returned after took: ok, and on failure errKind (a class such as
// timeout, may be empty) and errText (cut to the contract's 4096
// characters). The call is attributed to the current task and its hint at
// the time (task_id and hint null when no task is pending) and emitted as
// agent.tool.called with control false.
//
// The current task's budget (Config.TaskToolBudget) counts its real calls.
// The call that uses it up, and every later call for the task, gets a
// Result with DepthLimit and the depth-limit message, which offers both
// exits: complete the task, or replan. agent.depth_limit.reached is emitted
// once per task, after the call that used the budget up.
func (p *Planner) RecordToolCall(ctx context.Context, tool string, ok bool, errKind, errText string, took time.Duration) (Result, error) {
	return p.RecordCall(ctx, Call{Tool: tool, OK: ok, ErrorKind: errKind, Error: errText, Took: took})
}

// Call is one real tool call as RecordCall records it.
type Call struct {
	Tool string
	// Args are the call's arguments as the model wrote them (JSON); the
	// event carries their digest (events.ArgsDigest), never the arguments.
	// Nil when not known.
	Args      []byte
	OK        bool
	ErrorKind string
	Error     string
	Took      time.Duration
}

// RecordCall is RecordToolCall with the call's arguments, whose digest lets
// analyze stuck see the same call repeated.
func (p *Planner) RecordCall(ctx context.Context, c Call) (Result, error) {
	tool, ok, errKind, errText, took := c.Tool, c.OK, c.ErrorKind, c.Error, c.Took
	if strings.TrimSpace(tool) == "" {
		return Result{}, fmt.Errorf("record tool call: empty tool name")
	}
	if tool == ToolCompleteTask || tool == ToolUpdateTaskPlan {
		return Result{}, fmt.Errorf("record tool call %s: %w", tool, ErrControlTool)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	step := "record tool call " + tool
	if err := p.check(step, true); err != nil {
		return Result{}, err
	}
	p.calls++
	if !ok {
		p.failed++
	}
	d := agent.ToolCalled{Tool: tool, OK: ok, ErrorKind: errKind, Error: truncate(errText, maxErrorLen), DurationMS: max(took.Milliseconds(), 0)}
	if c.Args != nil {
		d.ArgsDigest = events.ArgsDigest(c.Args)
	}
	e := emitter{ctx: ctx, s: p.s}
	res := p.result("")
	i := p.current()
	if i < 0 {
		e.emit(events.ToolCalled, d)
		return res, e.err(step)
	}

	task := p.tasks[i]
	st := p.statsOf(task.ID)
	st.calls++
	st.work++
	if !ok {
		st.failed++
	}
	d.TaskID = ptr(task.ID)
	d.Hint = cloneTask(task).ToolHint
	e.emit(events.ToolCalled, d)
	budget := int64(p.cfg.TaskToolBudget)
	if st.work >= budget {
		res.DepthLimit = true
		res.Message = fmt.Sprintf(msgDepthLimit, st.work, task.ID, budget, task.ID)
		if !st.atCap {
			st.atCap = true
			e.emit(events.DepthLimitReached, agent.DepthLimit{TaskID: task.ID, ToolCalls: st.calls, Limit: budget})
		}
	}
	return res, e.err(step)
}

// truncate cuts s to at most n characters (an invalid byte counts as one,
// as it becomes U+FFFD on the wire).
func truncate(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}
