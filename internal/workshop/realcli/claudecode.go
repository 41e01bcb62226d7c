package realcli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
)

// ClaudeCodeHookEvents are the hook events the harness registers for
// Claude Code: the seven docs/claude-code.md registers, and every other
// one a headless run of 2.1.x can fire (the bridge ignores, and counts,
// those it does not read), so the captured logs show them all.
var ClaudeCodeHookEvents = []string{
	"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd",
	"PostToolBatch", "StopFailure", "Notification", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
	"TaskCreated", "TaskCompleted", "PermissionRequest", "PermissionDenied", "UserPromptExpansion", "InstructionsLoaded",
}

// ClaudeCode is Claude Code set up to run headless (-p) in its own
// temporary home against the harness's fake server, with a hook that logs
// in docs/claude-code.md's envelope registered for every event. Its prompts make one
// session: the first starts it with SessionID, and the next ones resume it
// (Prompt, a process each) or go to the same process (Converse).
type ClaudeCode struct {
	h   *Harness
	Bin string
	// Home is the CLI's HOME; ConfigDir (CLAUDE_CONFIG_DIR) is its
	// .claude, where settings.json, the transcripts (projects/) and the
	// task lists (tasks/) are.
	Home, ConfigDir string
	// Workspace is the directory it runs in, its project.
	Workspace string
	// HookLog is the file the hook appends every hook input to.
	HookLog string
	// SessionID is the session's id, chosen before the first prompt.
	SessionID string
	// Telemetry, when set before a prompt, turns the CLI's own
	// OpenTelemetry export on (Harness.Telemetry).
	Telemetry *Telemetry
	// Env is added to the CLI's environment last (a name given twice
	// takes its last value).
	Env     []string
	prompts int
}

// ClaudeCode sets up the installed, pinned Claude Code in a home of its
// own under the harness's directory.
func (h *Harness) ClaudeCode(tb testing.TB) *ClaudeCode {
	tb.Helper()
	root := filepath.Join(h.Dir, "claude-code")
	c := &ClaudeCode{
		h:         h,
		Home:      filepath.Join(root, "home"),
		Workspace: filepath.Join(root, "workspace"),
		SessionID: uuid.NewString(),
	}
	c.ConfigDir = filepath.Join(c.Home, ".claude")
	c.HookLog = filepath.Join(c.ConfigDir, "evosignal-hooks.jsonl")
	if err := mkdirs(c.ConfigDir, c.Workspace, filepath.Join(c.Home, "tmp")); err != nil {
		tb.Fatalf("realcli: set up Claude Code's home: %v", err)
	}
	hooks, err := writeHooks(c.ConfigDir, c.HookLog, ClaudeCodeHookEvents)
	if err != nil {
		tb.Fatalf("realcli: %v", err)
	}
	if err := writeJSON(filepath.Join(c.ConfigDir, "settings.json"), map[string]any{"hooks": hooks}); err != nil {
		tb.Fatalf("realcli: %v", err)
	}
	// --version asks no model: the server's URL is not known yet, nor
	// needed.
	c.Bin, err = h.binary(context.Background(), ClaudeCodePackage, "claude", c.Workspace, c.env("http://127.0.0.1:9"))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// env is Claude Code's environment: the fake server as its API, a key it
// never checks, no nonessential traffic (telemetry, updates, error
// reports), root allowed to skip permissions (IS_SANDBOX), and the task
// tools (TaskCreate, TaskUpdate, ...) on.
func (c *ClaudeCode) env(url string) []string {
	env := append(baseEnv(c.Home),
		"CLAUDE_CONFIG_DIR="+c.ConfigDir,
		"ANTHROPIC_BASE_URL="+url,
		"ANTHROPIC_API_KEY=sk-ant-fakemodel",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"IS_SANDBOX=1",
		"CLAUDE_CODE_ENABLE_TODO_TOOLS=1",
	)
	if c.Telemetry != nil {
		env = append(env, c.Telemetry.claudeCodeEnv()...)
	}
	return append(env, c.Env...)
}

// ClaudeResult is what -p --output-format json prints at the end of a run.
type ClaudeResult struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	IsError    bool   `json:"is_error"`
	SessionID  string `json:"session_id"`
	NumTurns   int    `json:"num_turns"`
	Result     string `json:"result"`
	StopReason string `json:"stop_reason"`
}

