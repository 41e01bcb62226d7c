package claudecode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/adapter/claudecode"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// realTranscript is what the real Claude Code 2.1.332 wrote as its
// transcript when internal/workshop/realcli drove it.
const realTranscript = "../../../testdata/realcli/claude-code/transcript.jsonl"

// translateTranscript translates the transcripts ins, one file each, and
// returns the events as JSON lines (checked against the contract), the
// totals and the malformed lines.
func translateTranscript(tb testing.TB, ins ...[]byte) ([]*events.Event, []byte, claudecode.TranscriptCounts, []string) {
	tb.Helper()
	s := &sink{}
	cfg := claudecode.Config{Agent: "claude-code", Source: source, Model: "unknown", Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig()}
	tr, err := claudecode.NewTranscript(cfg, s)
	if err != nil {
		tb.Fatal(err)
	}
	var bad []string
	ctx := context.Background()
	for _, in := range ins {
		if err := tr.Read(ctx, bytes.NewReader(in), func(e *claudecode.LineError) { bad = append(bad, e.Error()) }); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tr.Close(ctx); err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	for _, e := range s.evs {
		b, err := json.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	adaptertest.DecodeLines(tb, buf.Bytes())
	return s.evs, buf.Bytes(), tr.Stats(), bad
}

// truthOf counts what realcli.Truth counts in evs.
func truthOf(tb testing.TB, evs []*events.Event) realcli.Truth {
	tb.Helper()
	var got realcli.Truth
	for _, e := range evs {
		switch e.Type {
		case events.SessionStarted:
			got.Requests++
		case events.PlanCreated:
			got.Plans++
		case events.PlanUpdated:
			got.Replans++
		case events.TaskCompleted:
			got.Completions++
		case events.ToolCalled:
			var d events.ToolCalledData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				tb.Fatal(err)
			}
			if !d.Control {
				got.RealCalls++
				if !d.OK {
					got.FailedCalls++
				}
			}
		}
	}
	return got
}

func trace(tb testing.TB, evs []*events.Event) string {
	tb.Helper()
	var lines []string
	for _, e := range evs {
		lines = append(lines, e.Subject[8:]+" "+e.ID+" "+adaptertest.Render(tb, e))
	}
	return strings.Join(lines, "\n")
}

// TestRealCLITranscript bridges the transcript the real Claude Code wrote
// for ClaudeCodeScenario: the script's truth, counted by hand in
// testdata/realcli/README.md, comes out exactly, both requests ended at
// their final answers; the same file translated again is byte for byte
// the same.
func TestRealCLITranscript(t *testing.T) {
	in, err := os.ReadFile(realTranscript)
	if err != nil {
		t.Fatal(err)
	}
	evs, first, c, bad := translateTranscript(t, in)
	if len(bad) > 0 {
		t.Fatalf("malformed lines: %v", bad)
	}
	want := realcli.ClaudeCodeScenario(t.TempDir()).Truth
	if got := truthOf(t, evs); got != want {
		t.Fatalf("translated %+v, want %+v\n%s", got, want, trace(t, evs))
	}
	if c.Requests != 2 || c.Ended != 2 || c.Open != 0 || c.Malformed != 0 || c.Quality != (claudecode.TranscriptCounts{}).Quality {
		t.Errorf("counts %+v: want 2 requests ended, none open, no malformed line, no data-quality note", c)
	}
	_, again, _, _ := translateTranscript(t, in)
	if !bytes.Equal(first, again) {
		t.Errorf("the same transcript translated again gives other events")
	}
	t.Logf("%+v\n%s", c, trace(t, evs))
}
