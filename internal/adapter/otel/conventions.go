package otel

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The conventions a span is read by, each a table in docs/otel.md. One
// trace may mix them: each span is read by the first convention whose
// marker it carries, in this order.
const (
	conventionOpenInference = "openinference" // openinference.span.kind
	conventionOpenLLMetry   = "openllmetry"   // traceloop.span.kind, llm.request.type
	conventionVercel        = "vercel-ai"     // ai.operationId
	conventionGenAI         = "genai"         // gen_ai.operation.name, or a GenAI span name
	conventionCodex         = "codex"         // the Codex CLI's own spans (code.module.name codex_*)
)

// Attributes every convention shares.
const (
	attrErrorType      = "error.type"
	attrServiceName    = "service.name"
	attrServiceVersion = "service.version"
	attrSessionID      = "session.id" // OpenInference's, and a common general one
)

// classify fills s's kind and what that kind carries from a, the span's
// attributes, by the first convention that claims the span.
func classify(s *span, a pcommon.Map) {
	switch {
	case has(a, "openinference.span.kind"):
		readOpenInference(s, a)
	case has(a, "traceloop.span.kind"):
		readTraceloop(s, a)
	case has(a, "ai.operationId"):
		readVercel(s, a)
	case has(a, "llm.request.type"):
		readOpenLLMetryLLM(s, a)
	case strings.HasPrefix(str(a, "code.module.name"), "codex_"):
		readCodex(s, a)
	default:
		readGenAI(s, a)
	}
	if s.kind != kindOther && s.conversation == "" {
		s.conversation = str(a, attrSessionID)
	}
	// What any span may carry for the call or model call it is part of: a
	// tool call's id (Claude Code's tool.execution span, which holds the
	// call's outcome), a model call's tokens (Codex's handle_responses).
	if s.callID == "" {
		s.callID = str(a, attrToolCallID)
	}
	if !s.usage.has {
		s.usage = tokens(a, genAIInput, genAIOutput, genAICached)
	}
}

func has(m pcommon.Map, key string) bool { _, ok := m.Get(key); return ok }

// --- GenAI semantic conventions (current and older names) ---

// The GenAI attributes read.
const (
	attrOperation      = "gen_ai.operation.name"
	attrConversationID = "gen_ai.conversation.id"
	attrAgentName      = "gen_ai.agent.name"
	attrAgentVersion   = "gen_ai.agent.version"
	attrRequestModel   = "gen_ai.request.model"
	attrResponseModel  = "gen_ai.response.model"
	attrInputMessages  = "gen_ai.input.messages"
	attrOutputMessages = "gen_ai.output.messages"
	attrToolName       = "gen_ai.tool.name"
	attrToolCallID     = "gen_ai.tool.call.id"
	attrToolArguments  = "gen_ai.tool.call.arguments"
	attrToolArgsOld    = "gen_ai.tool.args" // older instrumentations (any-agent, ADK-era)
)

// GenAI token counts: current names first, then the older ones still
// emitted.
var (
	genAIInput  = []string{"gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"}
	genAIOutput = []string{"gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"}
	genAICached = []string{"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens", "gen_ai.usage.cached_tokens"}
)

// genAIKinds are the gen_ai.operation.name values read, and what each is.
var genAIKinds = map[string]kind{
	"invoke_agent":     kindAgent,
	"invoke_workflow":  kindWorkflow,
	"chat":             kindModel,
	"text_completion":  kindModel,
	"generate_content": kindModel,
	"call_llm":         kindModel, // older name (Google ADK, any-agent)
	"execute_tool":     kindTool,
	"plan":             kindPlan,
}

// genAIOperation is the operation of a span without gen_ai.operation.name
// whose name starts with one (ADK's "call_llm", "execute_tool get_weather")
// and that carries some gen_ai attribute; "" for none.
func genAIOperation(name string, a pcommon.Map) string {
	op, _, _ := strings.Cut(name, " ")
	if _, ok := genAIKinds[op]; !ok {
		return ""
	}
	for k := range a.All() {
		if strings.HasPrefix(k, "gen_ai.") {
			return op
		}
	}
	return ""
}

