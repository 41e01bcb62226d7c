package claudecode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/adapter/claudecode"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

const source = "claude-code/bridge/test-host"

var clock = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type sink struct{ evs []*events.Event }

func (s *sink) Send(_ context.Context, e *events.Event) error {
	s.evs = append(s.evs, e)
	return nil
}

func translate(tb testing.TB, in []byte) (*sink, claudecode.Counts, []string) {
	tb.Helper()
	s := &sink{}
	cfg := claudecode.Config{Agent: "claude-code", Source: source, Model: "unknown", Plan: plandialect.DefaultConfig()}
	tr, err := claudecode.NewTranslator(cfg, s, func() time.Time { return clock })
	if err != nil {
		tb.Fatal(err)
	}
	var bad []string
	ctx := context.Background()
	if err := tr.Read(ctx, bytes.NewReader(in), func(e *claudecode.RecordError) { bad = append(bad, e.Error()) }); err != nil {
		tb.Fatal(err)
	}
	if err := tr.Close(ctx); err != nil {
		tb.Fatal(err)
	}
	// Every event passes the contract once encoded.
	var buf bytes.Buffer
	for _, e := range s.evs {
		b, _ := json.Marshal(e)
		buf.Write(append(b, '\n'))
	}
	adaptertest.DecodeLines(tb, buf.Bytes())
	return s, tr.Stats(), bad
}

// TestTranslateFixture translates hook inputs in the published format:
// a session with a plan, a status-only update, a rewording and an added
// task (one replan), a failed and an interrupted call, ended by SessionEnd;
// one ended by its Stop at the end of input; one left open.
func TestTranslateFixture(t *testing.T) {
	in, err := os.ReadFile("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s, c, bad := translate(t, in)
	var got []string
	for _, e := range s.evs {
		got = append(got, e.Subject[:8]+" "+adaptertest.Render(t, e))
	}
	want := []string{
		`8c35adc1 started goal="Fix the integer overflow in the lexer" agent=claude-code model=claude-sonnet-4-5 tools=`,
		`8c35adc1 tool TodoWrite task=- hint=- ok control ms=20`,
		`8c35adc1 plan.created model tasks=[1 2]`,
		`8c35adc1 tool Read task=1 hint=- ok ms=250`,
		`8c35adc1 tool TodoWrite task=- hint=- ok control`,
		`8c35adc1 task.completed 1 success calls=1`,
		`8c35adc1 tool Bash task=2 hint=- failed error="Exit code 1\n--- FAIL: TestOverflow" ms=3500`,
		`8c35adc1 tool TodoWrite task=- hint=- ok control`,
		`8c35adc1 plan.updated #1 model tasks=[1* 2 3] kept=[1] dropped=[] over_cap=false`,
		`8c35adc1 tool Edit task=2 hint=- failed error="The user doesn't want to proceed with this tool use." kind=interrupted`,
		`8c35adc1 tool TodoWrite task=- hint=- ok control`,
		`8c35adc1 task.completed 2 partial_success calls=2`,
		`8c35adc1 task.completed 3 success calls=0`,
		// the request ends at its Stop, not at SessionEnd
		`8c35adc1 ended success replans=1 calls=7 failed=2 iterations=1 ms=30000`,
		`0b7e1d55 started goal="What does parse.go do?" agent=claude-code model=unknown tools=`,
		`0b7e1d55 tool Read task=- hint=- ok`,
		`5d1f0c2e started goal="still running" agent=claude-code model=unknown tools=`,
		// no plan: nothing shows how it went
		`0b7e1d55 ended unknown replans=0 calls=1 failed=0 iterations=1 ms=0`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, e := range s.evs {
		if e.Source != source {
			t.Errorf("event %d: source %q", i, e.Source)
		}
	}
	if first := s.evs[0]; first.ID != "8c35adc1-2f4e-4c1b-9d0a-6b1f3f0e9a21/start" || first.Seq != 1 || !first.Time.Equal(time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC)) {
		t.Errorf("first event: id %s seq %d time %s", first.ID, first.Seq, first.Time)
	}
	wantC := claudecode.Counts{Records: 18, Events: 18, Sessions: 3, Ended: 2, Open: 1, ClockTimed: 4}
	if c != wantC || len(bad) != 0 {
		t.Errorf("counts %+v, want %+v; malformed %q", c, wantC, bad)
	}
}

// TestTranslateAgain: the same hooks translate to the same ids and seqs.
func TestTranslateAgain(t *testing.T) {
	in, _ := os.ReadFile("testdata/session.jsonl")
	a, _, _ := translate(t, in)
	b, _, _ := translate(t, in)
	for i := range a.evs {
		if a.evs[i].ID != b.evs[i].ID || a.evs[i].Seq != b.evs[i].Seq {
			t.Fatalf("event %d: %s #%d, then %s #%d", i, a.evs[i].ID, a.evs[i].Seq, b.evs[i].ID, b.evs[i].Seq)
		}
	}
}

func TestTranslateMalformed(t *testing.T) {
	tests := []struct {
		name, in, err string
	}{
		{"no session", `{"hook_event_name":"Stop"}`, "no session_id"},
		{"no event", `{"session_id":"s"}`, "no hook_event_name"},
		{"not an object", `42`, "not a JSON object"},
		{"an array of non-objects", `[1]`, "not a JSON object"},
		{"no tool name", `{"session_id":"s","hook_event_name":"PostToolUse"}`, "without tool_name"},
		{"bad hook", `{"time":"2026-11-30T10:00:00Z","hook":{"session_id":3}}`, "hook input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, bad := translate(t, []byte(tt.in))
			if len(bad) != 1 || !strings.Contains(bad[0], tt.err) || c.Malformed != 1 {
				t.Errorf("malformed %q (count %d), want one with %q", bad, c.Malformed, tt.err)
			}
		})
	}
	// Text that is not JSON is skipped, counted as one record, its line
	// named.
	s := &sink{}
	tr, _ := claudecode.NewTranslator(claudecode.Config{Agent: "claude-code", Source: source, Plan: plandialect.DefaultConfig()}, s, time.Now)
	var got []string
	if err := tr.Read(context.Background(), strings.NewReader("{}\nnot json\nnor this"), func(e *claudecode.RecordError) { got = append(got, e.Error()) }); err != nil {
		t.Fatalf("Read(not json) = %v", err)
	}
	if len(got) != 2 || !strings.HasPrefix(got[1], "record 2 (line 2): ") {
		t.Errorf("Read(not json): malformed %q, want record 1 and record 2 (line 2)", got)
	}
}

