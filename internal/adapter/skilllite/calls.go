package skilllite

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// This file pairs tool_call and tool_result lines into agent.tool.called
// events, attributes each call to a task, settles calls whose result
// SkillLite suppressed or that it skipped, and infers the depth limit.

// maxErrorLen is the longest error of agent.tool.called, in characters.
const maxErrorLen = 4096

// skippedPrefix starts the result of a call SkillLite skipped after a task
// transition (skilllite-agent/src/agent_loop/execution.rs:362-395).
const skippedPrefix = "Skipped: a task was just completed"

// call is a tool call of the turn.
type call struct {
	id, name string
	raw      string // the arguments as sent
	control  bool
	taskID   *int64
	hint     *string
	at       time.Time // the tool_call line's timestamp; zero without one
	reported events.Completion
	summary  string
	// curBefore is SkillLite's current task (0: none) when the call was
	// made: a call after which it differs is a task transition.
	curBefore int64
	skipped   bool
	trigger   events.Trigger

	// update_task_plan only: the proposed plan (nil when its arguments do
	// not parse), and the task_plan SkillLite emitted while running it.
	proposed *plandialect.Plan
	reason   string
	planLine []events.Task
	planSeen bool
	// progressed: a task_progress came while the call ran.
	progressed bool

	res result // once settled
}

// result is how a call ended.
type result struct {
	ok         bool
	err, kind  string
	durationMS int64
	// cancelled: a success that wrote nothing, the user having declined a
	// write to a key path ("User cancelled: …",
	// extensions/builtin/file_ops/mod.rs, file_ops/search_replace.rs).
	cancelled bool
}

// cancelledPrefix starts the result of a file write the user declined.
const cancelledPrefix = "User cancelled:"

func noResult(why string) result {
	return result{ok: false, err: why, kind: "no_result"}
}

// newCall attributes a call of tc made now.
func (t *Translator) newCall(tc toolCall) *call {
	tr := t.turn
	c := &call{id: tc.id, name: tc.name, raw: tc.raw, trigger: tr.trigger}
	if t.ts {
		c.at = t.at
	}
	cur, hint := tr.current()
	c.curBefore = tr.listCurrent()
	target, targetHint := cur, hint
	switch tc.name {
	case "update_task_plan":
		c.control = true
		target = 0
		c.reason, _, _ = tc.args.str("reason")
		if p, err := t.dialect.Parse([]byte(tc.raw)); err == nil {
			c.proposed = &p
		}
	case "complete_task":
		c.control = true
		if tr.source == sourceFile {
			// SkillLite's list has no task to complete: it refuses the
			// call; the plan file's tasks are not its.
			target, targetHint = 0, nil
		} else if id, ok, _ := tc.args.id("task_id"); ok && id != cur && tr.inPlan(id) {
			target, targetHint = id, nil
			for _, task := range tr.track.Plan() {
				if task.ID == id && task.Hint != "" {
					h := task.Hint
					targetHint = &h
				}
			}
		}
		for _, k := range []string{"completion_type", "completion", "status", "outcome"} {
			if s, ok, _ := tc.args.str(k); ok {
				c.reported = completionOf(s)
				break
			}
		}
		c.summary, _, _ = tc.args.str("summary")
	}
	if target != 0 {
		c.taskID, c.hint = &target, targetHint
	}
	return c
}

func (t *Translator) toolCall(tc toolCall) error {
	tr := t.turn
	tr.anyCall = true
	if tr.open != nil {
		t.settle(tr.open, nil)
	}
	c := t.newCall(tc)
	c.skipped = tr.transitioned
	tr.open = c
	return nil
}

// matches reports whether res can be the result of c.
func (c *call) matches(res toolResult) bool {
	if c.id != "" && res.id != "" {
		return c.id == res.id
	}
	return res.name == "" || res.name == c.name
}

