package registry

import (
	"os"
	"strings"
	"testing"
)

// TestDescribe: the first record of each kind of input the bridge knows,
// as the real agents wrote it where we have a capture, is told apart.
func TestDescribe(t *testing.T) {
	file := func(path string) []byte {
		b, err := os.ReadFile("../../../" + path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		head []byte
		want string // a prefix of the description; "" for none
	}{
		{"claude code hooks", file("testdata/realcli/claude-code/hooks.jsonl"), "Claude Code hook inputs, which bridge -agent claude-code reads"},
		{"claude code hooks, bare", []byte(`{"session_id":"s","hook_event_name":"Stop"}`), "Claude Code hook inputs"},
		{"claude code hooks as one array", []byte(" [\n" + `{"session_id":"s","hook_event_name":"Stop"}]`), "Claude Code hook inputs"},
		{"claude code transcript", file("testdata/realcli/claude-code/transcript.jsonl"), "a Claude Code transcript"},
		{"codex rollout", file("testdata/realcli/codex/rollout-1.jsonl"), "a Codex CLI rollout, which bridge -agent codex reads"},
		{"codex hooks", file("testdata/realcli/codex/hooks.jsonl"), "Codex CLI hook inputs, which bridge -agent codex reads"},
		{"cursor hooks", file("internal/adapter/cursor/testdata/session.jsonl"), "Cursor hook inputs"},
		{"skilllite", file("testdata/bridge/replans.jsonl"), "SkillLite agent-rpc output"},
		{"otlp", []byte(`{"resourceSpans":[]}`), "OpenTelemetry traces"},
		{"our own events", []byte(`{"specversion":"1.0","id":"x"}`), "evosignal events (CloudEvents), which ingest -file FILE: they need no bridge reads"},
		{"not json", []byte("hello\n"), ""},
		{"something else", []byte(`{"a":1}`), ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Describe(tt.head)
			if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
				t.Errorf("Describe = %q, want %q", got, tt.want)
			}
		})
	}
}