// Prompt runs one prompt headless: the first starts the session, the
// next ones resume it (--resume).
func (c *ClaudeCode) Prompt(ctx context.Context, prompt string) (ClaudeResult, Output, error) {
	args := []string{"-p", prompt, "--output-format", "json", "--dangerously-skip-permissions"}
	if c.prompts == 0 {
		args = append(args, "--session-id", c.SessionID)
	} else {
		args = append(args, "--resume", c.SessionID)
	}
	url, err := c.h.url()
	if err != nil {
		return ClaudeResult{}, Output{}, err
	}
	c.prompts++
	out, err := c.h.run(ctx, c.Workspace, c.env(url), c.Bin, args...)
	if err != nil {
		return ClaudeResult{}, out, err
	}
	var res ClaudeResult
	if err := json.Unmarshal(out.Stdout, &res); err != nil {
		return res, out, fmt.Errorf("decode claude's result: %w\n%s", err, out.Stdout)
	}
	return res, out, nil
}

// Converse gives the prompts to one headless process (-p --input-format
// stream-json --output-format stream-json), as a conversation: the first
// prompt starts the session, each next one is written on the process's
// stdin once it has printed the result of the one before, and stdin is
// closed after the last result, which ends the run. It returns the result
// of each prompt, in order, and the whole output (stdout the stream of
// JSON messages it printed).
func (c *ClaudeCode) Converse(ctx context.Context, prompts []string) ([]ClaudeResult, Output, error) {
	if c.prompts != 0 {
		return nil, Output{}, errors.New("realcli: a conversation starts its session: Converse after Prompt")
	}
	if len(prompts) == 0 {
		return nil, Output{}, errors.New("realcli: a conversation of no prompts")
	}
	url, err := c.h.url()
	if err != nil {
		return nil, Output{}, err
	}
	c.prompts += len(prompts)
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--dangerously-skip-permissions", "--session-id", c.SessionID}
	cmd := command(ctx, c.Workspace, c.env(url), c.Bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, Output{}, err
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, Output{}, err
	}
	var stdout bytes.Buffer
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := c.h.NS.Start(cmd); err != nil {
		return nil, Output{}, fmt.Errorf("start claude: %w", err)
	}
	tee := io.TeeReader(stdoutPipe, &stdout)
	results, talkErr := converse(tee, stdin, prompts)
	// No more prompts come: the run ends, and what it prints after the
	// last result is read to its end.
	stdin.Close()
	if talkErr != nil {
		// It may wait for a prompt that will not come, or go on alone.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	_, drainErr := io.Copy(io.Discard, tee)
	talkErr = errors.Join(talkErr, drainErr)
	waitErr := cmd.Wait()
	out := Output{Stdout: stdout.Bytes(), Stderr: []byte(stderr.String()), Took: time.Since(start)}
	if err := errors.Join(talkErr, waitErr); err != nil {
		return results, out, fmt.Errorf("claude %s: %w\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.Stdout, out.Stderr)
	}
	return results, out, nil
}

// userMessage is a prompt as -p --input-format stream-json reads it, one
// JSON object a line.
type userMessage struct {
	Type    string `json:"type"`
	Message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
}

// converse writes the first prompt to in, then reads the CLI's stream of
// messages from out: at each result it writes the next prompt, until every
// prompt has its result. It returns the results.
func converse(out io.Reader, in io.Writer, prompts []string) ([]ClaudeResult, error) {
	send := func(p string) error {
		m := userMessage{Type: "user"}
		m.Message.Role, m.Message.Content = "user", p
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if _, err := in.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("send prompt %q: %w", p, err)
		}
		return nil
	}
	if err := send(prompts[0]); err != nil {
		return nil, err
	}
	var results []ClaudeResult
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20) // a message repeats the tools and the context: lines are long
	for sc.Scan() {
		var res ClaudeResult
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			return results, fmt.Errorf("decode a line claude printed: %w\n%s", err, sc.Bytes())
		}
		if res.Type != "result" {
			continue
		}
		results = append(results, res)
		if len(results) == len(prompts) {
			return results, nil
		}
		if err := send(prompts[len(results)]); err != nil {
			return results, err
		}
	}
	if err := sc.Err(); err != nil {
		return results, fmt.Errorf("read claude's output: %w", err)
	}
	return results, fmt.Errorf("claude's output ended after %d of %d results", len(results), len(prompts))
}

// Transcript is the path of the session's transcript,
// ConfigDir/projects/<project>/<SessionID>.jsonl, once a prompt has run.
func (c *ClaudeCode) Transcript() (string, error) {
	paths, err := filepath.Glob(filepath.Join(c.ConfigDir, "projects", "*", c.SessionID+".jsonl"))
	if err != nil {
		return "", err
	}
	if len(paths) != 1 {
		return "", fmt.Errorf("realcli: %d transcripts of session %s under %s, want 1", len(paths), c.SessionID, filepath.Join(c.ConfigDir, "projects"))
	}
	return paths[0], nil
}
