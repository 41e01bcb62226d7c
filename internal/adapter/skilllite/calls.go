package skilllite

import (
	"context"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// This file pairs tool_call and tool_result lines into agent.tool.called
// events and attributes each call to a task.

// maxErrorLen is the longest error of agent.tool.called, in characters.
const maxErrorLen = 4096

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

func noResult(why string) result {
	return result{ok: false, err: why, kind: "no_result"}
}

// newCall attributes a call of tc made now.
func (t *Translator) newCall(tc toolCall) *call {
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

func (t *Translator) toolCall(ctx context.Context, tc toolCall) error {
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

func (t *Translator) toolResult(ctx context.Context, res toolResult) error {
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

func (t *Translator) emitCall(ctx context.Context, c *call, r result) error {
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
