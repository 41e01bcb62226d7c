package otel_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// cliCapture maps one of the real CLIs' own OTLP captures
// (testdata/realcli/<dir>: traces.jsonl and logs.jsonl of one scripted
// run, written by internal/workshop/realcli's TestClaudeCodeOTLP and
// TestCodexOTLP) as one file, logs after traces, as `cat traces.jsonl
// logs.jsonl | evosignal bridge -agent otel` reads them.
func cliCapture(t *testing.T, dir string, order ...string) ([]*events.Event, otelad.Stats) {
	t.Helper()
	var in bytes.Buffer
	for _, f := range order {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "realcli", dir, f))
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
	}
	s, m := mapReader(t, &in)
	return s.evs, m.Stats()
}

// TestCLIOwnTelemetry: the real Claude Code and Codex CLIs' own OTLP
// export of one scripted run (their spans carry no tool arguments; their
// log records do) gives the scenario's truth, the same requests (session
// ids) as the run's own files, and no data-quality note; logs before
// traces give the same events.
func TestCLIOwnTelemetry(t *testing.T) {
	for _, tc := range []struct {
		dir   string
		truth realcli.Truth
		ids   []string // the requests' session ids, as the CLI's own files give them
	}{
		{"claude-code-otlp", realcli.ClaudeCodeOneRunScenario("").Truth, nil},
		{"codex-otlp", realcli.CodexScenario().Truth, nil},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			evs, st := cliCapture(t, tc.dir, "traces.jsonl", "logs.jsonl")
			got, err := realcli.TruthOf(evs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.truth {
				t.Errorf("truth %+v, want %+v", got, tc.truth)
			}
			if n := st.Notes(); len(n) > 0 {
				t.Errorf("notes %q, want none", n)
			}
			var ids []string
			for _, e := range evs {
				if e.Type == events.SessionStarted {
					ids = append(ids, e.Subject)
				}
			}
			t.Logf("sessions %v; stats %+v", ids, st)
			rev, _ := cliCapture(t, tc.dir, "logs.jsonl", "traces.jsonl")
			if !slices.EqualFunc(evs, rev, func(a, b *events.Event) bool { return a.ID == b.ID && a.Seq == b.Seq }) {
				t.Errorf("logs before traces: %d events, traces before logs: %d, or other ids", len(rev), len(evs))
			}
		})
	}
}