func readGenAI(s *span, a pcommon.Map) {
	op := str(a, attrOperation)
	if op == "" {
		op = genAIOperation(s.name, a)
	}
	k, ok := genAIKinds[op]
	if !ok {
		return
	}
	s.kind, s.convention = k, conventionGenAI
	s.conversation = str(a, attrConversationID)
	s.agentName = str(a, attrAgentName)
	s.agentVersion = str(a, attrAgentVersion)
	s.model = first(a, attrRequestModel, attrResponseModel)
	s.goal = userText(rawJSON(a, attrInputMessages))
	if s.name == "claude_code.interaction" {
		// Claude Code: the prompt's text, and its prompt.id in its log
		// records only.
		s.goal = cmp.Or(s.goal, str(a, "user_prompt"))
		s.awaitsPrompt = true
	}
	switch k {
	case kindTool:
		s.logged = strings.HasPrefix(s.name, "claude_code.")
		s.tool = str(a, attrToolName)
		if s.tool == "" {
			_, s.tool, _ = strings.Cut(s.name, " ") // "execute_tool {gen_ai.tool.name}"
		}
		s.callID = str(a, attrToolCallID)
		s.args = rawJSON(a, attrToolArguments, attrToolArgsOld)
	case kindModel, kindPlan:
		s.usage = tokens(a, genAIInput, genAIOutput, genAICached)
		s.output = outputText(rawJSON(a, attrOutputMessages))
	}
}

// --- The Codex CLI (its Rust tracing spans, exported whole) ---

// readCodex reads the few of Codex's spans that matter: run_turn (the
// agent run of one turn, conversation.id and turn.id), try_run_sampling_request
// (one model call; its tokens are on the handle_responses span under it), a
// tool dispatch span (codex.tool.phase dispatch: tool_name, call_id). The
// arguments and outputs are only in its codex.tool_result log records.
func readCodex(s *span, a pcommon.Map) {
	switch {
	case s.name == "run_turn":
		s.kind = kindAgent
		s.agentName = "codex"
	case s.name == "try_run_sampling_request":
		s.kind = kindModel
		s.model = str(a, "model")
	case str(a, "codex.tool.phase") == "dispatch" && has(a, "tool_name"):
		s.kind = kindTool
		s.tool = str(a, "tool_name")
		s.callID = str(a, "call_id")
		s.logged = true
	default:
		return
	}
	s.convention = conventionCodex
	s.conversation = str(a, "conversation.id")
	s.request = first(a, "turn.id", "turn_id")
}

// --- OpenInference (Arize Phoenix) ---

var (
	oiInput  = []string{"llm.token_count.prompt"}
	oiOutput = []string{"llm.token_count.completion"}
	oiCached = []string{"llm.token_count.prompt_details.cache_read"}
)

var oiKinds = map[string]kind{"AGENT": kindAgent, "CHAIN": kindWorkflow, "LLM": kindModel, "TOOL": kindTool}

func readOpenInference(s *span, a pcommon.Map) {
	k, ok := oiKinds[strings.ToUpper(str(a, "openinference.span.kind"))]
	if !ok {
		return
	}
	s.kind, s.convention = k, conventionOpenInference
	s.conversation = str(a, attrSessionID)
	switch k {
	case kindAgent, kindWorkflow:
		s.agentName = first(a, "agent.name", "graph.node.name")
		if s.agentName == "" && k == kindAgent {
			s.agentName = s.name
		}
		s.goal = inputText(a, "input.value", "input.mime_type")
	case kindModel:
		s.model = str(a, "llm.model_name")
		s.usage = tokens(a, oiInput, oiOutput, oiCached)
		s.goal = flatMessage(a, "llm.input_messages", "user")
		s.output = flatMessage(a, "llm.output_messages", "")
	case kindTool:
		s.tool = first(a, "tool.name", "tool_call.function.name")
		if s.tool == "" {
			s.tool = s.name
		}
		s.callID = str(a, "tool_call.id")
		// tool.parameters is the tool's schema, not the call's arguments.
		s.args = rawJSON(a, "tool_call.function.arguments")
		if s.args == nil && jsonValue(a, "input.value", "input.mime_type") {
			s.args = rawJSON(a, "input.value")
		}
	}
}

