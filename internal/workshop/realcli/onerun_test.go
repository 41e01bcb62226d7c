package realcli_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// TestClaudeCodeOneRun runs the real Claude Code through
// ClaudeCodeOneRunScenario in one process, its prompts one after the other
// on stdin (Converse), and checks what the script makes certain in the
// requests it sent, the workspace, its hook log and its transcript: one
// session, started once, with a prompt id of each prompt.
func TestClaudeCodeOneRun(t *testing.T) {
	ctx := testContext(t)
	h := realcli.Start(t)
	cc := h.ClaudeCode(t)
	sc := realcli.ClaudeCodeOneRunScenario(cc.Workspace)
	srv := h.Serve(t, fakemodel.Config{Script: sc.Steps})

	results, out, err := cc.Converse(ctx, sc.Prompts)
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
	for i, res := range results {
		end := len(sc.Steps)
		if i+1 < len(sc.FirstStep) {
			end = sc.FirstStep[i+1]
		}
		if res.IsError || res.SessionID != cc.SessionID || res.Result != sc.Steps[end-1].Text {
			t.Errorf("prompt %d: result %+v, want no error, session %s, result %q", i+1, res, cc.SessionID, sc.Steps[end-1].Text)
		}
	}
	transcript, err := cc.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	captureFiles(t, "claude-code-one-run", map[string]string{
		"hooks.jsonl":      cc.HookLog,
		"transcript.jsonl": transcript,
		"stream.jsonl":     writeTemp(t, "stream.jsonl", out.Stdout),
	})

	t.Run("requests", func(t *testing.T) { checkClaudeRequests(t, sc, srv.Scripted()) })
	t.Run("tools", func(t *testing.T) {
		// Loaded by the first prompt's ToolSearch, the task tools stay
		// for the next prompts of the run.
		reqs := srv.Scripted()
		for i, first := range sc.FirstStep[1:] {
			var req messagesRequest
			if err := reqs[first].JSON(&req); err != nil {
				t.Fatal(err)
			}
			if schemaOf(req.Tools, "TaskCreate") == nil || schemaOf(req.Tools, "TaskUpdate") == nil {
				t.Errorf("the first request of prompt %d offers %v, want TaskCreate and TaskUpdate among them", i+2, names(req.Tools))
			}
		}
	})
	t.Run("workspace", func(t *testing.T) {
		for name, want := range map[string]string{"notes.txt": "hello\nbye\n", "summary.txt": "notes.txt: a greeting and a farewell\n"} {
			got, err := os.ReadFile(filepath.Join(cc.Workspace, name))
			if err != nil || string(got) != want {
				t.Errorf("%s = %q (%v), want %q: the script's tools did not run", name, got, err, want)
			}
		}
		if _, err := os.Stat(filepath.Join(cc.Workspace, "config.txt")); !os.IsNotExist(err) {
			t.Errorf("config.txt is still there (%v): the third request's rm did not run", err)
		}
	})
	t.Run("hooks", func(t *testing.T) { checkClaudeHooks(t, sc, cc, transcript, []string{"startup"}) })
	t.Run("transcript", func(t *testing.T) { checkClaudeTranscript(t, sc, cc, transcript) })
	t.Run("prompt ids", func(t *testing.T) { checkPromptIDs(t, sc, cc, transcript) })
	t.Run("bridged", func(t *testing.T) { checkBridged(t, "claude-code", cc.HookLog, sc.Truth) })
}

// checkPromptIDs: each prompt of the one run has a prompt id of its own,
// the UserPromptSubmit's prompt_id, which every hook of the prompt's work
// carries (the hooks of its calls, its Stop) and which the transcript
// gives the prompt's line (promptId) and the lines of its calls' results;
// every hook but SessionStart carries one of them.
func checkPromptIDs(t *testing.T, sc realcli.Scenario, cc *realcli.ClaudeCode, transcript string) {
	hooks := readHooks(t, cc.HookLog)
	ids := field(byEvent(hooks, "UserPromptSubmit"), func(h hookInput) string { return h.PromptID })
	if len(ids) != len(sc.Prompts) || slices.Contains(ids, "") || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(ids) {
		t.Fatalf("UserPromptSubmit prompt_ids %q, want %d distinct ones, one a prompt", ids, len(sc.Prompts))
	}
	if got := field(byEvent(hooks, "Stop"), func(h hookInput) string { return h.PromptID }); !slices.Equal(got, ids) {
		t.Errorf("Stop prompt_ids %q, want the prompts' %q", got, ids)
	}
	for i, h := range hooks {
		switch {
		case h.Event == "SessionStart":
			if h.PromptID != "" {
				t.Errorf("hook %d (SessionStart) has prompt_id %q, want none", i, h.PromptID)
			}
		case h.ToolUseID != "":
			c, ok := callByID(sc, h.ToolUseID)
			if ok && h.PromptID != ids[c.Prompt] {
				t.Errorf("hook %d (%s of %s, prompt %d): prompt_id %q, want %q", i, h.Event, c.ID, c.Prompt+1, h.PromptID, ids[c.Prompt])
			}
		case !slices.Contains(ids, h.PromptID):
			t.Errorf("hook %d (%s): prompt_id %q, none of the prompts' %q", i, h.Event, h.PromptID, ids)
		}
	}

	lines, err := realcli.ReadJSONLines[transcriptLine](transcript)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for i, l := range lines {
		if l.Type != "user" || l.Message == nil {
			continue
		}
		for _, b := range blocks(t, l.Message.Content) {
			want := ""
			switch {
			case b.Type == "text" && slices.Contains(sc.Prompts, b.Text):
				p := slices.Index(sc.Prompts, b.Text)
				prompts = append(prompts, l.PromptID)
				want = ids[p]
			case b.Type == "tool_result":
				if c, ok := callByID(sc, b.ToolUseID); ok {
					want = ids[c.Prompt]
				}
			default:
				continue
			}
			if l.PromptID != want {
				t.Errorf("transcript line %d (%s): promptId %q, want %q", i+1, b.Type, l.PromptID, want)
			}
		}
	}
	if !slices.Equal(prompts, ids) {
		t.Errorf("transcript: the prompts' lines have promptIds %q, want %q", prompts, ids)
	}
}
