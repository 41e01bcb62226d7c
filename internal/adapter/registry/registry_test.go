package registry_test

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/adapter/registry"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/oteltest"
)

func read(tb testing.TB, elem ...string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", ".."}, elem...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func otlpLines(tb testing.TB) []byte {
	tb.Helper()
	ss := adaptertest.Generate(31, 12, []string{"TodoWrite", "update_plan", "write_todos"}, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), false)
	var b bytes.Buffer
	for _, td := range oteltest.Exports(4, ss) {
		line, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

// TestConformance runs the one suite every adapter passes over a real or
// generated input of each; an adapter in the registry without a case here
// fails.
func TestConformance(t *testing.T) {
	cases := map[string]adaptertest.Case{
		"skilllite": {
			Args:  []string{"-source", "skilllite/bridge/test-host"},
			Input: read(t, "testdata", "bridge", "replans.jsonl"),
			Bad:   []byte(`{"event": 42}`),
		},
		"otel": {
			Input: otlpLines(t),
			Bad:   []byte(`{"resourceSpans": "not a list"}`),
		},
		"claude-code": {
			Args:  []string{"-source", "claude-code/bridge/test-host"},
			Input: read(t, "internal", "adapter", "claudecode", "testdata", "session.jsonl"),
			Bad:   []byte(`{"hook_event_name": "Stop"}`),
		},
		// The same adapter reads transcripts (told apart per file).
		"claude-code transcript": {
			Args:  []string{"-source", "claude-code/bridge/test-host"},
			Input: read(t, "testdata", "realcli", "claude-code", "transcript.jsonl"),
			Bad:   []byte(`{"type": "assistant", "sessionId": "s", "timestamp": "yesterday", "message": {}}`),
			Lines: true,
		},
		"cursor": {
			Args:  []string{"-source", "cursor/bridge/test-host"},
			Input: read(t, "internal", "adapter", "cursor", "testdata", "session.jsonl"),
			Bad:   []byte(`{"hook_event_name": "stop"}`),
		},
		"codex": {
			Args:  []string{"-source", "codex/bridge/test-host"},
			Input: read(t, "testdata", "realcli", "codex", "rollout-1.jsonl"),
			Bad:   []byte(`{"timestamp": "yesterday", "type": "event_msg", "payload": {"type": "task_started"}}`),
		},
	}
	for i, a := range registry.All() {
		if _, ok := cases[a.Name()]; !ok {
			t.Errorf("adapter %q has no conformance case", a.Name())
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(cases)) {
			c := cases[name]
			if name != a.Name() && !strings.HasPrefix(name, a.Name()+" ") {
				continue
			}
			t.Run(name, func(t *testing.T) {
				c.New = func() adapter.Adapter { return registry.All()[i] }
				adaptertest.Conformance(t, c)
			})
		}
	}
}

// TestNamesUnique: -agent selects one adapter.
func TestNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range registry.All() {
		if seen[a.Name()] {
			t.Errorf("two adapters are named %q", a.Name())
		}
		seen[a.Name()] = true
		if a.Help() == "" {
			t.Errorf("adapter %q has no help", a.Name())
		}
	}
}
