package otel

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/evosignal/evosignal/internal/adapter/codex"
)

// logRec is what the mapping takes of one OTLP log record: the coding CLIs
// (Claude Code, Codex) put what their spans lack — a tool call's arguments,
// its outcome, the prompt and its id — in log records emitted inside the
// spans (docs/otel.md, "Logs"). A record joins its trace by its trace id,
// and a tool span by the call id.
type logRec struct {
	trace        string
	name         string // tool_result or user_prompt, without the CLI's prefix
	time         time.Time
	conversation string
	request      string // prompt.id
	callID, tool string
	args         []byte
	output       string
	okKnown, ok  bool // the record's success flag, when it has one
	errMsg       string
	prompt       string
}

func (r *logRec) key() string {
	return "log/" + r.name + "/" + r.callID + "/" + r.request + "/" + fmt.Sprint(r.time.UnixNano())
}

func (r *logRec) size() int64 {
	return int64(len(r.trace)+len(r.name)+len(r.conversation)+len(r.request)+len(r.callID)+len(r.tool)+
		len(r.args)+len(r.output)+len(r.errMsg)+len(r.prompt)) + spanOverhead
}

// The log records read, by their event name (the event.name attribute,
// the record's EventName, or its body) without a "claude_code." or "codex."
// prefix.
const (
	logToolResult = "tool_result"
	logUserPrompt = "user_prompt"
)

// readLog copies lr (with its resource's attributes res); false for a
// record the mapping does not read.
func readLog(lr plog.LogRecord, res pcommon.Map) (*logRec, bool) {
	a := lr.Attributes()
	name := cmp.Or(str(a, "event.name"), lr.EventName())
	if name == "" && lr.Body().Type() == pcommon.ValueTypeStr {
		name = lr.Body().Str()
	}
	name = strings.TrimPrefix(strings.TrimPrefix(name, "claude_code."), "codex.")
	if name != logToolResult && name != logUserPrompt {
		return nil, false
	}
	r := &logRec{
		name:         name,
		time:         lr.Timestamp().AsTime(),
		conversation: first(a, attrSessionID, "conversation.id", attrConversationID),
		request:      str(a, "prompt.id"),
	}
	if !lr.TraceID().IsEmpty() {
		r.trace = lr.TraceID().String()
	}
	if lr.Timestamp() == 0 {
		r.time = lr.ObservedTimestamp().AsTime()
	}
	switch name {
	case logToolResult:
		r.callID = first(a, "tool_use_id", "call_id", attrToolCallID)
		r.tool = first(a, "tool_name", attrToolName)
		r.args = rawJSON(a, "tool_input", "arguments", attrToolArguments)
		r.output = str(a, "output")
		if v, ok := a.Get("success"); ok {
			r.okKnown, r.ok = true, v.AsString() == "true"
		}
		r.errMsg = first(a, "error", "error_type")
		if code, known := codex.ExitCode(r.output); known && code != 0 {
			// Codex: success is "true" for a command that failed; its
			// output states the exit code.
			r.okKnown, r.ok = true, false
			r.errMsg = cmp.Or(r.errMsg, fmt.Sprintf("exit code %d", code))
		}
	case logUserPrompt:
		r.prompt = first(a, "prompt", "prompt_text")
	}
	return r, r.trace != ""
}

// ConsumeLogs takes the log records of ld, received at now: the ones the
// mapping reads join their trace (which they may reach before its spans
// do), and every trace they complete is mapped or settles, as in Consume.
// Consumed.Unjoined counts the records read but without a trace id.
func (m *Mapper) ConsumeLogs(ctx context.Context, ld plog.Logs, now time.Time) (Consumed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c Consumed
	var ready []*traceBuf
	queued := map[*traceBuf]bool{}
	for _, rl := range ld.ResourceLogs().All() {
		res := rl.Resource().Attributes()
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				m.stats.LogRecords++
				r, ok := readLog(lr, res)
				switch {
				case !ok && r != nil:
					c.Unjoined++
					continue
				case !ok:
					continue
				}
				m.stats.LogsRead++
				if b := m.addLog(r, now); b != nil && !queued[b] {
					queued[b] = true
					b.inputs++
					ready = append(ready, b)
				}
			}
		}
	}
	m.stats.LogsUnjoined += c.Unjoined
	return c, m.settle(ctx, ready, &c)
}

// addLog buffers r in its trace and returns the trace, nil when r was
// dropped.
func (m *Mapper) addLog(r *logRec, now time.Time) *traceBuf {
	if m.done.has(r.trace) {
		m.stats.LogsAfterMapped++
		return nil
	}
	b := m.pending.get(r.trace)
	if !m.pending.addLog(b, r, now) {
		return b
	}
	return m.bound(b)
}
