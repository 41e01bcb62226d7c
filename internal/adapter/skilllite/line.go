package skilllite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/evosignal/evosignal/internal/adapter/records"
	"github.com/evosignal/evosignal/internal/events"
)

// This file reads SkillLite's agent-rpc JSON lines into typed values. It
// knows the wire format and nothing about evosignal sessions.
//
// A line is one JSON object, either a request
//
//	{"method": "agent_chat", "params": {"message": "…", "session_key": "…", "config": {"model": "…"}}}
//
// or an event
//
//	{"event": "tool_call", "data": {…}}
//
// and may carry a timestamp at the top level ("ts", "timestamp" or "time":
// an RFC 3339 string, or a number of Unix seconds, or of Unix milliseconds
// when it is 10^12 or more), as a recorder would add. The data members the
// bridge reads, with the variants it accepts (the first one present wins):
//
//	task_plan      tasks: [{id ≥ 1, description, tool_hint (string, null or absent; "" means none), completed (absent: false)}]
//	task_progress  task_id ≥ 1, completed (absent: true), tasks (the whole plan after the change; may be absent)
//	tool_call      name | tool | tool_name; arguments | args | input (a JSON object, or a string holding one); tool_call_id | id
//	tool_result    name | tool | tool_name; result | content | output (any JSON; a string is taken as is);
//	               is_error | success (negated) | ok (negated) as the error flag, else an "error" member that is a
//	               non-empty string or an object means failure; tool_call_id | id
//	llm_usage      nothing: the line is one LLM call of the agent loop
//	done           completion_type, task_completed (bool), tool_calls | tool_calls_count (the agent's count, compared)
//	error          message | error
//
// What SkillLite itself writes is the first spelling of each, with no
// timestamp (skilllite-agent/src/rpc.rs:116-122, 195-214, 407-430, 680-712);
// the other spellings are variants of recorders and older versions, tolerated.
// Members not listed are ignored. A member of the wrong type makes the line
// malformed; so do bad JSON, a value that is not an object, and an object
// with neither "event" nor "method".

// lineKind is what a line is, as far as the translator cares.
type lineKind int

const (
	kindBlank        lineKind = iota // empty or white space
	kindChat                         // an agent_chat request: a turn starts
	kindOtherRequest                 // another request (confirm, ping, …): ignored
	kindTaskPlan
	kindTaskProgress
	kindToolCall
	kindToolResult
	kindLLMUsage
	kindDone
	kindError
	kindUnknownEvent // text_chunk, text, usage, confirmation_request, pong, …: ignored
)

// rpcLine is one parsed line. Only the member for its kind is set.
type rpcLine struct {
	kind  lineKind
	name  string    // the event or method name
	raw   []byte    // the line, trimmed
	at    time.Time // the line's timestamp; zero when it has none
	chat  chatRequest
	tasks []events.Task
	prog  taskProgress
	call  toolCall
	res   toolResult
	done  doneData
	usage llmUsage
	err   string // the message of an error event
}

// llmUsage is an llm_usage line: one model response's tokens, each nil
// when the line does not say.
type llmUsage struct {
	input, output, cached *int64
}

type chatRequest struct {
	message    string
	hasMessage bool
	sessionKey string
	model      string // params.config.model, if given
}

type taskProgress struct {
	taskID    int64
	completed bool
	tasks     []events.Task // the whole plan after the change; nil when absent
	hasTasks  bool
}

type toolCall struct {
	id   string
	name string
	args object // nil when absent or not a JSON object
	// raw is the arguments as the agent sent them: the string's content, or
	// the object's JSON; "" when absent.
	raw string
}

type toolResult struct {
	id        string
	name      string
	isError   bool
	text      string
	elapsedMS int64 // from a transcript; -1 when unknown
}

type doneData struct {
	completionType   string
	taskCompleted    bool
	hasTaskCompleted bool
	toolCalls        int64 // the agent's own count, -1 when absent or not a count
}

// parseLine parses one line. The error says what is wrong with it, with the
// JSON path of the offending member.
func parseLine(raw []byte) (rpcLine, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return rpcLine{kind: kindBlank}, nil
	}
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return rpcLine{}, fmt.Errorf("not JSON: %w", err)
	}
	if k := records.JSONKind(raw); k != "object" {
		return rpcLine{}, fmt.Errorf("want a JSON object, got %s", k)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return rpcLine{}, fmt.Errorf("not JSON: %w", err)
	}
	top := object{m: m}
	var l rpcLine
	at, err := top.timestamp()
	if err != nil {
		return rpcLine{}, err
	}
	l.at = at
	event, isEvent, err := top.str("event")
	if err != nil {
		return rpcLine{}, err
	}
	if isEvent {
		data, _, err := top.obj("data")
		if err != nil {
			return rpcLine{}, err
		}
		l.name = event
		return l, l.parseEvent(data)
	}
	method, isRequest, err := top.str("method")
	if err != nil {
		return rpcLine{}, err
	}
	if !isRequest {
		return rpcLine{}, errors.New(`neither "event" nor "method"`)
	}
	l.name = method
	if method != "agent_chat" {
		l.kind = kindOtherRequest
		return l, nil
	}
	l.kind = kindChat
	params, _, err := top.obj("params")
	if err != nil {
		return rpcLine{}, err
	}
	if l.chat.message, l.chat.hasMessage, err = params.str("message"); err != nil {
		return rpcLine{}, err
	}
	if l.chat.sessionKey, _, err = params.str("session_key"); err != nil {
		return rpcLine{}, err
	}
	cfg, _, err := params.obj("config")
	if err != nil {
		return rpcLine{}, err
	}
	if l.chat.model, _, err = cfg.str("model"); err != nil {
		return rpcLine{}, err
	}
	return l, nil
}

