package realcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// CodexHookEvents are the hook events the harness registers for Codex
// (0.17x reads $CODEX_HOME/hooks.json in Claude Code's shape).
var CodexHookEvents = []string{
	"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
	"PreCompact", "PostCompact", "Stop", "StopFailure", "SubagentStart", "SubagentStop", "SessionEnd",
}

// CodexModel is the model Codex is configured with by default. Codex has
// no metadata for it, so it falls back to plain function tools
// (exec_command, update_plan, ...); a model it knows may switch it to
// other tools (CodexCodeModeModel to code mode).
const CodexModel = "fake-model"

// codexConfig is $CODEX_HOME/config.toml: the fake server as a Responses
// API provider that is never retried, no sandbox and no approvals (the
// namespace is the sandbox), update_plan on, and the calls out that 0.171
// makes besides the model's switched off (analytics, the plugin sync).
const codexConfig = `model = %q
model_provider = "fakemodel"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fakemodel]
name = "fakemodel"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[tools.update_plan]
enabled = true

[analytics]
enabled = false

[features]
plugins = false
`

// Codex is the Codex CLI set up to run headless (codex exec) with its own
// CODEX_HOME against the harness's fake server (config.toml, written at
// each prompt), with a hook registered for every event in
// $CODEX_HOME/hooks.json. Its prompts make one session:
// the first starts it, the next ones resume it (codex exec resume).
type Codex struct {
	h   *Harness
	Bin string
	// Home is the CLI's HOME; CodexHome (CODEX_HOME) its .codex, where
	// config.toml, hooks.json and the rollouts (sessions/) are.
	Home, CodexHome string
	// Workspace is the directory it runs in.
	Workspace string
	// HookLog is the file the hook appends every hook input to.
	HookLog string
	// ThreadID is the session's id, known after the first prompt.
	ThreadID string
	// Model is the model config.toml names: CodexModel unless changed
	// before a prompt.
	Model string
	// Telemetry, when set before a prompt, turns the CLI's own
	// OpenTelemetry export on: config.toml gets an [otel] table
	// (Harness.Telemetry).
	Telemetry *Telemetry
}

// Codex sets up the installed, pinned Codex CLI in a home of its own under
// the harness's directory.
func (h *Harness) Codex(tb testing.TB) *Codex {
	tb.Helper()
	root := filepath.Join(h.Dir, "codex")
	c := &Codex{h: h, Home: filepath.Join(root, "home"), Workspace: filepath.Join(root, "workspace"), Model: CodexModel}
	c.CodexHome = filepath.Join(c.Home, ".codex")
	c.HookLog = filepath.Join(c.CodexHome, "evosignal-hooks.jsonl")
	if err := mkdirs(c.CodexHome, c.Workspace, filepath.Join(c.Home, "tmp")); err != nil {
		tb.Fatalf("realcli: set up Codex's home: %v", err)
	}
	hooks, err := writeHooks(c.CodexHome, c.HookLog, CodexHookEvents)
	if err != nil {
		tb.Fatalf("realcli: %v", err)
	}
	if err := writeJSON(filepath.Join(c.CodexHome, "hooks.json"), map[string]any{"hooks": hooks}); err != nil {
		tb.Fatalf("realcli: %v", err)
	}
	c.Bin, err = h.binary(context.Background(), CodexPackage, "codex", c.Workspace, c.env())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Prompt runs one prompt with codex exec --json (the first) or codex exec
// resume --json (the next ones); Stdout holds exec's JSON lines.
// --strict-config makes a configuration key 0.17x does not know an error;
// --dangerously-bypass-hook-trust runs the hooks without the trust a user
// gives them in the TUI.
func (c *Codex) Prompt(ctx context.Context, prompt string) (Output, error) {
	flags := []string{"--json", "--strict-config", "--dangerously-bypass-hook-trust", "--skip-git-repo-check"}
	var args []string
	if c.ThreadID == "" {
		args = append(append([]string{"exec"}, flags...), prompt)
	} else {
		args = append(append([]string{"exec", "resume"}, flags...), c.ThreadID, prompt)
	}
	url, err := c.h.url()
	if err != nil {
		return Output{}, err
	}
	// config.toml names the server, so it is written once there is one.
	config := fmt.Sprintf(codexConfig, c.Model, url+"/v1")
	if c.Telemetry != nil {
		config += c.Telemetry.codexConfig()
	}
	if err := os.WriteFile(filepath.Join(c.CodexHome, "config.toml"), []byte(config), 0o644); err != nil {
		return Output{}, fmt.Errorf("write Codex's config: %w", err)
	}
	out, err := c.h.run(ctx, c.Workspace, c.env(), c.Bin, args...)
	if err != nil {
		return out, err
	}
	if c.ThreadID == "" {
		id, err := threadID(out.Stdout)
		if err != nil {
			return out, err
		}
		c.ThreadID = id
	}
	return out, nil
}

// env is Codex's environment: its own home and CODEX_HOME.
func (c *Codex) env() []string { return append(baseEnv(c.Home), "CODEX_HOME="+c.CodexHome) }

// threadID reads the thread.started event of codex exec --json.
func threadID(stdout []byte) (string, error) {
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Type == "thread.started" && ev.ThreadID != "" {
			return ev.ThreadID, nil
		}
	}
	return "", fmt.Errorf("realcli: codex exec --json printed no thread.started:\n%s", stdout)
}

// Rollouts are the paths of the rollout files under
// CodexHome/sessions/YYYY/MM/DD, sorted.
func (c *Codex) Rollouts() ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(c.CodexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	return paths, nil
}
