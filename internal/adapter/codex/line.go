package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Line is one line of a rollout as far as the adapter reads it: every line
// is {"timestamp": RFC 3339, "type": …, "payload": {…}} (an "ordinal" too,
// since 0.16x; not needed).
type Line struct {
	Time    time.Time
	Type    string // session_meta, turn_context, response_item, event_msg, …
	Payload payload
}

// payload holds the members of every payload the adapter reads; which are
// set depends on Line.Type and payload.Type.
type payload struct {
	Type string `json:"type"`

	// session_meta
	ID         string `json:"id"`
	CLIVersion string `json:"cli_version"`
	Cwd        string `json:"cwd"`

	// turn_context, task_started, task_complete, turn_aborted
	TurnID string `json:"turn_id"`
	Model  string `json:"model"`
	Reason string `json:"reason"`

	// response_item function_call / custom_tool_call and their outputs
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`

	// response_item message
	Role    string    `json:"role"`
	Content []content `json:"content"`

	// event_msg item_completed, user_message, error, token_count
	Item    *item           `json:"item"`
	Message string          `json:"message"`
	Info    json.RawMessage `json:"info"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// item is an event_msg item_completed's item.
type item struct {
	Type            string    `json:"type"` // CommandExecution, UserMessage, AgentMessage, …
	ID              string    `json:"id"`
	Command         []string  `json:"command"`
	Status          string    `json:"status"`
	AggregatedOut   string    `json:"aggregated_output"`
	ExitCode        *int      `json:"exit_code"`
	Content         []content `json:"content"`
	Source          string    `json:"source"`
	DurationLiteral *struct {
		Secs  int64 `json:"secs"`
		Nanos int64 `json:"nanos"`
	} `json:"duration"`
}

// DecodeLine decodes one rollout line. A line that is not a JSON object
// with a timestamp, a type and an object payload is an error: the caller
// skips it as malformed.
func DecodeLine(b []byte) (Line, error) {
	var raw struct {
		Timestamp string          `json:"timestamp"`
		Type      string          `json:"type"`
		Payload   json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Line{}, fmt.Errorf("not a rollout line: %w", err)
	}
	switch {
	case raw.Type == "":
		return Line{}, errors.New("not a rollout line: no type")
	case raw.Timestamp == "":
		return Line{}, errors.New("not a rollout line: no timestamp")
	case len(raw.Payload) == 0 || raw.Payload[0] != '{':
		return Line{}, errors.New("not a rollout line: payload is not an object")
	}
	at, err := time.Parse(time.RFC3339Nano, raw.Timestamp)
	if err != nil {
		return Line{}, fmt.Errorf("not a rollout line: timestamp: %w", err)
	}
	l := Line{Time: at.UTC(), Type: raw.Type}
	if err := json.Unmarshal(raw.Payload, &l.Payload); err != nil {
		return Line{}, fmt.Errorf("%s payload: %w", raw.Type, err)
	}
	return l, nil
}

// outputText returns a function or custom tool call's output as text, and
// whether it says the call failed (success false). The output is a string
// (0.1xx), an array of content items (code mode), or an object {content,
// success} (older versions).
func outputText(raw json.RawMessage) (text string, failed bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false
	}
	var items []content
	if json.Unmarshal(raw, &items) == nil {
		var b strings.Builder
		for _, it := range items {
			b.WriteString(it.Text)
		}
		return b.String(), false
	}
	var obj struct {
		Content json.RawMessage `json:"content"`
		Success *bool           `json:"success"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		t, _ := outputText(obj.Content)
		return t, obj.Success != nil && !*obj.Success
	}
	return string(raw), false
}

var exitLine = regexp.MustCompile(`(?m)^(?:Process exited with code|Exit code:) (-?\d+)$`)

// ExitCode returns the exit code a command's output states: "Process
// exited with code N" (exec_command), "Exit code: N" (shell, apply_patch),
// or the JSON {"output", "metadata": {"exit_code"}} of the older shell
// tool; ok is false when it states none (a command still running).
func ExitCode(text string) (code int, ok bool) {
	var js struct {
		Metadata *struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
		ExitCode *int `json:"exit_code"`
	}
	if strings.HasPrefix(text, "{") && json.Unmarshal([]byte(text), &js) == nil {
		switch {
		case js.Metadata != nil && js.Metadata.ExitCode != nil:
			return *js.Metadata.ExitCode, true
		case js.ExitCode != nil:
			return *js.ExitCode, true
		}
	}
	m := exitLine.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// commandOutput is what a command printed: the text after the "Output:"
// line of an exec_command output, the whole text otherwise.
func commandOutput(text string) string {
	if _, after, ok := strings.Cut(text, "\nOutput:\n"); ok {
		return after
	}
	var js struct {
		Output string `json:"output"`
	}
	if strings.HasPrefix(text, "{") && json.Unmarshal([]byte(text), &js) == nil && js.Output != "" {
		return js.Output
	}
	return text
}