func (t *Translator) toolResult(res toolResult) error {
	tr := t.turn
	c := tr.open
	if c != nil && !c.matches(res) {
		t.settle(c, nil)
		c = nil
	}
	if c == nil {
		// The result of a call the stream does not show (it began
		// mid-call): attributed as if made now.
		name := res.name
		if name == "" {
			name = "unknown"
		}
		c = t.newCall(toolCall{id: res.id, name: name})
		c.skipped = tr.transitioned
	}
	if !res.isError && strings.HasPrefix(res.text, skippedPrefix) {
		c.skipped = true
	}
	r := result{ok: !res.isError, cancelled: !res.isError && strings.HasPrefix(res.text, cancelledPrefix)}
	if !r.ok {
		r.err = res.text
		if r.err == "" {
			r.err = "the tool reported an error"
		}
	}
	switch {
	case res.elapsedMS >= 0:
		r.durationMS = res.elapsedMS
	case t.ts && !c.at.IsZero():
		r.durationMS = max(0, t.at.Sub(c.at).Milliseconds())
	}
	t.settle(c, &r)
	return nil
}

// settle ends call c with r, or, when r is nil, as a call whose result
// SkillLite suppressed: it emits a tool_result once per turn for each
// (name, result, is_error) (skilllite-agent/src/rpc.rs:186-193, 273-288), so
// a missing result repeats an earlier one.
func (t *Translator) settle(c *call, r *result) {
	tr := t.turn
	if tr.open == c {
		tr.open = nil
	}
	if c.skipped {
		t.n.Skipped++
		return
	}
	if r == nil {
		t.n.Suppressed++
		d := tr.duplicateOf(c)
		r = &d
	}
	c.res = *r
	switch {
	case c.name == "update_task_plan":
		t.planCall(c)
	case t.planFile(c):
	default:
		t.recordCall(c)
	}
	tr.executed = append(tr.executed, c)
	// SkillLite's per-task depth: a call after which the current task is
	// another starts the count afresh, and counts for the new task
	// (execution.rs:476-480, 509-510).
	if cur := tr.listCurrent(); cur != c.curBefore {
		tr.currentCalls = 0
		tr.transitioned = true
	}
	tr.currentCalls++
	if !c.res.ok {
		tr.batchFailed = true
	}
	t.drain()
}

// duplicateOf returns the result a call whose result was suppressed had.
// Planning calls show theirs: update_task_plan succeeded if its task_plan
// came, complete_task if a task_progress came while it ran. Otherwise it is
// the result of the latest earlier call with the same name and arguments,
// else of the latest one with the same name (and, for a planning call, the
// same outcome): some earlier call of the name had this very result.
func (tr *turn) duplicateOf(c *call) result {
	planning := c.name == "update_task_plan" || c.name == "complete_task"
	ok := c.planSeen || c.progressed
	if planning && ok {
		return result{ok: true}
	}
	for _, same := range []func(*call) bool{
		func(e *call) bool { return e.name == c.name && e.raw == c.raw && (!planning || !e.res.ok) },
		func(e *call) bool { return e.name == c.name && (!planning || !e.res.ok) },
	} {
		for i := len(tr.executed) - 1; i >= 0; i-- {
			if e := tr.executed[i]; same(e) {
				r := e.res
				r.durationMS = 0
				return r
			}
		}
	}
	return noResult("no tool_result, and no earlier call of " + c.name + " it could repeat")
}

// endBatch ends the batch of tool calls of one LLM response: the open
// call's result was suppressed; SkillLite checks the depth limit
// (execution.rs:515, mod.rs:916-920); the next batch's update_task_plan
// calls answer what this one showed the model.
func (t *Translator) endBatch() {
	tr := t.turn
	if tr.open != nil {
		t.settle(tr.open, nil)
	}
	next := events.TriggerModel
	if tr.batchFailed {
		next = events.TriggerToolFailures
	}
	if tr.currentCalls >= t.cfg.DepthLimit {
		if cur := tr.listCurrent(); cur != 0 {
			t.record(events.DepthLimitReached, agent.DepthLimit{TaskID: cur, ToolCalls: tr.currentCalls, Limit: t.cfg.DepthLimit})
		}
		tr.currentCalls = 0
		next = events.TriggerDepthLimit
	}
	tr.trigger, tr.batchFailed, tr.transitioned = next, false, false
}

// recordCall emits the agent.tool.called of c.
func (t *Translator) recordCall(c *call) {
	tr := t.turn
	r := c.res
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
	tr.out = append(tr.out, pending{typ: events.ToolCalled, data: d, at: t.at, known: t.ts, toolCallID: c.id})
	if c.name == "complete_task" && r.ok && c.taskID != nil {
		tr.complete(*c.taskID, c)
	}
}

// truncate cuts s to at most n characters.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
