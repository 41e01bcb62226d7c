package realcli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// messagesRequest is the part of a Messages API request the test reads.
type messagesRequest struct {
	Model    string        `json:"model"`
	Stream   bool          `json:"stream"`
	Tools    []toolSchema  `json:"tools"`
	Messages []chatMessage `json:"messages"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentBlock is one block of a message's content (text, tool_use,
// tool_result).
type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// blocks returns a message's content as blocks (a string content is one
// text block).
func blocks(t *testing.T, content json.RawMessage) []contentBlock {
	t.Helper()
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []contentBlock{{Type: "text", Text: s}}
	}
	var bs []contentBlock
	if err := json.Unmarshal(content, &bs); err != nil {
		t.Fatalf("decode message content: %v", err)
	}
	return bs
}

// TestClaudeCode runs the real Claude Code through ClaudeCodeScenario, two
// prompts of one session, and checks what the script makes certain in
// the requests it sent, the workspace, its hook log and its transcript.
func TestClaudeCode(t *testing.T) {
	ctx := testContext(t)
	h := realcli.Start(t)
	cc := h.ClaudeCode(t)
	sc := realcli.ClaudeCodeScenario(cc.Workspace)
	srv := h.Serve(t, fakemodel.Config{Script: sc.Steps})

	var results []realcli.ClaudeResult
	for i, prompt := range sc.Prompts {
		res, out, err := cc.Prompt(ctx, prompt)
		if err != nil {
			t.Fatalf("prompt %d: %v\nserver: %v", i+1, err, srv.Err())
		}
		t.Logf("prompt %d: %d turns in %v", i+1, res.NumTurns, out.Took.Round(1e6))
		end := len(sc.Steps)
		if i+1 < len(sc.FirstStep) {
			end = sc.FirstStep[i+1]
		}
		if got := srv.Answered(); got != end {
			t.Fatalf("after prompt %d the server answered %d steps, want %d", i+1, got, end)
		}
		if res.IsError || res.SessionID != cc.SessionID || res.Result != sc.Steps[end-1].Text {
			t.Errorf("prompt %d: result %+v, want no error, session %s, result %q", i+1, res, cc.SessionID, sc.Steps[end-1].Text)
		}
		results = append(results, res)
	}
	if err := srv.Err(); err != nil {
		t.Fatalf("fake model server: %v", err)
	}
	transcript, err := cc.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Scripted()
	var first, loaded messagesRequest
	if err := reqs[0].JSON(&first); err != nil {
		t.Fatal(err)
	}
	if err := reqs[1].JSON(&loaded); err != nil {
		t.Fatal(err)
	}

	captureFiles(t, "claude-code", map[string]string{
		"hooks.jsonl":      cc.HookLog,
		"transcript.jsonl": transcript,
		"tools.json": writeTemp(t, "tools.json", toolsNamed(t, reqs[1].Body, func(name string) bool {
			return strings.HasPrefix(name, "Task") || name == "ToolSearch"
		})),
	})

	t.Run("requests", func(t *testing.T) { checkClaudeRequests(t, sc, reqs) })
	t.Run("tools", func(t *testing.T) { checkClaudeTools(t, first.Tools, loaded.Tools) })
	t.Run("workspace", func(t *testing.T) {
		for name, want := range map[string]string{"notes.txt": "hello\nbye\n", "config.txt": "mode=default\n"} {
			got, err := os.ReadFile(filepath.Join(cc.Workspace, name))
			if err != nil || string(got) != want {
				t.Errorf("%s = %q (%v), want %q: the script's tools did not run", name, got, err, want)
			}
		}
	})
	t.Run("hooks", func(t *testing.T) { checkClaudeHooks(t, sc, cc, transcript, []string{"startup", "resume"}) })
	t.Run("transcript", func(t *testing.T) { checkClaudeTranscript(t, sc, cc, transcript) })
	// One session per run here (the second is claude -p --resume), so a
	// session per request.
	t.Run("bridged", func(t *testing.T) { checkBridged(t, "claude-code", cc.HookLog, sc.Truth) })
	// The transcripts, as a backfill reads them: -in the projects tree.
	t.Run("bridged transcript", func(t *testing.T) {
		checkBridged(t, "claude-code", filepath.Join(cc.ConfigDir, "projects"), sc.Truth)
	})
}

// checkClaudeRequests: Claude Code asked for the script's steps in order:
// a prompt's first request ends with the prompt, every other one with the
// results of the previous step's calls, an error exactly for the call
// that fails; and all of them stream.
func checkClaudeRequests(t *testing.T, sc realcli.Scenario, reqs []fakemodel.Request) {
	if len(reqs) != len(sc.Steps) {
		t.Fatalf("%d scripted requests, want %d", len(reqs), len(sc.Steps))
	}
	for n, r := range reqs {
		var req messagesRequest
		if err := r.JSON(&req); err != nil {
			t.Fatal(err)
		}
		if !req.Stream {
			t.Errorf("request %d does not stream", n)
		}
		if slices.Contains(names(req.Tools), "TodoWrite") {
			t.Errorf("request %d offers TodoWrite", n)
		}
		// The last user message: 2.1.x may send a system message (the
		// environment) after it, never an assistant's.
		i := len(req.Messages) - 1
		for i > 0 && req.Messages[i].Role == "system" {
			i--
		}
		last := req.Messages[i]
		if last.Role != "user" {
			t.Fatalf("request %d ends with no user message (roles %v)", n, roles(req.Messages))
		}
		bs := blocks(t, last.Content)
		if slices.Contains(sc.FirstStep, n) {
			prompt := sc.Prompts[promptOf(sc, n)]
			if !slices.ContainsFunc(bs, func(b contentBlock) bool { return b.Type == "text" && b.Text == prompt }) {
				t.Errorf("request %d (a prompt's first) does not end with the prompt %q", n, prompt)
			}
			continue
		}
		var got []string
		for _, b := range bs {
			if b.Type != "tool_result" {
				continue
			}
			got = append(got, b.ToolUseID)
			c, ok := callByID(sc, b.ToolUseID)
			if !ok {
				t.Errorf("request %d: a result of call %s, which the script did not make", n, b.ToolUseID)
				continue
			}
			if b.IsError != c.Fails {
				t.Errorf("request %d: result of %s (%s) is_error %v, want %v: %s", n, c.ID, c.Name, b.IsError, c.Fails, b.Content)
			}
		}
		slices.Sort(got)
		want := stepCalls(sc, n-1)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("request %d ends with the results of %v, want those of step %d: %v", n, got, n-1, want)
		}
	}
}

// roles returns the messages' roles.
func roles(ms []chatMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Role)
	}
	return out
}

// checkClaudeTools: the task tools are deferred (the first request names
// no TaskCreate; ToolSearch loads them), and their schemas, as the CLI
// sends them once loaded, are the ones testdata/realcli/README.md
// describes.
func checkClaudeTools(t *testing.T, first, loaded []toolSchema) {
	for _, name := range []string{"TaskCreate", "TaskUpdate"} {
		if slices.Contains(names(first), name) {
			t.Errorf("the first request offers %s: it is no longer deferred", name)
		}
	}
	if !slices.Contains(names(first), "ToolSearch") {
		t.Errorf("the first request offers no ToolSearch: %v", names(first))
	}
	create, update := schemaOf(loaded, "TaskCreate"), schemaOf(loaded, "TaskUpdate")
	if create == nil || update == nil {
		t.Fatalf("after ToolSearch the tools are %v, want TaskCreate and TaskUpdate among them", names(loaded))
	}
	checks := []struct {
		name      string
		got, want []string
	}{
		{"TaskCreate properties", properties(create), []string{"activeForm", "description", "metadata", "subject"}},
		{"TaskCreate required", required(create), []string{"description", "subject"}},
		{"TaskUpdate properties", properties(update), []string{"activeForm", "addBlockedBy", "addBlocks", "description", "metadata", "owner", "status", "subject", "taskId"}},
		{"TaskUpdate required", required(update), []string{"taskId"}},
		{"TaskUpdate statuses", statuses(property(update, "status")), []string{"completed", "deleted", "in_progress", "pending"}},
	}
	for _, c := range checks {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// statuses collects the enum and const values of a property schema and
// its anyOf branches, sorted.
func statuses(p map[string]any) []string {
	var out []string
	var walk func(map[string]any)
	walk = func(s map[string]any) {
		if e, ok := s["enum"].([]any); ok {
			for _, v := range e {
				out = append(out, v.(string))
			}
		}
		if c, ok := s["const"].(string); ok {
			out = append(out, c)
		}
		if branches, ok := s["anyOf"].([]any); ok {
			for _, b := range branches {
				if m, ok := b.(map[string]any); ok {
					walk(m)
				}
			}
		}
	}
	walk(p)
	slices.Sort(out)
	return out
}

// checkClaudeHooks: the hook log holds a pre and a post hook of every
// scripted call, PostToolUseFailure for the one that fails; every prompt
// and a Stop for each; a SessionStart of each run, with its source
// (startup, then resume for a resumed run), and a SessionEnd; a
// TaskCreated per TaskCreate and a TaskCompleted per completion; every
// input of the one session, naming its transcript.
func checkClaudeHooks(t *testing.T, sc realcli.Scenario, cc *realcli.ClaudeCode, transcript string, sources []string) {
	hooks := readHooks(t, cc.HookLog)
	var created, stops, ends []string
	for _, c := range sc.Calls {
		if c.Name == "TaskCreate" {
			created = append(created, strconv.Itoa(len(created)+1))
		}
	}
	for range sc.Prompts {
		stops = append(stops, "Stop")
	}
	for range sources {
		ends = append(ends, "SessionEnd")
	}
	for i, h := range hooks {
		if h.SessionID != cc.SessionID || h.TranscriptRef != transcript {
			t.Errorf("hook %d (%s): session %s, transcript %s; want %s, %s", i, h.Event, h.SessionID, h.TranscriptRef, cc.SessionID, transcript)
		}
	}
	checkToolHooks(t, hooks, sc, "PostToolUseFailure", func(name string) string { return name })
	checks := []struct {
		name      string
		got, want []string
	}{
		{"UserPromptSubmit prompts", field(byEvent(hooks, "UserPromptSubmit"), func(h hookInput) string { return h.Prompt }), sc.Prompts},
		{"SessionStart sources", field(byEvent(hooks, "SessionStart"), func(h hookInput) string { return h.Source }), sources},
		{"TaskCreated ids", field(byEvent(hooks, "TaskCreated"), func(h hookInput) string { return h.TaskID }), created},
		{"Stop hooks", field(byEvent(hooks, "Stop"), func(h hookInput) string { return h.Event }), stops},
		{"SessionEnd hooks", field(byEvent(hooks, "SessionEnd"), func(h hookInput) string { return h.Event }), ends},
	}
	for _, c := range checks {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if got := len(byEvent(hooks, "TaskCompleted")); got != sc.Truth.Completions {
		t.Errorf("%d TaskCompleted hooks, want the script's %d completions", got, sc.Truth.Completions)
	}
}

// transcriptLine is the part of a transcript line the test reads.
type transcriptLine struct {
	Type        string       `json:"type"`
	SessionID   string       `json:"sessionId"`
	PromptID    string       `json:"promptId"`
	Timestamp   string       `json:"timestamp"`
	IsSidechain bool         `json:"isSidechain"`
	Message     *chatMessage `json:"message"`
}

// checkClaudeTranscript: the transcript has the session's prompts, a
// tool_use of every scripted call in the script's order and its
// tool_result (is_error exactly for the failing one), every user and
// assistant line stamped with the time and the session.
func checkClaudeTranscript(t *testing.T, sc realcli.Scenario, cc *realcli.ClaudeCode, path string) {
	lines, err := realcli.ReadJSONLines[transcriptLine](path)
	if err != nil {
		t.Fatal(err)
	}
	var prompts, uses, results []string
	for i, l := range lines {
		if l.Type == "" {
			t.Errorf("transcript line %d has no type", i+1)
		}
		if l.Type != "user" && l.Type != "assistant" {
			continue
		}
		if l.SessionID != cc.SessionID || l.Timestamp == "" || l.IsSidechain || l.Message == nil {
			t.Errorf("transcript line %d (%s): session %q, timestamp %q, sidechain %v", i+1, l.Type, l.SessionID, l.Timestamp, l.IsSidechain)
			continue
		}
		for _, b := range blocks(t, l.Message.Content) {
			switch {
			case b.Type == "tool_use":
				uses = append(uses, b.ID)
			case b.Type == "tool_result":
				results = append(results, b.ToolUseID)
				if c, ok := callByID(sc, b.ToolUseID); ok && b.IsError != c.Fails {
					t.Errorf("transcript line %d: result of %s (%s) is_error %v, want %v", i+1, c.ID, c.Name, b.IsError, c.Fails)
				}
			case b.Type == "text" && l.Type == "user" && slices.Contains(sc.Prompts, b.Text):
				prompts = append(prompts, b.Text)
			}
		}
	}
	var want []string
	for _, c := range sc.Calls {
		want = append(want, c.ID)
	}
	// Calls of one step run in parallel: their results are in any order.
	slices.Sort(results)
	sorted := slices.Sorted(slices.Values(want))
	if !slices.Equal(uses, want) || !slices.Equal(results, sorted) || !slices.Equal(prompts, sc.Prompts) {
		t.Errorf("transcript: prompts %q, tool_use %v, tool_result %v; want %q, %v and the same results", prompts, uses, results, sc.Prompts, want)
	}
}