func FuzzRecord(f *testing.F) {
	in, _ := os.ReadFile("testdata/session.jsonl")
	for line := range bytes.SplitSeq(in, []byte("\n")) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &sink{}
		tr, _ := claudecode.NewTranslator(claudecode.Config{Agent: "claude-code", Source: source, Model: "m", Plan: plandialect.DefaultConfig()}, s, func() time.Time { return clock })
		ctx := context.Background()
		for range 2 {
			err := tr.Record(ctx, b)
			var re *claudecode.RecordError
			if err != nil && !errors.As(err, &re) {
				t.Fatalf("Record: %v", err)
			}
		}
		if err := tr.Close(ctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
	})
}

// TestRealCLITaskTools bridges what the real Claude Code 2.1.332 wrote when
// internal/workshop/realcli drove it (testdata/realcli/claude-code): its
// task tools go through the plan-dialect core, and the script's truth,
// counted by hand in testdata/realcli/README.md, comes out exactly.
func TestRealCLITaskTools(t *testing.T) {
	for _, tt := range []struct {
		capture        string
		want           realcli.Truth
		control, ended int
	}{
		// Two runs (the second is claude -p --resume), one request each; 16
		// control calls: TaskCreate 5, TaskUpdate 10, ToolSearch 1.
		{"claude-code", realcli.Truth{Requests: 2, Plans: 2, Replans: 1, RealCalls: 6, FailedCalls: 1, Completions: 5}, 16, 2},
		// One run, three prompts; the third finishes its list and writes a
		// fresh one: four requests; 25 control calls: TaskCreate 8,
		// TaskUpdate 16, ToolSearch 1 (testdata/realcli/README.md counts them).
		{"claude-code-one-run", realcli.Truth{Requests: 4, Plans: 4, Replans: 1, RealCalls: 10, FailedCalls: 1, Completions: 8}, 25, 4},
	} {
		t.Run(tt.capture, func(t *testing.T) {
			in, err := os.ReadFile("../../../testdata/realcli/" + tt.capture + "/hooks.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			s, c, bad := translate(t, in)
			if len(bad) > 0 {
				t.Fatalf("malformed records: %v", bad)
			}
			var trace []string
			control, ended := 0, 0
			for _, e := range s.evs {
				trace = append(trace, e.Subject[8:]+" "+adaptertest.Render(t, e))
				switch e.Type {
				case events.SessionEnded:
					ended++
				case events.ToolCalled:
					var d events.ToolCalledData
					if err := json.Unmarshal(e.Data, &d); err != nil {
						t.Fatal(err)
					}
					if d.Control {
						control++
					}
				}
			}
			if got := truthOf(t, s.evs); got != tt.want || control != tt.control || ended != tt.ended {
				t.Fatalf("bridged %+v, %d control calls, %d ended; want %+v, %d, %d\n%s", got, control, ended, tt.want, tt.control, tt.ended, strings.Join(trace, "\n"))
			}
			if c.Malformed != 0 || c.Quality != (claudecode.Counts{}).Quality {
				t.Fatalf("counts %+v: want no malformed record and no data-quality note", c)
			}
		})
	}
}

// TestTranslateJSONArray: a hook log committed as one JSON array of hook
// inputs gives the events its lines give, record numbers included.
func TestTranslateJSONArray(t *testing.T) {
	lines, err := os.ReadFile("../../../testdata/realcli/claude-code/hooks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	elems := strings.Split(strings.TrimSpace(string(lines)), "\n")
	elems = append(elems[:3], append([]string{`{"hook_event_name": "Stop"}`}, elems[3:]...)...) // a bad record, number 4
	array := "[" + strings.Join(elems, ",\n") + "]\n"
	fromLines, lineCounts, lineBad := translate(t, []byte(strings.Join(elems, "\n")+"\n"))
	fromArray, arrayCounts, arrayBad := translate(t, []byte(array))
	if len(fromLines.evs) == 0 {
		t.Fatal("the real hook log made no events")
	}
	a, _ := json.Marshal(fromLines.evs)
	b, _ := json.Marshal(fromArray.evs)
	if !bytes.Equal(a, b) {
		t.Errorf("the array gives %d events, the lines %d; they differ", len(fromArray.evs), len(fromLines.evs))
	}
	if lineCounts != arrayCounts {
		t.Errorf("counts: array %+v, lines %+v", arrayCounts, lineCounts)
	}
	if len(arrayBad) != 1 || !strings.HasPrefix(arrayBad[0], "record 4 (line 4):") || !slices.Equal(arrayBad, lineBad) {
		t.Errorf("malformed: array %q, lines %q; want the one record 4", arrayBad, lineBad)
	}
}
