package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
//	task_progress  task_id ≥ 1, completed (absent: true)
//	tool_call      name | tool | tool_name; arguments | args | input (a JSON object, or a string holding one); id | tool_call_id
//	tool_result    name | tool | tool_name; result | content | output (any JSON; a string is taken as is);
//	               is_error | success (negated) | ok (negated) as the error flag, else an "error" member that is a
//	               non-empty string or an object means failure; id | tool_call_id
//	done           completion_type, task_completed (bool), tool_calls | tool_calls_count (only compared, see translator)
//	error          message | error
//
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
	kindDone
	kindError
	kindUnknownEvent // text_chunk, text, usage, confirmation_request, pong, …: ignored
)

// rpcLine is one parsed line. Only the member for its kind is set.
type rpcLine struct {
	kind  lineKind
	name  string    // the event or method name
	at    time.Time // the line's timestamp; zero when it has none
	chat  chatRequest
	tasks []events.Task
	prog  taskProgress
	call  toolCall
	res   toolResult
	done  doneData
	err   string // the message of an error event
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
}

type toolCall struct {
	id   string
	name string
	args object // nil when absent or not a JSON object
}

type toolResult struct {
	id      string
	name    string
	isError bool
	text    string
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
	if k := jsonKind(raw); k != "object" {
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
	case "tool_call":
		l.kind = kindToolCall
		err = l.parseToolCall(data)
	case "tool_result":
		l.kind = kindToolResult
		err = l.parseToolResult(data)
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
	id, _, err := data.firstStr("id", "tool_call_id")
	if err != nil {
		return err
	}
	l.call = toolCall{id: id, name: name}
	for _, k := range []string{"arguments", "args", "input"} {
		raw, ok := data.get(k)
		if !ok {
			continue
		}
		switch jsonKind(raw) {
		case "object":
			l.call.args, _ = parseObject(raw, data.at(k))
		case "string":
			// A JSON-encoded string, as SkillLite sends it. Arguments that
			// do not parse are the model's mistake, not the line's: the
			// call still happened (and the tool will likely fail).
			var s string
			if err := json.Unmarshal(raw, &s); err == nil {
				l.call.args, _ = parseObject([]byte(s), data.at(k))
			}
		default:
			return fmt.Errorf("%s: want an object or a string, got %s", data.at(k), jsonKind(raw))
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
	id, _, err := data.firstStr("id", "tool_call_id")
	if err != nil {
		return err
	}
	l.res = toolResult{id: id, name: name, text: data.text("result", "content", "output")}
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
		l.res.isError = ok && (jsonKind(raw) == "object" || jsonKind(raw) == "string" && errText != "")
	}
	if l.res.isError && l.res.text == "" {
		l.res.text = errText
	}
	return nil
}

// object is a JSON object whose members are read with type checks. path is
// where it sits in the line, for error messages; the zero value is an empty
// object at the top level.
type object struct {
	m    map[string]json.RawMessage
	path string
}

func parseObject(raw []byte, path string) (object, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return object{}, fmt.Errorf("%s: want an object", path)
	}
	return object{m: m, path: path}, nil
}

// at is the path of member key, e.g. data.tasks.
func (o object) at(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// get returns member key unless it is absent or null.
func (o object) get(key string) (json.RawMessage, bool) {
	raw, ok := o.m[key]
	if !ok || jsonKind(raw) == "null" {
		return nil, false
	}
	return raw, true
}

func (o object) str(key string) (string, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return "", false, nil
	}
	var s string
	if jsonKind(raw) != "string" || json.Unmarshal(raw, &s) != nil {
		return "", false, fmt.Errorf("%s: want a string, got %s", o.at(key), jsonKind(raw))
	}
	return s, true, nil
}

// firstStr returns the first of keys present as a string.
func (o object) firstStr(keys ...string) (string, bool, error) {
	for _, k := range keys {
		s, ok, err := o.str(k)
		if err != nil || ok {
			return s, ok, err
		}
	}
	return "", false, nil
}

// text returns the first of keys present as text: a string as is, any other
// JSON value as its JSON; "" when none is present.
func (o object) text(keys ...string) string {
	for _, k := range keys {
		raw, ok := o.get(k)
		if !ok {
			continue
		}
		var s string
		if jsonKind(raw) == "string" && json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	return ""
}

func (o object) boolean(key string) (bool, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return false, false, nil
	}
	switch string(raw) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, fmt.Errorf("%s: want a boolean, got %s", o.at(key), jsonKind(raw))
}

func (o object) obj(key string) (object, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return object{path: o.at(key)}, false, nil
	}
	if jsonKind(raw) != "object" {
		return object{}, false, fmt.Errorf("%s: want an object, got %s", o.at(key), jsonKind(raw))
	}
	obj, err := parseObject(raw, o.at(key))
	return obj, err == nil, err
}

// maxInt is the largest integer of the contract (2^53-1).
const maxInt = 1<<53 - 1

