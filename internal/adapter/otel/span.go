package otel

import (
	"encoding/json"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// kind is what a span is to the mapping, whatever convention named it.
type kind uint8

const (
	kindOther    kind = iota // read for its place in the trace only
	kindAgent                // an agent run (invoke_agent, AGENT, traceloop agent)
	kindWorkflow             // a run above or without an agent (invoke_workflow, CHAIN, traceloop workflow, ai.generateText)
	kindModel                // one model call: an iteration of the agent loop
	kindTool                 // one tool call
	kindPlan                 // a planning boundary (the GenAI plan operation)
)

// mappable reports whether a span of k makes its trace a session.
func (k kind) mappable() bool { return k != kindOther }

// usage is a model call's token counts, each with whether the span
// carried it.
type usage struct {
	input, output, cached         int64
	hasIn, hasOut, hasCached, has bool // has: any of them
}

// span is what the mapping needs of one OTLP span, copied out of pdata so
// that buffered spans do not hold the request. A convention's reader
// (conventions.go) fills it.
type span struct {
	trace, id, parent string // lower-case hex
	start, end        time.Time
	name              string
	convention        string // the convention that classified it, "" for kindOther
	kind              kind
	conversation      string // the session id a convention carries
	request           string // the request (turn, prompt) within it a convention carries
	awaitsPrompt      bool   // a run whose prompt and request id are only in a log record (Claude Code's interaction)
	logged            bool   // a tool call whose arguments and outcome are only in a log record (Claude Code's, Codex's)
	agentName         string
	agentVersion      string
	model             string
	goal              string // the user's first message
	output            string // a model call's output text (a plan span's content)
	tool, callID      string
	args              []byte // a tool call's arguments; nil when not recorded
	failed            bool
	errMsg, errType   string
	service, version  string // resource service.name, service.version
	usage             usage
}

func (s *span) duration() time.Duration { return max(s.end.Sub(s.start), 0) }

// readSpan copies sp (with its resource's attributes res); false when the
// span has no trace or span id, which the mapping cannot key.
func readSpan(sp ptrace.Span, res pcommon.Map) (*span, bool) {
	if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
		return nil, false
	}
	a := sp.Attributes()
	s := &span{
		trace:   sp.TraceID().String(),
		id:      sp.SpanID().String(),
		start:   sp.StartTimestamp().AsTime(),
		end:     sp.EndTimestamp().AsTime(),
		name:    sp.Name(),
		errType: str(a, attrErrorType),
		service: str(res, attrServiceName),
		version: str(res, attrServiceVersion),
	}
	if !sp.ParentSpanID().IsEmpty() {
		s.parent = sp.ParentSpanID().String()
	}
	classify(s, a)
	if sp.Status().Code() == ptrace.StatusCodeError || s.errType != "" {
		s.failed = true
		s.errMsg = sp.Status().Message()
		if s.errMsg == "" {
			s.errMsg = exceptionMessage(sp)
		}
	}
	return s, true
}

// exceptionMessage is the message of the span's last exception event
// (recordException), "" when it has none.
func exceptionMessage(sp ptrace.Span) string {
	msg := ""
	for _, ev := range sp.Events().All() {
		if ev.Name() == "exception" {
			msg = str(ev.Attributes(), "exception.message")
		}
	}
	return msg
}

func str(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		return v.AsString()
	}
	return ""
}

// first returns the first of keys that m holds, as a string.
func first(m pcommon.Map, keys ...string) string {
	for _, k := range keys {
		if v, ok := m.Get(k); ok {
			if s := v.AsString(); s != "" {
				return s
			}
		}
	}
	return ""
}

// count reads the first of keys that m holds as a token count: an int, or
// a double or string holding a whole non-negative number. ok is false when
// none holds one.
func count(m pcommon.Map, keys ...string) (int64, bool) {
	for _, k := range keys {
		v, ok := m.Get(k)
		if !ok {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeInt:
			if n := v.Int(); n >= 0 {
				return n, true
			}
		case pcommon.ValueTypeDouble:
			if f := v.Double(); f >= 0 && f == float64(int64(f)) {
				return int64(f), true
			}
		case pcommon.ValueTypeStr:
			var n int64
			if json.Unmarshal([]byte(v.Str()), &n) == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// tokens reads a model call's usage from the keys of each count.
func tokens(m pcommon.Map, input, output, cached []string) usage {
	var u usage
	u.input, u.hasIn = count(m, input...)
	u.output, u.hasOut = count(m, output...)
	u.cached, u.hasCached = count(m, cached...)
	u.has = u.hasIn || u.hasOut || u.hasCached
	return u
}

// rawJSON returns an attribute holding JSON as JSON: a string attribute's
// content (instrumentations record arguments as a JSON string), a
// structured one encoded; nil when absent or empty.
func rawJSON(m pcommon.Map, keys ...string) []byte {
	for _, k := range keys {
		v, ok := m.Get(k)
		if !ok {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeStr:
			return []byte(v.Str())
		case pcommon.ValueTypeEmpty:
			continue
		}
		if b, err := json.Marshal(v.AsRaw()); err == nil {
			return b
		}
	}
	return nil
}

// outputText returns the text of the first message in b, a JSON message
// list (gen_ai.output.messages: [{role, parts: [{type: "text", content}]}],
// or {role, content}); "" when there is none or b is not one.
func outputText(b []byte) string {
	var msgs []map[string]any
	if len(b) == 0 || json.Unmarshal(b, &msgs) != nil {
		return ""
	}
	for _, m := range msgs {
		if t := partsText(cmpOr(m["content"], m["parts"])); t != "" {
			return t
		}
	}
	return ""
}
