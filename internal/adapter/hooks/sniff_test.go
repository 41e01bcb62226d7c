package hooks

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestSniff(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     Form
	}{
		{"hook input", `{"session_id":"s","hook_event_name":"Stop"}` + "\n", Hooks},
		{"envelope", `{"time":"2026-12-01T10:00:00Z","hook":{"session_id":"s"}}` + "\n", Hooks},
		{"array", "[\n" + `{"session_id":"s","hook_event_name":"Stop"}]`, Hooks},
		{"transcript", `{"type":"user","sessionId":"s","uuid":"u"}` + "\n", Typed},
		{"rollout", `{"timestamp":"t","type":"session_meta","payload":{}}` + "\n", Typed},
		{"after blank and odd lines", "\n{}\n" + `{"type":"assistant"}` + "\n", Typed},
		{"indented json", "{\n  \"session_id\": \"s\"\n}\n", Undecided},
		{"empty", "", Undecided},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, got, err := Sniff(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("form %d, want %d", got, tt.want)
			}
			if b, _ := io.ReadAll(r); string(b) != tt.in {
				t.Errorf("read again %q, want the whole input %q", b, tt.in)
			}
		})
	}
	t.Run("a growing file over a pipe", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		go pw.Write([]byte(`{"type":"session_meta","payload":{}}` + "\n")) // and nothing more yet
		done := make(chan Form, 1)
		go func() {
			_, f, _ := Sniff(pr)
			done <- f
		}()
		select {
		case f := <-done:
			if f != Typed {
				t.Errorf("form %d, want Typed", f)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Sniff waits for more than the line that decides")
		}
	})
}