// integer reads member key as an integer in [min, 2^53-1]; 3.0 and 3e0
// count as 3, as in the contract.
func (o object) integer(key string, min int64) (int64, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return 0, false, nil
	}
	bad := fmt.Errorf("%s: want an integer ≥ %d, got %s", o.at(key), min, abbrev(raw))
	if jsonKind(raw) != "number" {
		return 0, false, bad
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(raw), 64)
		if ferr != nil || f != math.Trunc(f) || f < math.MinInt64 || f > maxInt {
			return 0, false, bad
		}
		n = int64(f)
	}
	if n < min || n > maxInt {
		return 0, false, bad
	}
	return n, true, nil
}

func (o object) id(key string) (int64, bool, error)    { return o.integer(key, 1) }
func (o object) count(key string) (int64, bool, error) { return o.integer(key, 0) }

// tasks reads member key as a task list. Ids must be unique.
func (o object) tasks(key string) ([]events.Task, error) {
	raw, ok := o.get(key)
	if !ok {
		return nil, fmt.Errorf("%s: missing", o.at(key))
	}
	var elems []json.RawMessage
	if jsonKind(raw) != "array" || json.Unmarshal(raw, &elems) != nil {
		return nil, fmt.Errorf("%s: want an array, got %s", o.at(key), jsonKind(raw))
	}
	tasks := make([]events.Task, 0, len(elems))
	seen := make(map[int64]bool, len(elems))
	for i, e := range elems {
		path := fmt.Sprintf("%s[%d]", o.at(key), i)
		if jsonKind(e) != "object" {
			return nil, fmt.Errorf("%s: want an object, got %s", path, jsonKind(e))
		}
		t, err := parseObject(e, path)
		if err != nil {
			return nil, err
		}
		var task events.Task
		if task.ID, ok, err = t.id("id"); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("%s: missing", t.at("id"))
		}
		if seen[task.ID] {
			return nil, fmt.Errorf("%s: task id %d appears twice", t.at("id"), task.ID)
		}
		seen[task.ID] = true
		if task.Description, _, err = t.str("description"); err != nil {
			return nil, err
		}
		hint, _, err := t.str("tool_hint")
		if err != nil {
			return nil, err
		}
		if hint != "" {
			task.ToolHint = &hint
		}
		if task.Completed, _, err = t.boolean("completed"); err != nil {
			return nil, err
		}
		tasks = append(tasks, task)
	}
	return tasks, nil
}

// timestamp reads the line's timestamp, if it has one.
func (o object) timestamp() (time.Time, error) {
	for _, k := range []string{"ts", "timestamp", "time"} {
		raw, ok := o.get(k)
		if !ok {
			continue
		}
		var at time.Time
		switch jsonKind(raw) {
		case "string":
			s, _, _ := o.str(k)
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return time.Time{}, fmt.Errorf("%s: not an RFC 3339 time: %q", k, s)
			}
			at = t
		case "number":
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil || f < 0 {
				return time.Time{}, fmt.Errorf("%s: not a Unix time: %s", k, raw)
			}
			if f >= 1e12 {
				f /= 1000 // milliseconds
			}
			sec, frac := math.Modf(f)
			at = time.Unix(int64(sec), int64(frac*1e9))
		default:
			return time.Time{}, fmt.Errorf("%s: want a string or a number, got %s", k, jsonKind(raw))
		}
		if y := at.UTC().Year(); y < 1 || y > 9999 {
			return time.Time{}, fmt.Errorf("%s: year %d out of range", k, y)
		}
		return at, nil
	}
	return time.Time{}, nil
}

// jsonKind names the kind of a valid JSON value by its first byte.
func jsonKind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// abbrev shows a JSON value in an error message, cut to 40 bytes.
func abbrev(raw []byte) string {
	s := string(raw)
	if len(s) > 40 {
		s = strings.ToValidUTF8(s[:40], "") + "…"
	}
	return s
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

// lineReader reads lines of any length up to max bytes; longer lines are
// reported as such, not returned, and reading goes on after them.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 1<<16), max: max}
}

// next returns the next line without its line ending, or io.EOF after the
// last one. tooLong reports a line longer than max (line is then nil).
func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	l.buf = l.buf[:0]
	got := false
	for {
		frag, more, err := l.r.ReadLine()
		if err != nil {
			if got && errors.Is(err, io.EOF) {
				break
			}
			return nil, false, err
		}
		got = true
		if len(l.buf)+len(frag) > l.max {
			tooLong = true
			l.buf = l.buf[:0]
		} else if !tooLong {
			l.buf = append(l.buf, frag...)
		}
		if !more {
			break
		}
	}
	if tooLong {
		return nil, true, nil
	}
	return l.buf, false, nil
}

// buffered reports whether input is waiting, so that a caller can flush its
// output before it would block.
func (l *lineReader) buffered() bool { return l.r.Buffered() > 0 }
