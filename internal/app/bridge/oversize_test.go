package bridge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
)

// TestOversizeEventLoud: a plan too large for the NATS server (a TodoWrite
// of 30,000 todos, over 1 MiB as an event) is not published, and the bridge
// says so (exit non-zero, the event named, where it can go instead) after
// publishing every other event of the input; written to -out, it is
// there for ingest -file.
func TestOversizeEventLoud(t *testing.T) {
	var todos strings.Builder
	for i := range 30000 {
		if i > 0 {
			todos.WriteString(",")
		}
		fmt.Fprintf(&todos, `{"content":"Task number %d of the long list","status":"pending","activeForm":"Doing it"}`, i)
	}
	hook := func(event, extra string) string {
		return fmt.Sprintf(`{"time":"2026-12-01T10:00:0%dZ","hook":{"session_id":"s1","prompt_id":"p1","hook_event_name":%q%s}}`, len(extra)%10, event, extra)
	}
	lines := []string{
		hook("UserPromptSubmit", `,"prompt":"plan a lot"`),
		hook("PostToolUse", `,"tool_name":"TodoWrite","tool_use_id":"t1","tool_input":{"todos":[`+todos.String()+`]},"tool_response":{}`),
		hook("PostToolUse", `,"tool_name":"Bash","tool_use_id":"t2","tool_input":{"command":"ls"},"tool_response":{}`),
		hook("Stop", ``),
	}
	file := writeFile(t, "hooks.jsonl", []byte(strings.Join(lines, "\n")+"\n"))
	p := adaptertest.StartPipeline(t)
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"-agent", "claude-code", "-in", file, "-nats", p.Srv.ClientURL()}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "s1/p1/t1/plan") || !strings.Contains(err.Error(), "max_payload") || !strings.Contains(err.Error(), "ingest -file") {
		t.Fatalf("run = %v, want an error naming the oversize plan event and where it can go\n%s", err, errOut.String())
	}
	p.Settle(t)
	// Everything else arrived: start, the two calls, the end.
	if n := p.Count(t, "SELECT count(*) FROM events"); n != 4 {
		t.Errorf("%d events stored, want 4 (all but the oversize plan)", n)
	}
	// To a file, it is written like the rest (ingest -file dead-letters an
	// oversize event with its reason: internal/ingest's tests).
	jsonl := filepath.Join(t.TempDir(), "events.jsonl")
	if err := run(t.Context(), []string{"-agent", "claude-code", "-in", file, "-out", jsonl}, nil, &out, &errOut); err != nil {
		t.Fatalf("run -out: %v", err)
	}
	b, err := os.ReadFile(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if got := adaptertest.DecodeLines(t, b); len(got) != 5 {
		t.Errorf("-out wrote %d events, want 5", len(got))
	}
}
