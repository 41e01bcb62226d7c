package otel

import (
	"encoding/json"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The attributes read, as named by the OpenTelemetry GenAI semantic
// conventions (docs/otel.md lists where each was verified).
const (
	attrOperation      = "gen_ai.operation.name"
	attrConversationID = "gen_ai.conversation.id"
	attrAgentName      = "gen_ai.agent.name"
	attrAgentVersion   = "gen_ai.agent.version"
	attrRequestModel   = "gen_ai.request.model"
	attrResponseModel  = "gen_ai.response.model"
	attrInputMessages  = "gen_ai.input.messages"
	attrToolName       = "gen_ai.tool.name"
	attrToolArguments  = "gen_ai.tool.call.arguments"
	attrErrorType      = "error.type"
	attrServiceName    = "service.name"
	attrServiceVersion = "service.version"
)

// Operations (gen_ai.operation.name values) the mapping reads.
const (
	opInvokeAgent = "invoke_agent"
	opExecuteTool = "execute_tool"
)

// inference operations: each span is one model call, an iteration of the
// agent loop.
var inference = map[string]bool{"chat": true, "text_completion": true, "generate_content": true}

// span is what the mapping needs of one OTLP span, copied out of pdata so
// that buffered spans do not hold the request.
type span struct {
	trace, id, parent string // lower-case hex
	start, end        time.Time
	op                string
	conversation      string
	agentName         string
	agentVersion      string
	model             string
	goal              string
	tool              string
	args              []byte // nil when not recorded
	failed            bool
	errMsg, errType   string
	service, version  string // resource service.name, service.version
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
		trace:        sp.TraceID().String(),
		id:           sp.SpanID().String(),
		start:        sp.StartTimestamp().AsTime(),
		end:          sp.EndTimestamp().AsTime(),
		op:           str(a, attrOperation),
		conversation: str(a, attrConversationID),
		agentName:    str(a, attrAgentName),
		agentVersion: str(a, attrAgentVersion),
		model:        str(a, attrRequestModel),
		tool:         str(a, attrToolName),
		errType:      str(a, attrErrorType),
		service:      str(res, attrServiceName),
		version:      str(res, attrServiceVersion),
	}
	if !sp.ParentSpanID().IsEmpty() {
		s.parent = sp.ParentSpanID().String()
	}
	if s.model == "" {
		s.model = str(a, attrResponseModel)
	}
	if v, ok := a.Get(attrToolArguments); ok {
		s.args = rawJSON(v)
	}
	if v, ok := a.Get(attrInputMessages); ok {
		s.goal = firstUserText(rawJSON(v))
	}
	if sp.Status().Code() == ptrace.StatusCodeError || s.errType != "" {
		s.failed = true
		s.errMsg = sp.Status().Message()
	}
	return s, true
}

func str(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		return v.AsString()
	}
	return ""
}

// rawJSON returns an attribute holding JSON as JSON: a string attribute's
// content (instrumentations record arguments as a JSON string), a
// structured one encoded.
func rawJSON(v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return []byte(v.Str())
	case pcommon.ValueTypeEmpty:
		return nil
	}
	b, err := json.Marshal(v.AsRaw())
	if err != nil {
		return nil
	}
	return b
}

// firstUserText returns the text of the first user message of
// gen_ai.input.messages ([{role, parts: [{type: "text", content}]}]), ""
// when there is none.
func firstUserText(b []byte) string {
	var msgs []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type    string `json:"type"`
			Content any    `json:"content"`
		} `json:"parts"`
	}
	if json.Unmarshal(b, &msgs) != nil {
		return ""
	}
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		var texts []string
		for _, p := range m.Parts {
			if c, ok := p.Content.(string); ok && p.Type == "text" {
				texts = append(texts, c)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
	}
	return ""
}
