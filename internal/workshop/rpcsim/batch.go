package rpcsim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// result is a tool's answer (skilllite-agent/src/types: ToolResult).
type result struct {
	content    string
	isError    bool
	countsFail bool
}

// batch runs the calls of one response as execute_tool_batch_planning does
// (skilllite-agent/src/agent_loop/execution.rs:320-521).
func (tr *turn) batch(calls []toolCall) {
	s := tr.s
	transitioned := false
	batchFailed := false
	for _, c := range calls {
		s.ncall++
		id := fmt.Sprintf("call_%d", s.ncall)
		s.emit("tool_call", map[string]any{"arguments": c.args, "name": c.name, "tool_call_id": id})
		if transitioned {
			tr.result(id, c.name, "Skipped: a task was just completed and the plan advanced. Continue with the next task in your next response.", false)
			tr.truth.skipped++
			continue
		}
		before := tr.currentID()
		cur := tr.current()
		var hint *string
		if cur != nil && c.name != "update_task_plan" {
			hint = cur.ToolHint
		}
		var r result
		switch c.name {
		case "update_task_plan":
			r = tr.updatePlan(c)
		case "complete_task":
			r = tr.completeTask(c.args)
		default:
			r = tr.work(c)
		}
		isComplete := c.name == "complete_task"
		if r.countsFail {
			tr.failed++
			repeats := tr.recordFailure(c.name, r.content)
			switch {
			case isComplete && repeats >= 3 && tr.total > 0:
				if cur := tr.current(); cur != nil {
					cur.Completed = true
					s.emit("task_progress", map[string]any{"completed": true, "task_id": cur.ID, "tasks": tr.plan})
					r = result{content: fmt.Sprintf(`{"success": true, "task_id": %d, "completion_type": "success", "message": "Task %d auto-completed (format issues after %d attempts)"}`, cur.ID, cur.ID, repeats)}

					tr.lastSig, tr.repeats = "", 0
				}
			case repeats >= 2:
				r.content += fmt.Sprintf("\n\n⚠️ LOOP DETECTED: Tool '%s' has failed %d times in a row with the same error. You are stuck in a retry loop. STOP retrying this exact call. Instead: (1) re-read the error message carefully, (2) change the argument format, or (3) skip this step and proceed to the next task.", c.name, repeats)
			case !isComplete:
				r.content += "\n\nTip: If this approach is wrong or the plan is no longer valid, call update_task_plan with a revised task list, then continue with the new plan."
			}
		} else if !r.isError {
			tr.lastSig, tr.repeats = "", 0
		}
		if tr.currentID() != before {
			tr.currentCalls = 0
			transitioned = true
		}
		if isComplete && !r.isError {
			tr.observe(c.args)
		}
		if !tr.result(id, c.name, r.content, r.isError) {
			tr.truth.suppressed++
		}
		tr.total++
		tr.currentCalls++
		if c.name != "update_task_plan" && !isComplete {
			tr.truth.call(hint, !r.isError) // a real call; planning calls are control calls
		}
		if r.isError {
			batchFailed = true
		}
	}
	tr.sawDepth = false
	if tr.currentCalls >= s.cfg.DepthLimit {
		// The depth-limit message (mod.rs:916-920): the model sees it.
		if tr.current() != nil {
			tr.truth.depthLimits++
		}
		tr.currentCalls = 0
		tr.sawDepth = true
	}
	tr.sawFailure = batchFailed
}

// failed counts calls whose result counts as a failure. SkillLite's
// failed_tool_calls keeps an auto-recovered complete_task; the bridge sees
// its result as a success, so the truth does not (batch above).

func (tr *turn) currentID() int {
	if c := tr.current(); c != nil {
		return c.ID
	}
	return 0
}

// result emits a tool_result unless the turn already emitted the same
// (name, result, is_error) (rpc.rs:186-193, 273-288); it reports whether it
// did.
func (tr *turn) result(id, name, content string, isError bool) bool {
	key := fmt.Sprintf("%s\x00%s\x00%v", name, content, isError)
	if tr.keys[key] {
		return false
	}
	tr.keys[key] = true
	tr.s.emit("tool_result", map[string]any{"is_error": isError, "name": name, "result": content, "tool_call_id": id})
	return true
}

