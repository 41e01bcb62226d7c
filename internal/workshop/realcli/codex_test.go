package realcli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// responsesRequest is the part of a Responses API request the test reads.
type responsesRequest struct {
	Model  string         `json:"model"`
	Stream bool           `json:"stream"`
	Tools  []toolSchema   `json:"tools"`
	Input  []responseItem `json:"input"`
}

// responseItem is an item of a request's input or of a rollout's
// response_item.
type responseItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Name      string          `json:"name"`
	CallID    string          `json:"call_id"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// exitCode reads "Process exited with code N" in exec_command's output.
var exitCode = regexp.MustCompile(`Process exited with code (\d+)`)

// TestCodex runs the real Codex CLI through CodexScenario, a session and
// its resumption, and checks what the script makes certain in the
// requests it sent, the workspace, its rollouts and its hook log.
func TestCodex(t *testing.T) {
	sc := realcli.CodexScenario()
	run := runCodex(t, sc, realcli.CodexModel)
	var first responsesRequest
	if err := run.reqs[0].JSON(&first); err != nil {
		t.Fatal(err)
	}
	run.files["tools.json"] = writeTemp(t, "tools.json", toolsNamed(t, run.reqs[0].Body, func(name string) bool {
		return name == "update_plan" || name == "exec_command"
	}))
	captureFiles(t, "codex", run.files)

	t.Run("requests", func(t *testing.T) { checkCodexRequests(t, sc, run.reqs) })
	t.Run("tools", func(t *testing.T) { checkCodexTools(t, first.Tools) })
	t.Run("workspace", func(t *testing.T) { checkCodexWorkspace(t, run.cx) })
	t.Run("rollout", func(t *testing.T) { checkRollouts(t, sc, run.cx, run.rollouts) })
	t.Run("hooks", func(t *testing.T) { checkCodexHooks(t, sc, run.cx) })
	t.Run("bridged", func(t *testing.T) { checkBridged(t, "codex", run.cx.CodexHome, sc.Truth) })
	t.Run("bridged hooks", func(t *testing.T) {
		// Codex's hooks carry no exit code: the failed command is not seen.
		truth := sc.Truth
		truth.FailedCalls = 0
		checkBridged(t, "codex", run.cx.HookLog, truth)
	})
}

// codexRun is one scenario's run of Codex: the CLI, the scripted requests
// it made, its rollouts, and the files a capture copies.
type codexRun struct {
	cx       *realcli.Codex
	srv      *fakemodel.Server
	reqs     []fakemodel.Request
	rollouts []string
	files    map[string]string
}

// runCodex gives Codex, configured with model (and by each setup, given
// the harness, the CLI and the fake server's configuration before the
// server starts), the scenario's prompts and checks that each took its
// steps from the server.
func runCodex(t *testing.T, sc realcli.Scenario, model string, setup ...func(*realcli.Harness, *realcli.Codex, *fakemodel.Config)) codexRun {
	t.Helper()
	ctx := testContext(t)
	h := realcli.Start(t)
	cx := h.Codex(t)
	cx.Model = model
	cfg := fakemodel.Config{Script: sc.Steps}
	for _, f := range setup {
		f(h, cx, &cfg)
	}
	srv := h.Serve(t, cfg)
	files := map[string]string{}
	for i, prompt := range sc.Prompts {
		out, err := cx.Prompt(ctx, prompt)
		if err != nil {
			t.Fatalf("prompt %d: %v\nserver: %v", i+1, err, srv.Err())
		}
		t.Logf("prompt %d in %v", i+1, out.Took.Round(1e6))
		end := len(sc.Steps)
		if i+1 < len(sc.FirstStep) {
			end = sc.FirstStep[i+1]
		}
		if got := srv.Answered(); got != end {
			t.Fatalf("after prompt %d the server answered %d steps, want %d", i+1, got, end)
		}
		files[fmt.Sprintf("exec-%d.jsonl", i+1)] = writeTemp(t, "exec.jsonl", out.Stdout)
	}
	if err := srv.Err(); err != nil {
		t.Fatalf("fake model server: %v", err)
	}
	rollouts, err := cx.Rollouts()
	if err != nil {
		t.Fatal(err)
	}
	files["hooks.jsonl"] = cx.HookLog
	for i, r := range rollouts {
		files[fmt.Sprintf("rollout-%d.jsonl", i+1)] = r
	}
	return codexRun{cx: cx, srv: srv, reqs: srv.Scripted(), rollouts: rollouts, files: files}
}

// checkCodexWorkspace: the scenario's commands ran in the workspace.
func checkCodexWorkspace(t *testing.T, cx *realcli.Codex) {
	for name, want := range map[string]string{"notes.txt": "hello\nbye\n", "config.txt": "mode=default\n"} {
		got, err := os.ReadFile(filepath.Join(cx.Workspace, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q: the script's commands did not run", name, got, err, want)
		}
	}
}

// checkCodexRequests: Codex asked for the script's steps in order, each
// request streamed with the whole conversation: a prompt's first request
// ends with the prompt, every other one with the outputs of the previous
// step's calls, the failing command's exit code 1 and the others' 0.
func checkCodexRequests(t *testing.T, sc realcli.Scenario, reqs []fakemodel.Request) {
	if len(reqs) != len(sc.Steps) {
		t.Fatalf("%d scripted requests, want %d", len(reqs), len(sc.Steps))
	}
	for n, r := range reqs {
		var req responsesRequest
		if err := r.JSON(&req); err != nil {
			t.Fatal(err)
		}
		if !req.Stream {
			t.Errorf("request %d: stream %v, model %q", n, req.Stream, req.Model)
		}
		if slices.Contains(sc.FirstStep, n) {
			prompt := sc.Prompts[promptOf(sc, n)]
			last := req.Input[len(req.Input)-1]
			if last.Role != "user" || len(last.Content) == 0 || last.Content[len(last.Content)-1].Text != prompt {
				t.Errorf("request %d (a prompt's first) ends with %+v, want the prompt %q", n, last, prompt)
			}
			continue
		}
		// The outputs at the end, back to the calls before them: the
		// previous step's.
		var got []string
		seenCall := false
		for _, it := range slices.Backward(req.Input) {
			if it.Type == "function_call" {
				seenCall = true
				continue
			}
			if it.Type != "function_call_output" || seenCall {
				break
			}
			got = append(got, it.CallID)
			c, ok := callByID(sc, it.CallID)
			if !ok {
				t.Errorf("request %d: an output of call %s, which the script did not make", n, it.CallID)
				continue
			}
			var text string
			_ = json.Unmarshal(it.Output, &text)
			if c.Kind == realcli.Real {
				m := exitCode.FindStringSubmatch(text)
				want := "0"
				if c.Fails {
					want = "1"
				}
				if m == nil || m[1] != want {
					t.Errorf("request %d: output of %s (%s) %q, want exit code %s", n, c.ID, c.Name, text, want)
				}
			}
		}
		slices.Sort(got)
		want := stepCalls(sc, n-1)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("request %d ends with the outputs of %v, want those of step %d: %v", n, got, n-1, want)
		}
	}
}

// checkCodexTools: update_plan and exec_command are offered as functions
// with the schemas testdata/realcli/README.md describes.
func checkCodexTools(t *testing.T, tools []toolSchema) {
	plan, exec := schemaOf(tools, "update_plan"), schemaOf(tools, "exec_command")
	if plan == nil || exec == nil {
		t.Fatalf("tools %v, want update_plan and exec_command among them", names(tools))
	}
	items, _ := property(plan, "plan")["items"].(map[string]any)
	checks := []struct {
		name      string
		got, want []string
	}{
		{"update_plan properties", properties(plan), []string{"explanation", "plan"}},
		{"update_plan required", required(plan), []string{"plan"}},
		{"update_plan item properties", properties(items), []string{"status", "step"}},
		{"update_plan item required", required(items), []string{"status", "step"}},
		{"update_plan statuses", statuses(property(items, "status")), []string{"completed", "in_progress", "pending"}},
		{"exec_command required", required(exec), []string{"cmd"}},
	}
	for _, c := range checks {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// rolloutLine is the part of a rollout line the test reads.
type rolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// checkRollouts: the session's rollouts start with its session_meta and
// hold, in order, a function_call of every scripted call (update_plan
// among them) with its output, the prompts as user messages, and a
// completed command item per real call with the script's exit code; every
// line stamped with the time.
func checkRollouts(t *testing.T, sc realcli.Scenario, cx *realcli.Codex, paths []string) {
	if len(paths) == 0 {
		t.Fatal("no rollout under sessions/")
	}
	var calls, outputs, prompts, plans []string
	exits := map[string]int{}
	for _, path := range paths {
		lines, err := realcli.ReadJSONLines[rolloutLine](path)
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			ID string `json:"id"`
		}
		if len(lines) == 0 || lines[0].Type != "session_meta" || json.Unmarshal(lines[0].Payload, &meta) != nil || meta.ID != cx.ThreadID {
			t.Errorf("%s does not start with the session_meta of thread %s", filepath.Base(path), cx.ThreadID)
		}
		for i, l := range lines {
			if l.Timestamp == "" {
				t.Errorf("%s line %d (%s) has no timestamp", filepath.Base(path), i+1, l.Type)
			}
			switch l.Type {
			case "response_item":
				var it responseItem
				if err := json.Unmarshal(l.Payload, &it); err != nil {
					t.Fatal(err)
				}
				switch {
				case it.Type == "function_call":
					calls = append(calls, it.CallID)
					if it.Name == "update_plan" {
						plans = append(plans, it.CallID)
					}
				case it.Type == "function_call_output":
					outputs = append(outputs, it.CallID)
				case it.Type == "message" && it.Role == "user":
					for _, c := range it.Content {
						if slices.Contains(sc.Prompts, c.Text) {
							prompts = append(prompts, c.Text)
						}
					}
				}
			case "event_msg":
				var ev struct {
					Type string `json:"type"`
					Item struct {
						Type     string `json:"type"`
						ID       string `json:"id"`
						ExitCode *int   `json:"exit_code"`
					} `json:"item"`
				}
				if err := json.Unmarshal(l.Payload, &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Type == "item_completed" && ev.Item.Type == "CommandExecution" && ev.Item.ExitCode != nil {
					exits[ev.Item.ID] = *ev.Item.ExitCode
				}
			}
		}
	}
	var want, wantPlans []string
	wantExits := map[string]int{}
	for _, c := range sc.Calls {
		want = append(want, c.ID)
		switch {
		case c.Name == "update_plan":
			wantPlans = append(wantPlans, c.ID)
		case c.Fails:
			wantExits[c.ID] = 1
		case c.Kind == realcli.Real:
			wantExits[c.ID] = 0
		}
	}
	if !slices.Equal(calls, want) || !slices.Equal(outputs, want) || !slices.Equal(plans, wantPlans) || !slices.Equal(prompts, sc.Prompts) {
		t.Errorf("rollouts: function_call %v, output %v, update_plan %v, prompts %q; want %v, the same, %v, %q", calls, outputs, plans, prompts, want, wantPlans, sc.Prompts)
	}
	if fmt.Sprint(exits) != fmt.Sprint(wantExits) {
		t.Errorf("rollouts: command exit codes %v, want %v", exits, wantExits)
	}
}

// checkCodexHooks: the hook log holds a pre and a post hook of every
// scripted call (Codex names exec_command Bash and has no failure event),
// both prompts, the session started and resumed, a Stop per prompt; every
// input of the one thread.
func checkCodexHooks(t *testing.T, sc realcli.Scenario, cx *realcli.Codex) {
	hooks := readHooks(t, cx.HookLog)
	for i, h := range hooks {
		if h.SessionID != cx.ThreadID {
			t.Errorf("hook %d (%s): session %s, want %s", i, h.Event, h.SessionID, cx.ThreadID)
		}
	}
	checkToolHooks(t, hooks, sc, "", func(name string) string {
		if name == "exec_command" {
			return "Bash"
		}
		return name
	})
	checks := []struct {
		name      string
		got, want []string
	}{
		{"UserPromptSubmit prompts", field(byEvent(hooks, "UserPromptSubmit"), func(h hookInput) string { return h.Prompt }), sc.Prompts},
		{"SessionStart sources", field(byEvent(hooks, "SessionStart"), func(h hookInput) string { return h.Source }), []string{"startup", "resume"}},
		{"Stop hooks", field(byEvent(hooks, "Stop"), func(h hookInput) string { return h.Event }), []string{"Stop", "Stop"}},
	}
	for _, c := range checks {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	for _, h := range byEvent(hooks, "PostToolUse") {
		if h.ToolName == "Bash" && !strings.Contains(string(h.ToolInput), `"command"`) {
			t.Errorf("PostToolUse of Bash %s: tool_input %s has no command", h.ToolUseID, h.ToolInput)
		}
	}
}
