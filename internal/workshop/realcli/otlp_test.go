package realcli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
	"github.com/evosignal/evosignal/internal/workshop/otlpcapture"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// otelItem is a span or a log record as the tests read it: its name (a
// span's name, a log record's event.name attribute) and its attributes,
// each as a string.
type otelItem struct {
	Name             string
	TraceID, SpanID  string
	ParentSpanID     string
	Attrs            map[string]string
	RawAttrs         map[string]any
	StatusCode       string
	StatusMessage    string
	ResourceService  string
	InstrumentScope  string
	ExportRequestSeq int
}

func stringAttrs(raw map[string]any) map[string]string {
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// otelSpans decodes every span the sink took.
func otelSpans(t *testing.T, srv *otlpcapture.Server) []otelItem {
	t.Helper()
	var out []otelItem
	for i, r := range srv.Requests() {
		if r.Signal != otlpcapture.Traces {
			continue
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalJSON(r.JSON); err != nil {
			t.Fatalf("export %d: %v", i, err)
		}
		rss := req.Traces().ResourceSpans()
		for j := range rss.Len() {
			rs := rss.At(j)
			svc, _ := rs.Resource().Attributes().Get("service.name")
			for k := range rs.ScopeSpans().Len() {
				ss := rs.ScopeSpans().At(k)
				for l := range ss.Spans().Len() {
					sp := ss.Spans().At(l)
					raw := sp.Attributes().AsRaw()
					out = append(out, otelItem{
						Name: sp.Name(), TraceID: sp.TraceID().String(), SpanID: sp.SpanID().String(),
						ParentSpanID: sp.ParentSpanID().String(), Attrs: stringAttrs(raw), RawAttrs: raw,
						StatusCode: sp.Status().Code().String(), StatusMessage: sp.Status().Message(),
						ResourceService: svc.AsString(), InstrumentScope: ss.Scope().Name(), ExportRequestSeq: i,
					})
				}
			}
		}
	}
	return out
}

// otelLogs decodes every log record the sink took, named by its
// event.name attribute.
func otelLogs(t *testing.T, srv *otlpcapture.Server) []otelItem {
	t.Helper()
	var out []otelItem
	for i, r := range srv.Requests() {
		if r.Signal != otlpcapture.Logs {
			continue
		}
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalJSON(r.JSON); err != nil {
			t.Fatalf("export %d: %v", i, err)
		}
		rls := req.Logs().ResourceLogs()
		for j := range rls.Len() {
			rl := rls.At(j)
			svc, _ := rl.Resource().Attributes().Get("service.name")
			for k := range rl.ScopeLogs().Len() {
				sl := rl.ScopeLogs().At(k)
				for l := range sl.LogRecords().Len() {
					lr := sl.LogRecords().At(l)
					raw := lr.Attributes().AsRaw()
					attrs := stringAttrs(raw)
					out = append(out, otelItem{
						Name: attrs["event.name"], TraceID: lr.TraceID().String(), SpanID: lr.SpanID().String(),
						Attrs: attrs, RawAttrs: raw, ResourceService: svc.AsString(), InstrumentScope: sl.Scope().Name(),
						ExportRequestSeq: i,
					})
				}
			}
		}
	}
	return out
}

func named(items []otelItem, name string) []otelItem {
	var out []otelItem
	for _, it := range items {
		if it.Name == name {
			out = append(out, it)
		}
	}
	return out
}

// byAttr indexes items by the value of attribute key, the last one
// winning; an item without it is left out.
func byAttr(items []otelItem, key string) map[string]otelItem {
	out := map[string]otelItem{}
	for _, it := range items {
		if v, ok := it.Attrs[key]; ok {
			out[v] = it
		}
	}
	return out
}

// captureOTLP writes the sink's traces, logs and metrics as OTLP JSON
// lines (otlpcapture.JSONLines) into temporary files, for captureFiles.
func captureOTLP(t *testing.T, srv *otlpcapture.Server, files map[string]string) {
	t.Helper()
	for _, sig := range []string{otlpcapture.Traces, otlpcapture.Logs, otlpcapture.Metrics} {
		var buf bytes.Buffer
		if err := srv.JSONLines(&buf, sig); err != nil {
			t.Fatal(err)
		}
		files[sig+".jsonl"] = writeTemp(t, sig+".jsonl", buf.Bytes())
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a string, b any) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil {
		return false
	}
	bb, err := json.Marshal(b)
	if err != nil || json.Unmarshal(bb, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// hasJSON reports whether the JSON object a has every key of b, a JSON
// object too, with the same value (the CLI fills in its defaults).
func hasJSON(a string, b any) bool {
	var x map[string]any
	if json.Unmarshal([]byte(a), &x) != nil {
		return false
	}
	bb, err := json.Marshal(b)
	var y map[string]any
	if err != nil || json.Unmarshal(bb, &y) != nil {
		return false
	}
	for k, v := range y {
		xv, _ := json.Marshal(x[k])
		yv, _ := json.Marshal(v)
		if _, ok := x[k]; !ok || !bytes.Equal(xv, yv) {
			return false
		}
	}
	return true
}

// checkExported: the CLI exported spans and log records, and the sink
// took every export.
func checkExported(t *testing.T, srv *otlpcapture.Server) {
	t.Helper()
	if err := srv.Err(); err != nil {
		t.Fatalf("otlpcapture: %v", err)
	}
	spans, logs := srv.Spans(), srv.LogRecords()
	t.Logf("%d exports: %d spans, %d log records", len(srv.Requests()), spans, logs)
	if spans == 0 || logs == 0 {
		t.Fatalf("the CLI exported %d spans and %d log records, want some of both", spans, logs)
	}
}

// TestClaudeCodeOTLP runs the real Claude Code through
// ClaudeCodeOneRunScenario, as TestClaudeCodeOneRun does, with its own
// OpenTelemetry export on (realcli.Telemetry) into an otlpcapture sink in
// the namespace, and checks what it exported against the script: a
// claude_code.tool_result log record and a claude_code.tool span of every
// call, the tool's input in the record, the failed command failed, a
// claude_code.api_request record and a claude_code.llm_request span of
// every step, an interaction span and a user_prompt record of every
// prompt. With -capture it writes testdata/realcli/claude-code-otlp/.
func TestClaudeCodeOTLP(t *testing.T) {
	ctx := testContext(t)
	h := realcli.Start(t)
	cc := h.ClaudeCode(t)
	otlp, tel := h.Telemetry(t)
	cc.Telemetry = tel
	sc := realcli.ClaudeCodeOneRunScenario(cc.Workspace)
	srv := h.Serve(t, fakemodel.Config{Script: sc.Steps})

	_, out, err := cc.Converse(ctx, sc.Prompts)
	if err != nil {
		t.Fatalf("%v\nserver: %v", err, srv.Err())
	}
	t.Logf("%d prompts in one run, in %v", len(sc.Prompts), out.Took.Round(1e6))
	if err := srv.Err(); err != nil {
		t.Fatalf("fake model server: %v", err)
	}
	if got := srv.Answered(); got != len(sc.Steps) {
		t.Fatalf("the server answered %d steps, want %d", got, len(sc.Steps))
	}
	checkExported(t, otlp)
	transcript, err := cc.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"hooks.jsonl":      cc.HookLog,
		"transcript.jsonl": transcript,
		"stream.jsonl":     writeTemp(t, "stream.jsonl", out.Stdout),
	}
	captureOTLP(t, otlp, files)
	captureFiles(t, "claude-code-otlp", files)

	spans, logs := otelSpans(t, otlp), otelLogs(t, otlp)
	t.Run("logs", func(t *testing.T) {
		results := byAttr(named(logs, "tool_result"), "tool_use_id")
		for _, c := range sc.Calls {
			r, ok := results[c.ID]
			if !ok {
				t.Errorf("no tool_result record of %s (%s)", c.ID, c.Name)
				continue
			}
			if r.Attrs["tool_name"] != c.Name || r.Attrs["session.id"] != cc.SessionID || r.Attrs["prompt.id"] == "" {
				t.Errorf("tool_result of %s: tool_name %q, session.id %q, prompt.id %q, want %s, %s, one", c.ID, r.Attrs["tool_name"], r.Attrs["session.id"], r.Attrs["prompt.id"], c.Name, cc.SessionID)
			}
			if in := inputOf(sc, c); !hasJSON(r.Attrs["tool_input"], in) {
				t.Errorf("tool_result of %s: tool_input %s, want the script's %v in it", c.ID, r.Attrs["tool_input"], in)
			}
			if want := fmt.Sprint(!c.Fails); r.Attrs["success"] != want {
				t.Errorf("tool_result of %s: success %q, want %s", c.ID, r.Attrs["success"], want)
			}
		}
		if got := len(named(logs, "api_request")); got != len(sc.Steps) {
			t.Errorf("%d api_request records, want one a step, %d", got, len(sc.Steps))
		}
		prompts := named(logs, "user_prompt")
		if len(prompts) != len(sc.Prompts) {
			t.Fatalf("%d user_prompt records, want %d", len(prompts), len(sc.Prompts))
		}
		for i, p := range prompts {
			if p.Attrs["prompt"] != sc.Prompts[i] {
				t.Errorf("user_prompt %d: prompt %q, want %q", i+1, p.Attrs["prompt"], sc.Prompts[i])
			}
		}
	})
	t.Run("spans", func(t *testing.T) {
		tools := byAttr(named(spans, "claude_code.tool"), "tool_use_id")
		for _, c := range sc.Calls {
			if s, ok := tools[c.ID]; !ok || s.Attrs["tool_name"] != c.Name {
				t.Errorf("claude_code.tool span of %s: %+v (%v), want one of %s", c.ID, s.Attrs, ok, c.Name)
			}
		}
		if got := len(named(spans, "claude_code.llm_request")); got != len(sc.Steps) {
			t.Errorf("%d llm_request spans, want one a step, %d", got, len(sc.Steps))
		}
		if got := len(named(spans, "claude_code.interaction")); got != len(sc.Prompts) {
			t.Errorf("%d interaction spans, want one a prompt, %d", got, len(sc.Prompts))
		}
	})
	t.Run("bridged", func(t *testing.T) { checkBridged(t, "claude-code", cc.HookLog, sc.Truth) })
}

// inputOf is the input the script gives call c.
func inputOf(sc realcli.Scenario, c realcli.CallTruth) any {
	for _, call := range sc.Steps[c.Step].Calls {
		if call.ID == c.ID {
			return call.Input
		}
	}
	return nil
}

// codexTurnCosts is the path, under its provider's base URL, where Codex
// 0.171 with OTel on asks what its turns cost.
const codexTurnCosts = "/v1/analytics/codex/turn-costs"

// exitedWith reads "Process exited with code N" in exec_command's output.
var exitedWith = regexp.MustCompile(`Process exited with code (\d+)`)

// TestCodexOTLP runs the real Codex CLI through CodexScenario, as TestCodex
// does, with its own OpenTelemetry export on (an [otel] table in
// config.toml) into an otlpcapture sink in the namespace, and checks what
// it exported against the script: a codex.tool_result log record of every
// call with its arguments and its output (the failed command's exit code
// in it), a span of every call named by its tool, a codex.api_request
// record of every step, a codex.user_prompt of every prompt. With
// -capture it writes testdata/realcli/codex-otlp/.
func TestCodexOTLP(t *testing.T) {
	sc := realcli.CodexScenario()
	var otlp *otlpcapture.Server
	run := runCodex(t, sc, realcli.CodexModel, func(h *realcli.Harness, cx *realcli.Codex, cfg *fakemodel.Config) {
		var tel *realcli.Telemetry
		otlp, tel = h.Telemetry(t)
		cx.Telemetry = tel
		// With [otel] on, 0.171 asks its model provider what each turn
		// cost (codex.turn_cost); the fake server has no answer.
		cfg.Expected = func(r fakemodel.Request) bool { return r.Path == codexTurnCosts }
	})
	for _, r := range run.srv.Requests() {
		if r.Path == codexTurnCosts {
			t.Logf("%s %s (answered %d): %s", r.Method, r.Path, r.Status, r.Body)
		}
	}
	checkExported(t, otlp)
	captureOTLP(t, otlp, run.files)
	captureFiles(t, "codex-otlp", run.files)

	spans, logs := otelSpans(t, otlp), otelLogs(t, otlp)
	t.Run("logs", func(t *testing.T) {
		results := byAttr(named(logs, "codex.tool_result"), "call_id")
		for _, c := range sc.Calls {
			r, ok := results[c.ID]
			if !ok {
				t.Errorf("no codex.tool_result record of %s (%s)", c.ID, c.Name)
				continue
			}
			if r.Attrs["tool_name"] != c.Name || r.Attrs["conversation.id"] != run.cx.ThreadID {
				t.Errorf("codex.tool_result of %s: tool_name %q, conversation.id %q, want %s, %s", c.ID, r.Attrs["tool_name"], r.Attrs["conversation.id"], c.Name, run.cx.ThreadID)
			}
			if in := inputOf(sc, c); !sameJSON(r.Attrs["arguments"], in) {
				t.Errorf("codex.tool_result of %s: arguments %s, want the script's %v", c.ID, r.Attrs["arguments"], in)
			}
			if c.Name == "exec_command" {
				m := exitedWith.FindStringSubmatch(r.Attrs["output"])
				if m == nil || (m[1] != "0") != c.Fails {
					t.Errorf("codex.tool_result of %s: output %q, want an exit code that is non-zero only if the call fails (%v)", c.ID, r.Attrs["output"], c.Fails)
				}
			}
		}
		if got := len(named(logs, "codex.api_request")); got != len(sc.Steps) {
			t.Errorf("%d codex.api_request records, want one a step, %d", got, len(sc.Steps))
		}
		prompts := named(logs, "codex.user_prompt")
		if len(prompts) != len(sc.Prompts) {
			t.Fatalf("%d codex.user_prompt records, want %d", len(prompts), len(sc.Prompts))
		}
		for i, p := range prompts {
			if p.Attrs["prompt"] != sc.Prompts[i] {
				t.Errorf("codex.user_prompt %d: prompt %q, want %q", i+1, p.Attrs["prompt"], sc.Prompts[i])
			}
		}
	})
	t.Run("spans", func(t *testing.T) {
		calls := map[string]otelItem{}
		for _, s := range spans {
			if id := s.Attrs["call_id"]; id != "" && s.Name == s.Attrs["tool_name"] {
				calls[id] = s
			}
		}
		for _, c := range sc.Calls {
			if s, ok := calls[c.ID]; !ok || s.Attrs["conversation.id"] != run.cx.ThreadID {
				t.Errorf("span %s of %s: %+v (%v), want one in conversation %s", c.Name, c.ID, s.Attrs, ok, run.cx.ThreadID)
			}
		}
	})
	t.Run("bridged", func(t *testing.T) { checkBridged(t, "codex", run.cx.CodexHome, sc.Truth) })
}
