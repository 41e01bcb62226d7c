package codex_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/codex"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

const source = "codex/bridge/test-host"

func capture(tb testing.TB, dir string) string {
	tb.Helper()
	return filepath.Join("..", "..", "..", "testdata", "realcli", dir, "rollout-1.jsonl")
}

// translate reads the rollout files in order into JSON lines of events.
func translate(tb testing.TB, files ...string) ([]byte, codex.Counts) {
	tb.Helper()
	var buf bytes.Buffer
	w := agent.NewJSONLWriter(&buf)
	tr, err := codex.NewTranslator(codex.Config{Agent: "codex", Source: source, Model: "unknown", Plan: plandialect.DefaultConfig()}, w)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if err := tr.Read(ctx, bytes.NewReader(b), func(e *codex.LineError) { tb.Errorf("%s: %v", f, e) }); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tr.Close(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), tr.Stats()
}

// measured is what the analyses count in a stream of events.
type measured struct {
	Requests, Ended, Plans, Replans, RealCalls, FailedCalls, Completions, ControlCalls int
}

func measure(tb testing.TB, evs []*events.Event) (m measured) {
	tb.Helper()
	for _, e := range evs {
		d, err := e.Payload()
		if err != nil {
			tb.Fatal(err)
		}
		switch d := d.(type) {
		case *events.SessionStartedData:
			m.Requests++
		case *events.SessionEndedData:
			m.Ended++
			m.Replans += int(d.Replans)
		case *events.PlanCreatedData:
			m.Plans++
		case *events.TaskCompletedData:
			m.Completions++
		case *events.ToolCalledData:
			if d.Control {
				m.ControlCalls++
				continue
			}
			m.RealCalls++
			if !d.OK {
				m.FailedCalls++
			}
		}
	}
	return m
}

// TestRealCaptures: both rollouts Codex 0.171.0 wrote for the scripted
// runs (testdata/realcli) give exactly the script's truth; in code mode the
// plan is read from the exec scripts' text (JSON literals).
func TestRealCaptures(t *testing.T) {
	truth := realcli.CodexScenario().Truth
	if realcli.CodexCodeModeScenario().Truth != truth {
		t.Fatal("the two scripts' truths differ")
	}
	want := measured{Requests: truth.Requests, Ended: truth.Requests, Plans: truth.Plans, Replans: truth.Replans,
		RealCalls: truth.RealCalls, FailedCalls: truth.FailedCalls, Completions: truth.Completions, ControlCalls: 7}
	for _, dir := range []string{"codex", "codex-code-mode"} {
		t.Run(dir, func(t *testing.T) {
			out, c := translate(t, capture(t, dir))
			evs := adaptertest.DecodeLines(t, out)
			if got := measure(t, evs); got != want {
				t.Errorf("measured %+v\nwant     %+v", got, want)
			}
			if c.Malformed != 0 || c.Open != 0 || c.Threads != 1 || c.Ended != 2 {
				t.Errorf("counts %+v: want 0 malformed, 0 open, 1 thread, 2 ended", c)
			}
			checkEnvelope(t, evs)
			again, _ := translate(t, capture(t, dir))
			if !bytes.Equal(out, again) {
				t.Error("the same rollout read again gives other events")
			}
		})
	}
}

// checkEnvelope: every session is <thread>/<turn>, numbered from 1,
// started first and ended last, its events at the rollout's times (the
// captures were made on 2026-12-01), each id once.
func checkEnvelope(tb testing.TB, evs []*events.Event) {
	tb.Helper()
	seq := map[string]int64{}
	ids := map[string]bool{}
	var thread string
	goals := []string{}
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range evs {
		th, _, ok := strings.Cut(e.Subject, "/")
		if !ok || (thread != "" && th != thread) {
			tb.Errorf("session %q: want <thread>/<turn> of one thread", e.Subject)
		}
		thread = th
		seq[e.Subject]++
		if e.Seq != seq[e.Subject] {
			tb.Errorf("%s %s: seq %d, want %d", e.Subject, e.Type, e.Seq, seq[e.Subject])
		}
		if (e.Seq == 1) != (e.Type == events.SessionStarted) {
			tb.Errorf("%s seq %d is %s", e.Subject, e.Seq, e.Type)
		}
		if ids[e.ID] {
			tb.Errorf("event id %s twice", e.ID)
		}
		ids[e.ID] = true
		if e.Source != source {
			tb.Errorf("source %q", e.Source)
		}
		if e.Time.Before(day) || !e.Time.Before(day.Add(24*time.Hour)) {
			tb.Errorf("%s %s at %s: not the rollout's time", e.Subject, e.Type, e.Time)
		}
		if e.Type == events.SessionStarted {
			d, _ := e.Payload()
			s := d.(*events.SessionStartedData)
			goals = append(goals, s.Goal)
			if s.AgentVersion != "0.171.0" {
				tb.Errorf("agent version %q, want 0.171.0", s.AgentVersion)
			}
		}
	}
	want := realcli.CodexScenario().Prompts
	if strings.Join(goals, "|") != strings.Join(want, "|") {
		tb.Errorf("goals %q, want the prompts %q", goals, want)
	}
	if len(evs) > 0 && evs[len(evs)-1].Type != events.SessionEnded {
		tb.Errorf("last event %s", evs[len(evs)-1].Type)
	}
}
