package codex_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/adapter/codex"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
)

// rollout writes lines (type, payload) with increasing timestamps.
func rollout(tb testing.TB, lines ...string) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString(`{"timestamp":"2026-12-01T10:00:00.000Z","type":"session_meta","payload":{"id":"th","cli_version":"0.171.0"}}` + "\n")
	for i, l := range lines {
		typ, payload, _ := strings.Cut(l, " ")
		fmt.Fprintf(&b, `{"timestamp":"2026-12-01T10:00:%02d.000Z","type":%q,"payload":%s}`+"\n", i+1, typ, payload)
	}
	path := filepath.Join(tb.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func ended(tb testing.TB, evs []*events.Event) map[string]*events.SessionEndedData {
	tb.Helper()
	out := map[string]*events.SessionEndedData{}
	for _, e := range evs {
		if e.Type == events.SessionEnded {
			d, _ := e.Payload()
			out[e.Subject] = d.(*events.SessionEndedData)
		}
	}
	return out
}

func toolCalls(tb testing.TB, evs []*events.Event) []*events.ToolCalledData {
	tb.Helper()
	var out []*events.ToolCalledData
	for _, e := range evs {
		if e.Type == events.ToolCalled {
			d, _ := e.Payload()
			out = append(out, d.(*events.ToolCalledData))
		}
	}
	return out
}

// TestOutcomes: the outcome of a request from the rollout's evidence only.
func TestOutcomes(t *testing.T) {
	plan := func(id, status string) string {
		return fmt.Sprintf(`response_item {"type":"function_call","name":"update_plan","call_id":%q,"arguments":"{\"plan\":[{\"step\":\"Do it\",\"status\":\"%s\"}]}"}`, id, status)
	}
	out := func(id string) string {
		return fmt.Sprintf(`response_item {"type":"function_call_output","call_id":%q,"output":"Plan updated"}`, id)
	}
	path := rollout(t,
		`event_msg {"type":"task_started","turn_id":"done"}`, plan("p1", "in_progress"), out("p1"), plan("p2", "completed"), out("p2"),
		`event_msg {"type":"task_complete","turn_id":"done"}`,
		`event_msg {"type":"task_started","turn_id":"half"}`, plan("p3", "in_progress"), out("p3"),
		`event_msg {"type":"task_complete","turn_id":"half"}`,
		`event_msg {"type":"task_started","turn_id":"aborted"}`, `event_msg {"type":"turn_aborted","turn_id":"aborted","reason":"interrupted"}`,
		`event_msg {"type":"task_started","turn_id":"error"}`, `event_msg {"type":"error","message":"stream disconnected"}`,
		`event_msg {"type":"task_complete","turn_id":"error"}`,
		`event_msg {"type":"task_started","turn_id":"noplan"}`, `event_msg {"type":"task_complete","turn_id":"noplan"}`,
		`event_msg {"type":"task_started","turn_id":"open"}`,
	)
	b, c := translate(t, path)
	got := ended(t, adaptertest.DecodeLines(t, b))
	want := map[string]events.Outcome{
		"th/done": events.OutcomeSuccess, "th/half": events.OutcomeUnknown, "th/aborted": events.OutcomeAborted,
		"th/error": events.OutcomeFailure, "th/noplan": events.OutcomeUnknown,
	}
	for id, o := range want {
		if got[id] == nil || got[id].Outcome != o {
			t.Errorf("%s: ended %+v, want outcome %s", id, got[id], o)
		}
	}
	if len(got) != len(want) || c.Open != 1 {
		t.Errorf("%d ended, %d open; want %d ended, 1 open (th/open)", len(got), c.Open, len(want))
	}
}

// TestCommands: a command's outcome from its exit code, the output's tail
// as the error; a command still running is taken as succeeded and counted.
func TestCommands(t *testing.T) {
	long := strings.Repeat("x", 5000) + "the end"
	path := rollout(t,
		`event_msg {"type":"task_started","turn_id":"t"}`,
		`response_item {"type":"function_call","name":"exec_command","call_id":"ok","arguments":"{\"cmd\":\"true\"}"}`,
		`response_item {"type":"function_call_output","call_id":"ok","output":"Chunk ID: 1\nProcess exited with code 0\nOutput:\n"}`,
		`response_item {"type":"function_call","name":"exec_command","call_id":"long","arguments":"{\"cmd\":\"false\"}"}`,
		`response_item {"type":"function_call_output","call_id":"long","output":"Process exited with code 2\nOutput:\n`+long+`"}`,
		`response_item {"type":"function_call","name":"exec_command","call_id":"item","arguments":"{}"}`,
		`event_msg {"type":"item_completed","item":{"type":"CommandExecution","id":"item","exit_code":127,"status":"failed","aggregated_output":"sh: nope: not found\n"}}`,
		`response_item {"type":"function_call_output","call_id":"item","output":"whatever"}`,
		`response_item {"type":"function_call","name":"exec_command","call_id":"running","arguments":"{}"}`,
		`response_item {"type":"function_call_output","call_id":"running","output":"Process running with session ID 7\nOutput:\n"}`,
		`response_item {"type":"function_call","name":"shell","call_id":"old","arguments":"{}"}`,
		`response_item {"type":"function_call_output","call_id":"old","output":"{\"output\":\"boom\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.1}}"}`,
		`event_msg {"type":"task_complete","turn_id":"t"}`,
	)
	b, c := translate(t, path)
	calls := toolCalls(t, adaptertest.DecodeLines(t, b))
	var got []string
	for _, d := range calls {
		got = append(got, fmt.Sprintf("%s %v %s %d", d.Tool, d.OK, d.ErrorKind, len([]rune(d.Error))))
	}
	want := []string{"exec_command true  0", "exec_command false exit_code 4096", "exec_command false exit_code 20", "exec_command true  0", "shell false exit_code 4"}
	if !slices.Equal(got, want) {
		t.Errorf("calls\n%q\nwant\n%q", got, want)
	}
	if len(calls) == 5 && !strings.HasSuffix(calls[1].Error, "the end") {
		t.Errorf("error text is not the output's tail: …%s", calls[1].Error[len(calls[1].Error)-20:])
	}
	if c.NoExitCode != 1 {
		t.Errorf("%d commands without an exit code, want 1", c.NoExitCode)
	}
}

// TestCodeModeUnread: a nested update_plan whose argument is not a JSON
// literal is not read (the plan is never guessed), nor one of a script
// that did not complete.
func TestCodeModeUnread(t *testing.T) {
	path := rollout(t,
		`event_msg {"type":"task_started","turn_id":"t"}`,
		`response_item {"type":"custom_tool_call","name":"exec","call_id":"e1","input":"const p = {plan: [{step: \"a\", status: \"pending\"}]};\ntext(await tools.update_plan(p));\n"}`,
		`response_item {"type":"custom_tool_call_output","call_id":"e1","output":[{"type":"input_text","text":"Script completed\n"}]}`,
		`response_item {"type":"custom_tool_call","name":"exec","call_id":"e2","input":"text(await tools.update_plan({\"plan\":[{\"step\":\"a\",\"status\":\"pending\"}]}));"}`,
		`response_item {"type":"custom_tool_call_output","call_id":"e2","output":[{"type":"input_text","text":"Script failed\nSyntaxError"}]}`,
		`event_msg {"type":"task_complete","turn_id":"t"}`,
	)
	b, c := translate(t, path)
	m := measure(t, adaptertest.DecodeLines(t, b))
	if m.Plans != 0 || m.ControlCalls != 0 || c.ScriptPlansUnread != 1 || c.ScriptPlansFailed != 1 || c.Scripts != 2 {
		t.Errorf("measured %+v, counts %+v: want no plan, 1 unread, 1 in a failed script, 2 scripts", m, c)
	}
}

// TestFiles: the rollouts of a sessions tree, at any depth, in name order.
func TestFiles(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"2026/12/02/rollout-b.jsonl", "2026/11/30/rollout-c.jsonl", "2026/12/01/rollout-a.jsonl", "2026/12/01/notes.jsonl", "session_index.jsonl"} {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := codex.NewAdapter().Files(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i], _ = filepath.Rel(root, got[i])
	}
	want := []string{"2026/11/30/rollout-c.jsonl", "2026/12/01/rollout-a.jsonl", "2026/12/02/rollout-b.jsonl"}
	if !slices.Equal(got, want) {
		t.Errorf("Files = %q, want %q", got, want)
	}
}