// recordFailure is ExecutionState::record_failure (execution.rs:180-196).
func (tr *turn) recordFailure(name, content string) int {
	prefix := []rune(content)
	if len(prefix) > 80 {
		prefix = prefix[:80]
	}
	sig := name + "\x00" + string(prefix)
	if sig == tr.lastSig {
		tr.repeats++
	} else {
		tr.lastSig, tr.repeats = sig, 1
	}
	return tr.repeats
}

// observe is observe_completion_type (execution.rs:203-213).
func (tr *turn) observe(args string) {
	switch completionType(args) {
	case "failure":
		tr.completion = "failure"
	case "partial_success":
		if tr.completion != "failure" {
			tr.completion = "partial_success"
		}
	}
}

func completionType(args string) string {
	var a struct {
		CompletionType string `json:"completion_type"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	switch ct := strings.TrimSpace(a.CompletionType); ct {
	case "partial_success", "failure":
		return ct
	}
	return "success"
}

func (tr *turn) work(c toolCall) result {
	tr.history = append(tr.history, c.name+"\x00"+c.args)
	if strings.Contains(c.args, "missing.txt") {
		return result{content: "Error: file not found: missing.txt", isError: true, countsFail: true}
	}
	return result{content: "contents of " + c.args}
}

// completeTask is the refusal of execution.rs:291-306, then
// handle_complete_task (agent_loop/helpers.rs:183-326).
func (tr *turn) completeTask(args string) result {
	declared := completionType(args)
	if declared == "success" && (tr.failed > 0 || tr.replans > 0) {
		tr.truth.refused++
		return result{content: "completion_type=success conflicts with execution signals (failed tools or replans observed). Use completion_type=partial_success or failure.", isError: true, countsFail: true}
	}
	var a struct {
		TaskID int `json:"task_id"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	cur := tr.current()
	if cur == nil || cur.ID != a.TaskID {
		msg := "All tasks are already completed."
		if cur != nil {
			msg = fmt.Sprintf("Cannot complete task %d — current task is %d. Complete tasks in order.", a.TaskID, cur.ID)
		}
		return result{content: msg, isError: true, countsFail: true}
	}
	cur.Completed = true
	tr.s.emit("task_progress", map[string]any{"completed": true, "task_id": cur.ID, "tasks": tr.plan})
	return result{content: fmt.Sprintf(`{"success": true, "task_id": %d, "completion_type": "%s", "message": "Task %d marked as completed"}`, cur.ID, declared, cur.ID)}
}

// updatePlan is the registry's validation (extensions/registry.rs:1029-1037:
// tasks is required, extensions/builtin/chat_data.rs:81-111), the replan
// count (execution.rs:272-288) and handle_update_task_plan
// (agent_loop/helpers.rs:42-177).
func (tr *turn) updatePlan(c toolCall) result {
	var a struct {
		Tasks  *[]task `json:"tasks"`
		Reason string  `json:"reason"`
	}
	_ = json.Unmarshal([]byte(c.args), &a)
	if a.Tasks == nil {
		tr.truth.attempt(false, c.why, tr.replans >= 3)
		return result{content: "Missing required field(s): tasks", isError: true, countsFail: true}
	}
	tr.replans++
	if len(*a.Tasks) == 0 {
		tr.truth.attempt(false, c.why, tr.replans >= 3)
		return result{content: "Task list cannot be empty", isError: true, countsFail: true}
	}
	var plan []task
	next := 1
	for _, t := range tr.plan {
		if t.Completed {
			plan = append(plan, t)
			next = max(next, t.ID+1)
		}
	}
	for i, t := range *a.Tasks {
		t.ID, t.Completed = next+i, false
		if t.ToolHint != nil && knownHints[*t.ToolHint] == "" {
			tr.truth.stripped(*t.ToolHint)
			t.ToolHint = nil
		}
		plan = append(plan, t)
	}
	tr.plan = plan
	tr.s.emit("task_plan", map[string]any{"tasks": tr.plan})
	tr.truth.attempt(true, c.why, tr.replans >= 3)
	content := fmt.Sprintf("Task plan updated (%d tasks). Continue with the new plan.", len(*a.Tasks))
	if a.Reason != "" {
		content += "\nReason: " + a.Reason
	}
	if tr.replans >= 3 {
		content += fmt.Sprintf("\n\n⚠️ You have now replanned %d time(s). Please STOP replanning and EXECUTE the current plan step by step. Do NOT call update_task_plan again.", tr.replans)
	}
	return result{content: content}
}
