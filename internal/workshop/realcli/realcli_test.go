package realcli_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

var capture = flag.String("capture", "", "copy the files each CLI wrote (hook log, transcript, rollouts) and the tool schemas it offered into `dir`/<capture>/ (claude-code, claude-code-one-run, codex, codex-code-mode: one a test), to become fixtures (testdata/realcli/README.md)")

// runTimeout bounds one scenario: a prompt of either CLI takes seconds.
const runTimeout = 2 * time.Minute

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	t.Cleanup(cancel)
	return ctx
}

// captureFiles copies each file (name in the capture → path) into
// -capture's dir/<name>, when -capture is given; a folder of a previous
// capture is replaced whole, but for the README.md written by hand there.
func captureFiles(t *testing.T, name string, files map[string]string) {
	t.Helper()
	if *capture == "" {
		return
	}
	dir := filepath.Join(*capture, name)
	old, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range old {
		if e.Name() == "README.md" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("capture %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatalf("capture %s: %v", name, err)
		}
	}
	t.Logf("captured %d files into %s", len(files), dir)
}

// toolsNamed returns the tools of an API request body (Anthropic's or
// OpenAI's "tools"), whole as the CLI sent them, whose names keep accepts,
// as indented JSON: a captured tools.json.
func toolsNamed(t *testing.T, body []byte, keep func(string) bool) []byte {
	t.Helper()
	var req struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	kept := []json.RawMessage{}
	for _, raw := range req.Tools {
		var tl struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &tl); err != nil {
			t.Fatal(err)
		}
		if keep(tl.Name) {
			kept = append(kept, raw)
		}
	}
	b, err := json.MarshalIndent(kept, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// writeTemp writes b to a file of the test's and returns its path.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hookInput is the part of a hook input (Claude Code's shape, which
// Codex shares) the tests read.
type hookInput struct {
	SessionID     string          `json:"session_id"`
	Event         string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolInput     json.RawMessage `json:"tool_input"`
	Prompt        string          `json:"prompt"`
	Source        string          `json:"source"`
	TaskID        string          `json:"task_id"`
	PromptID      string          `json:"prompt_id"`
	TranscriptRef string          `json:"transcript_path"`
}

// readHooks reads a hook log: every line in the time envelope, the time
// RFC 3339.
func readHooks(t *testing.T, path string) []hookInput {
	t.Helper()
	recs, err := realcli.ReadJSONLines[realcli.HookRecord](path)
	if err != nil {
		t.Fatalf("read the hook log: %v", err)
	}
	var out []hookInput
	for i, r := range recs {
		if _, err := time.Parse(time.RFC3339Nano, r.Time); err != nil {
			t.Errorf("hook log line %d: time %q: %v", i+1, r.Time, err)
		}
		var h hookInput
		if err := json.Unmarshal(r.Hook, &h); err != nil {
			t.Fatalf("hook log line %d: %v", i+1, err)
		}
		out = append(out, h)
	}
	return out
}

// byEvent returns the hook inputs of event.
func byEvent(hooks []hookInput, event string) []hookInput {
	var out []hookInput
	for _, h := range hooks {
		if h.Event == event {
			out = append(out, h)
		}
	}
	return out
}

// field returns f of every hook input.
func field(hooks []hookInput, f func(hookInput) string) []string {
	var out []string
	for _, h := range hooks {
		out = append(out, f(h))
	}
	return out
}

// checkToolHooks: every scripted call has one pre hook and one post hook
// (PostToolUse, or failure for a call that fails when the CLI has such an
// event) with its id and the tool's name as the hook names it, and no
// hook names a call the script did not make.
func checkToolHooks(t *testing.T, hooks []hookInput, sc realcli.Scenario, failure string, hookName func(string) string) {
	t.Helper()
	type key struct{ event, id string }
	seen := map[key][]hookInput{}
	for _, h := range hooks {
		if h.ToolUseID != "" {
			seen[key{h.Event, h.ToolUseID}] = append(seen[key{h.Event, h.ToolUseID}], h)
		}
	}
	want := map[key]bool{}
	for _, c := range sc.Calls {
		post := "PostToolUse"
		if c.Fails && failure != "" {
			post = failure
		}
		for _, event := range []string{"PreToolUse", post} {
			k := key{event, c.ID}
			want[k] = true
			got := seen[k]
			if len(got) != 1 {
				t.Errorf("%s hooks of call %s (%s, step %d) = %d, want 1", event, c.ID, c.Name, c.Step, len(got))
				continue
			}
			if name := hookName(c.Name); got[0].ToolName != name {
				t.Errorf("%s of call %s: tool_name %q, want %q", event, c.ID, got[0].ToolName, name)
			}
		}
	}
	for k, hs := range seen {
		if !want[k] {
			t.Errorf("%d %s hooks of call %s, which the script did not make", len(hs), k.event, k.id)
		}
	}
}

// stepCalls returns the ids of the calls of step n.
func stepCalls(sc realcli.Scenario, n int) []string {
	var ids []string
	for _, c := range sc.Calls {
		if c.Step == n {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// callByID returns the scripted call id.
func callByID(sc realcli.Scenario, id string) (realcli.CallTruth, bool) {
	i := slices.IndexFunc(sc.Calls, func(c realcli.CallTruth) bool { return c.ID == id })
	if i < 0 {
		return realcli.CallTruth{}, false
	}
	return sc.Calls[i], true
}

// promptOf returns the index of the prompt step n answers.
func promptOf(sc realcli.Scenario, n int) int {
	p := 0
	for i, first := range sc.FirstStep {
		if n >= first {
			p = i
		}
	}
	return p
}

// schemaOf returns the JSON schema of tool name among tools, nil when the
// tools have none.
func schemaOf(tools []toolSchema, name string) map[string]any {
	for _, tl := range tools {
		if tl.Name == name {
			if tl.InputSchema != nil {
				return tl.InputSchema
			}
			return tl.Parameters
		}
	}
	return nil
}

// toolSchema is a tool as an API request offers it: Anthropic's
// input_schema or OpenAI's parameters.
type toolSchema struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	InputSchema map[string]any `json:"input_schema"`
	Parameters  map[string]any `json:"parameters"`
}

// names returns the tools' names.
func names(tools []toolSchema) []string {
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Name)
	}
	return out
}

// required returns a schema's required properties, sorted.
func required(schema map[string]any) []string {
	var out []string
	r, _ := schema["required"].([]any)
	for _, v := range r {
		s, _ := v.(string)
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// properties returns the names of a schema's properties, sorted.
func properties(schema map[string]any) []string {
	p, _ := schema["properties"].(map[string]any)
	var out []string
	for k := range p {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// property returns property name of schema.
func property(schema map[string]any, name string) map[string]any {
	p, _ := schema["properties"].(map[string]any)
	v, _ := p[name].(map[string]any)
	return v
}
