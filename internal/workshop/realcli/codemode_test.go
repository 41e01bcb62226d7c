package realcli_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// TestCodexCodeMode runs Codex with a model it runs in code mode (its
// default) through CodexCodeModeScenario: every step's calls are one
// JavaScript exec call. It checks what that leaves where: the plan calls
// only in the exec input and the hooks, not as rollout function calls.
func TestCodexCodeMode(t *testing.T) {
	sc := realcli.CodexCodeModeScenario()
	run := runCodex(t, sc, realcli.CodexCodeModeModel)
	captureFiles(t, "codex-code-mode", run.files)

	t.Run("requests", func(t *testing.T) { checkCodeModeRequests(t, sc, run.reqs) })
	t.Run("workspace", func(t *testing.T) { checkCodexWorkspace(t, run.cx) })
	t.Run("rollout", func(t *testing.T) { checkCodeModeRollouts(t, sc, run.cx, run.rollouts) })
	t.Run("hooks", func(t *testing.T) { checkCodeModeHooks(t, sc, run.cx) })
	t.Run("bridged", func(t *testing.T) { checkBridged(t, "codex", run.cx.CodexHome, sc.Truth) })
	t.Run("bridged hooks", func(t *testing.T) {
		// Codex's hooks carry no exit code: the failed command is not seen.
		truth := sc.Truth
		truth.FailedCalls = 0
		checkBridged(t, "codex", run.cx.HookLog, truth)
	})
}

// nested returns the calls the exec calls of the scenario make, in order.
func nested(sc realcli.Scenario) []realcli.CallTruth {
	var out []realcli.CallTruth
	for _, c := range sc.Calls {
		if c.Name != "exec" {
			out = append(out, c)
		}
	}
	return out
}

// checkCodeModeRequests: no function tools but one custom exec tool that
// declares update_plan and exec_command; every request after a step with
// calls ends with the exec's output, whose nested command results carry
// the script's exit codes.
func checkCodeModeRequests(t *testing.T, sc realcli.Scenario, reqs []fakemodel.Request) {
	if len(reqs) != len(sc.Steps) {
		t.Fatalf("%d scripted requests, want %d", len(reqs), len(sc.Steps))
	}
	var first struct {
		Tools []json.RawMessage `json:"tools"`
		Input []struct {
			Type  string `json:"type"`
			Tools []struct {
				Name  string `json:"name"`
				Tools []struct {
					Type, Name, Description string
				} `json:"tools"`
			} `json:"tools"`
		} `json:"input"`
	}
	if err := reqs[0].JSON(&first); err != nil {
		t.Fatal(err)
	}
	var exec string
	for _, it := range first.Input {
		for _, ns := range it.Tools {
			for _, tl := range ns.Tools {
				if it.Type == "additional_tools" && tl.Type == "custom" && tl.Name == "exec" {
					exec = tl.Description
				}
			}
		}
	}
	if len(first.Tools) != 0 || !strings.Contains(exec, "update_plan(args") || !strings.Contains(exec, "exec_command(args") {
		t.Errorf("first request: %d function tools, exec tool declaring update_plan and exec_command: %v; want none and one", len(first.Tools), exec != "")
	}
	for n := 1; n < len(reqs); n++ {
		var req responsesRequest
		if err := reqs[n].JSON(&req); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(sc.FirstStep, n) {
			continue
		}
		last := req.Input[len(req.Input)-1]
		want := sc.Steps[n-1].Calls[0].ID
		if last.Type != "custom_tool_call_output" || last.CallID != want {
			t.Errorf("request %d ends with a %s of %s, want the custom_tool_call_output of %s", n, last.Type, last.CallID, want)
			continue
		}
		var fails, oks int
		for _, c := range nested(sc) {
			if c.Step == n-1 && c.Kind == realcli.Real {
				if c.Fails {
					fails++
				} else {
					oks++
				}
			}
		}
		out := string(last.Output)
		if got0, got1 := strings.Count(out, `\"exit_code\":0`), strings.Count(out, `\"exit_code\":1`); got0 != oks || got1 != fails {
			t.Errorf("request %d: exec output has %d exit codes 0 and %d of 1, want %d and %d: %s", n, got0, got1, oks, fails, out)
		}
	}
}