func (l *rpcLine) parseEvent(data object) error {
	var err error
	switch l.name {
	case "task_plan":
		l.kind = kindTaskPlan
		l.tasks, err = data.tasks("tasks")
	case "task_progress":
		l.kind = kindTaskProgress
		var ok bool
		if l.prog.taskID, ok, err = data.id("task_id"); err == nil && !ok {
			err = fmt.Errorf("%s: missing", data.at("task_id"))
		}
		if err == nil {
			var has bool
			l.prog.completed, has, err = data.boolean("completed")
			if !has {
				l.prog.completed = true
			}
		}
		if _, ok := data.get("tasks"); ok && err == nil {
			l.prog.tasks, err = data.tasks("tasks")
			l.prog.hasTasks = err == nil
		}
	case "tool_call":
		l.kind = kindToolCall
		err = l.parseToolCall(data)
	case "tool_result":
		l.kind = kindToolResult
		err = l.parseToolResult(data)
	case "llm_usage":
		l.kind = kindLLMUsage
		err = l.usage.parse(data)
	case "done":
		l.kind = kindDone
		if l.done.completionType, _, err = data.str("completion_type"); err != nil {
			return err
		}
		if l.done.taskCompleted, l.done.hasTaskCompleted, err = data.boolean("task_completed"); err != nil {
			return err
		}
		// The agent's count is only compared with the bridge's own tally,
		// so a value of another shape is not worth dropping the line for.
		l.done.toolCalls = -1
		for _, k := range []string{"tool_calls", "tool_calls_count"} {
			if n, ok, err := data.count(k); err == nil && ok {
				l.done.toolCalls = n
				break
			}
		}
	case "error":
		l.kind = kindError
		// Whatever shape the message has, the error ends the turn.
		l.err = data.text("message", "error")
	default:
		l.kind = kindUnknownEvent
	}
	return err
}

func (l *rpcLine) parseToolCall(data object) error {
	name, _, err := data.firstStr("name", "tool", "tool_name")
	if err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("%s: missing tool name", data.at("name"))
	}
	id, _, err := data.firstStr("tool_call_id", "id")
	if err != nil {
		return err
	}
	l.call = toolCall{id: id, name: name}
	for _, k := range []string{"arguments", "args", "input"} {
		raw, ok := data.get(k)
		if !ok {
			continue
		}
		switch records.JSONKind(raw) {
		case "object":
			l.call.args, _ = parseObject(raw, data.at(k))
			l.call.raw = string(raw)
		case "string":
			// A JSON-encoded string, as SkillLite sends it. Arguments that
			// do not parse are the model's mistake, not the line's: the
			// call still happened (and the tool will likely fail).
			var s string
			if err := json.Unmarshal(raw, &s); err == nil {
				l.call.args, _ = parseObject([]byte(s), data.at(k))
				l.call.raw = s
			}
		default:
			return fmt.Errorf("%s: want an object or a string, got %s", data.at(k), records.JSONKind(raw))
		}
		return nil
	}
	return nil
}

func (l *rpcLine) parseToolResult(data object) error {
	name, _, err := data.firstStr("name", "tool", "tool_name")
	if err != nil {
		return err
	}
	id, _, err := data.firstStr("tool_call_id", "id")
	if err != nil {
		return err
	}
	l.res = toolResult{id: id, name: name, text: data.text("result", "content", "output"), elapsedMS: -1}
	flagged := false
	for _, f := range []struct {
		key     string
		negated bool
	}{{"is_error", false}, {"success", true}, {"ok", true}} {
		v, ok, err := data.boolean(f.key)
		if err != nil {
			return err
		}
		if ok {
			l.res.isError = v != f.negated
			flagged = true
			break
		}
	}
	errText := data.text("error")
	if !flagged {
		raw, ok := data.get("error")
		l.res.isError = ok && (records.JSONKind(raw) == "object" || records.JSONKind(raw) == "string" && errText != "")
	}
	if l.res.isError && l.res.text == "" {
		l.res.text = errText
	}
	return nil
}

// parse reads an llm_usage line's counts: prompt_tokens (cached ones
// included) and completion_tokens as SkillLite writes them, or
// input_tokens and output_tokens; the cached ones from
// prompt_tokens_details.cached_tokens. A count that is not a non-negative
// integer is an error: the line is not read, its tokens never summed.
func (u *llmUsage) parse(data object) error {
	read := func(o object, keys ...string) (*int64, error) {
		for _, k := range keys {
			n, ok, err := o.count(k)
			if err != nil {
				return nil, err
			}
			if ok {
				return &n, nil
			}
		}
		return nil, nil
	}
	var err error
	if u.input, err = read(data, "prompt_tokens", "input_tokens"); err != nil {
		return err
	}
	if u.output, err = read(data, "completion_tokens", "output_tokens"); err != nil {
		return err
	}
	if d, ok, err := data.obj("prompt_tokens_details"); err != nil {
		return err
	} else if ok {
		if u.cached, err = read(d, "cached_tokens"); err != nil {
			return err
		}
	}
	return nil
}