// flatMessage returns the content of the first message of role ("" for
// any) in OpenInference's flattened list <prefix>.<i>.message.role /
// .message.content.
func flatMessage(a pcommon.Map, prefix, role string) string {
	for i := 0; i < 1000; i++ {
		p := fmt.Sprintf("%s.%d.message.", prefix, i)
		r, ok := a.Get(p + "role")
		if !ok {
			return ""
		}
		if role == "" || r.AsString() == role {
			if c := str(a, p+"content"); c != "" {
				return c
			}
		}
	}
	return ""
}

// jsonValue reports whether the value at key is JSON by its mime-type
// attribute (application/json), or, without one, by its first character.
func jsonValue(a pcommon.Map, key, mimeKey string) bool {
	if mt := str(a, mimeKey); mt != "" {
		return strings.Contains(mt, "json")
	}
	v := strings.TrimSpace(str(a, key))
	return strings.HasPrefix(v, "{")
}

// inputText is a run's input as the user's text: plain text as it is, JSON
// read for its user message (userText).
func inputText(a pcommon.Map, key, mimeKey string) string {
	v := str(a, key)
	if v == "" || !jsonValue(a, key, mimeKey) && !strings.HasPrefix(strings.TrimSpace(v), "[") {
		return v
	}
	return userText([]byte(v))
}

// --- OpenLLMetry (Traceloop) ---

var traceloopKinds = map[string]kind{"workflow": kindWorkflow, "agent": kindAgent, "tool": kindTool}

func readTraceloop(s *span, a pcommon.Map) {
	k, ok := traceloopKinds[str(a, "traceloop.span.kind")]
	if !ok {
		return // task spans: structure only
	}
	s.kind, s.convention = k, conventionOpenLLMetry
	s.conversation = traceloopSession(a)
	name := first(a, "traceloop.entity.name", "traceloop.workflow.name")
	switch k {
	case kindTool:
		s.tool = name
		s.args = traceloopArgs(rawJSON(a, "traceloop.entity.input"))
	default:
		s.agentName = first(a, "traceloop.entity.name", "traceloop.workflow.name", attrAgentName)
		s.goal = userText(rawJSON(a, "traceloop.entity.input"))
	}
}

// traceloopSession is the session id Traceloop's association properties
// carry, "" when none.
func traceloopSession(a pcommon.Map) string {
	return first(a, "traceloop.association.properties.session_id", "traceloop.association.properties.sessionId",
		"traceloop.association.properties.conversation_id", "traceloop.association.properties.conversationId", attrConversationID)
}

// traceloopArgs turns traceloop.entity.input ({"args": [...], "kwargs":
// {...}}, the decorated function's arguments) into the call's arguments:
// the keyword arguments when there are some, else a lone object argument,
// else the input as it is.
func traceloopArgs(b []byte) []byte {
	var in struct {
		Args   []json.RawMessage          `json:"args"`
		Kwargs map[string]json.RawMessage `json:"kwargs"`
	}
	if b == nil || json.Unmarshal(b, &in) != nil {
		return b
	}
	if len(in.Kwargs) > 0 {
		out, _ := json.Marshal(in.Kwargs)
		return out
	}
	if len(in.Args) == 1 && strings.HasPrefix(strings.TrimSpace(string(in.Args[0])), "{") {
		return in.Args[0]
	}
	return b
}