// checkCodeModeRollouts: the rollout has a custom_tool_call exec and its
// output per step with calls, no function_call at all (update_plan is in
// the JavaScript only), and a command item per nested command with the
// script's exit code, in order.
func checkCodeModeRollouts(t *testing.T, sc realcli.Scenario, cx *realcli.Codex, paths []string) {
	if len(paths) != 1 {
		t.Fatalf("%d rollouts, want 1: %v", len(paths), paths)
	}
	lines, err := realcli.ReadJSONLines[rolloutLine](paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var calls, outputs, functionCalls []string
	var exits []int
	for _, l := range lines {
		var it struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Name   string `json:"name"`
			Input  string `json:"input"`
			Item   struct {
				Type     string `json:"type"`
				ExitCode *int   `json:"exit_code"`
			} `json:"item"`
		}
		if err := json.Unmarshal(l.Payload, &it); err != nil {
			continue // session_meta and the like: objects of other shapes
		}
		switch {
		case l.Type == "response_item" && it.Type == "custom_tool_call":
			calls = append(calls, it.CallID)
			if it.Name != "exec" || !strings.Contains(it.Input, "await tools.") {
				t.Errorf("custom_tool_call %s: %s %q", it.CallID, it.Name, it.Input)
			}
		case l.Type == "response_item" && it.Type == "custom_tool_call_output":
			outputs = append(outputs, it.CallID)
		case l.Type == "response_item" && it.Type == "function_call":
			functionCalls = append(functionCalls, it.Name)
		case l.Type == "event_msg" && it.Type == "item_completed" && it.Item.Type == "CommandExecution" && it.Item.ExitCode != nil:
			exits = append(exits, *it.Item.ExitCode)
		}
	}
	var want []string
	var wantExits []int
	for _, c := range sc.Calls {
		switch {
		case c.Name == "exec":
			want = append(want, c.ID)
		case c.Kind == realcli.Real && c.Fails:
			wantExits = append(wantExits, 1)
		case c.Kind == realcli.Real:
			wantExits = append(wantExits, 0)
		}
	}
	if !slices.Equal(calls, want) || !slices.Equal(outputs, want) || len(functionCalls) != 0 || !slices.Equal(exits, wantExits) {
		t.Errorf("%s: exec calls %v, outputs %v, function calls %v, exit codes %v; want %v, the same, none, %v", filepath.Base(paths[0]), calls, outputs, functionCalls, exits, want, wantExits)
	}
}

// checkCodeModeHooks: every nested call has its pre and post hook, in the
// script's order, under an id of Codex's (exec-…); exec itself has none.
func checkCodeModeHooks(t *testing.T, sc realcli.Scenario, cx *realcli.Codex) {
	hooks := readHooks(t, cx.HookLog)
	var want []string
	for _, c := range nested(sc) {
		name := c.Name
		if name == "exec_command" {
			name = "Bash"
		}
		want = append(want, name)
	}
	for _, event := range []string{"PreToolUse", "PostToolUse"} {
		hs := byEvent(hooks, event)
		if got := field(hs, func(h hookInput) string { return h.ToolName }); !slices.Equal(got, want) {
			t.Errorf("%s tools = %v, want %v", event, got, want)
		}
		for _, h := range hs {
			if !strings.HasPrefix(h.ToolUseID, "exec-") {
				t.Errorf("%s of %s: tool_use_id %q, want exec-…", event, h.ToolName, h.ToolUseID)
			}
		}
	}
	if got := field(byEvent(hooks, "UserPromptSubmit"), func(h hookInput) string { return h.Prompt }); !slices.Equal(got, sc.Prompts) {
		t.Errorf("UserPromptSubmit prompts = %q, want %q", got, sc.Prompts)
	}
}