// readOpenLLMetryLLM reads a model call span of OpenLLMetry's client
// instrumentations (openai.chat, anthropic.chat, …): llm.request.type with
// gen_ai attributes of their own era (gen_ai.prompt.<i>.role/content).
func readOpenLLMetryLLM(s *span, a pcommon.Map) {
	switch str(a, "llm.request.type") {
	case "chat", "completion":
	default:
		return
	}
	s.kind, s.convention = kindModel, conventionOpenLLMetry
	s.model = first(a, attrRequestModel, attrResponseModel)
	s.usage = tokens(a, genAIInput, genAIOutput, append([]string{"gen_ai.usage.cache_read_input_tokens"}, genAICached...))
	s.conversation = traceloopSession(a)
	for i := 0; i < 1000; i++ {
		p := fmt.Sprintf("gen_ai.prompt.%d.", i)
		r, ok := a.Get(p + "role")
		if !ok {
			break
		}
		if r.AsString() == "user" {
			s.goal = str(a, p+"content")
			break
		}
	}
	s.output = str(a, "gen_ai.completion.0.content")
}

// --- Vercel AI SDK ---

func readVercel(s *span, a pcommon.Map) {
	op := str(a, "ai.operationId")
	switch {
	case op == "ai.toolCall":
		s.kind = kindTool
		s.tool = str(a, "ai.toolCall.name")
		s.callID = str(a, "ai.toolCall.id")
		s.args = rawJSON(a, "ai.toolCall.args", "ai.toolCall.input")
	case strings.HasSuffix(op, ".doGenerate"), strings.HasSuffix(op, ".doStream"):
		s.kind = kindModel
		s.model = first(a, "ai.model.id", attrResponseModel, attrRequestModel)
		s.usage = tokens(a, []string{"ai.usage.inputTokens", "ai.usage.promptTokens", "gen_ai.usage.input_tokens"},
			[]string{"ai.usage.outputTokens", "ai.usage.completionTokens", "gen_ai.usage.output_tokens"},
			[]string{"ai.usage.cachedInputTokens", "ai.usage.inputTokenDetails.cacheReadTokens"})
		s.output = str(a, "ai.response.text")
		s.goal = userText(rawJSON(a, "ai.prompt.messages"))
	case op == "ai.generateText", op == "ai.streamText", op == "ai.generateObject", op == "ai.streamObject":
		s.kind = kindWorkflow
		s.agentName = str(a, "ai.telemetry.functionId")
		s.model = str(a, "ai.model.id")
		s.goal = userText(rawJSON(a, "ai.prompt"))
	default:
		return // embeddings, ai.toolCall's siblings: not read
	}
	s.convention = conventionVercel
	s.conversation = first(a, "ai.telemetry.metadata.sessionId", "ai.telemetry.metadata.session_id",
		"ai.telemetry.metadata.conversationId", "ai.telemetry.metadata.conversation_id")
}

// userText returns the user's first text in b, a JSON prompt as the
// conventions record one: a string; {"prompt": …}; {"messages": […]}; a
// message list, each message {role, content} with content a string or a
// list of parts ({type: "text", text|content}), or {role, parts}. "" when
// there is none.
func userText(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	return userTextOf(v)
}

func userTextOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if p, ok := x["prompt"]; ok {
			if t := userTextOf(p); t != "" {
				return t
			}
		}
		if m, ok := x["messages"]; ok {
			return userTextOf(m)
		}
		if role, _ := x["role"].(string); role == "user" {
			return partsText(cmpOr(x["content"], x["parts"]))
		}
	case []any:
		for _, m := range x {
			mm, ok := m.(map[string]any)
			if !ok {
				continue
			}
			if role, _ := mm["role"].(string); role == "user" {
				if t := partsText(cmpOr(mm["content"], mm["parts"])); t != "" {
					return t
				}
			}
		}
	}
	return ""
}

func cmpOr(a, b any) any {
	if a != nil {
		return a
	}
	return b
}

// partsText is a message content's text: a string, or the text parts of a
// part list joined by newlines.
func partsText(c any) string {
	switch x := c.(type) {
	case string:
		return x
	case []any:
		var texts []string
		for _, p := range x {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if t, _ := pm["type"].(string); t != "" && t != "text" {
				continue
			}
			if s, ok := pm["text"].(string); ok {
				texts = append(texts, s)
			} else if s, ok := pm["content"].(string); ok {
				texts = append(texts, s)
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}
