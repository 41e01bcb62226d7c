package bridge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/adapter/registry"
	"github.com/evosignal/evosignal/internal/adapter/skilllite"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

const (
	fixtures   = "../../../testdata/bridge"
	testSource = "skilllite/bridge/test-host"
)

func types(evs []*events.Event) []events.Type {
	var ts []events.Type
	for _, e := range evs {
		ts = append(ts, e.Type)
	}
	return ts
}

func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// translatedTypes is the types of the events the adapter makes of fixture
// name, translated in process: what the command must deliver.
func translatedTypes(tb testing.TB, name string) []events.Type {
	tb.Helper()
	var buf bytes.Buffer
	w := agent.NewJSONLWriter(&buf)
	tr := skilllite.NewTranslator(skilllite.Config{Agent: "skilllite", Source: testSource, AgentVersion: "unknown", Model: "unknown"}, w, time.Now)
	ctx := context.Background()
	if err := tr.ReadLines(ctx, bytes.NewReader(readFixture(tb, name)), nil, nil); err != nil {
		tb.Fatal(err)
	}
	if err := tr.Close(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return types(adaptertest.DecodeLines(tb, buf.Bytes()))
}

func TestRunWritesJSONLines(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-agent", "skilllite", "-source", testSource, "-in", filepath.Join(fixtures, "replans.jsonl"), "-out", "-"}
	if err := run(t.Context(), args, nil, &out, &errOut); err != nil {
		t.Fatalf("run(%q): %v\n%s", args, err, errOut.String())
	}
	evs := adaptertest.DecodeLines(t, out.Bytes())
	adaptertest.CheckSessions(t, evs, testSource)
	want := translatedTypes(t, "replans.jsonl")
	if got := types(evs); !slices.Equal(got, want) {
		t.Errorf("run wrote %v, want %v", got, want)
	}
	if want := "bridge: 40 lines read, 30 events emitted, 1 sessions, 0 plain answers, 0 ignored, 0 malformed; " +
		"0 calls skipped, 0 results suppressed, 0 turns whose tool_calls differ from the agent's\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
}

func TestRunReadsStdinReportsMalformed(t *testing.T) {
	stdin := bytes.NewReader(readFixture(t, "malformed.jsonl"))
	file := filepath.Join(t.TempDir(), "events.jsonl")
	var out, errOut bytes.Buffer
	args := []string{"-agent", "skilllite", "-source", testSource, "-out", file}
	// Most lines are malformed: the run fails, loudly, and still delivers
	// the events the rest made, saying what the input looks like.
	err := run(t.Context(), args, stdin, &out, &errOut)
	if want := "15 of the 21 records read were malformed (4 events made of the rest); is this -agent skilllite input?; the input looks like SkillLite agent-rpc output, which bridge -agent skilllite reads"; err == nil || err.Error() != want {
		t.Fatalf("run(%q) = %v, want %q\n%s", args, err, want, errOut.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	evs := adaptertest.DecodeLines(t, b)
	adaptertest.CheckSessions(t, evs, testSource)
	if len(evs) != 4 {
		t.Errorf("wrote %d events, want 4", len(evs))
	}
	var lines []string
	for _, m := range regexp.MustCompile(`level=WARN msg="malformed line skipped" line=(\d+) `).FindAllStringSubmatch(errOut.String(), -1) {
		lines = append(lines, m[1])
	}
	if want := strings.Fields("2 3 4 5 6 7 8 9 10 11 12 13 15 19 21"); !slices.Equal(lines, want) {
		t.Errorf("reported lines %v, want %v\n%s", lines, want, errOut.String())
	}
	if want := "bridge: 21 lines read, 4 events emitted, 1 sessions, 0 plain answers, 0 ignored, 15 malformed; " +
		"0 calls skipped, 0 results suppressed, 0 turns whose tool_calls differ from the agent's\n"; !strings.HasSuffix(errOut.String(), want) {
		t.Errorf("stderr ends %q, want %q", errOut.String(), want)
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q, want nothing (events went to -out)", out.String())
	}
}

// lineFeeder hands out one line a Read, and calls hook before the line at
// index at.
type lineFeeder struct {
	lines [][]byte
	at    int
	hook  func()
}

func (f *lineFeeder) Read(p []byte) (int, error) {
	if len(f.lines) == 0 {
		return 0, io.EOF
	}
	if f.at--; f.at == -1 {
		f.hook()
	}
	n := copy(p, f.lines[0])
	f.lines[0] = f.lines[0][n:]
	if len(f.lines[0]) == 0 {
		f.lines = f.lines[1:]
	}
	return n, nil
}

// An interrupt stops the intake; the open turn still ends (aborted) and
// what was translated is written.
func TestRunInterruptEndsOpenTurn(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lines := bytes.SplitAfter(readFixture(t, "replans.jsonl"), []byte("\n"))
	stdin := &lineFeeder{lines: lines, at: 3, hook: cancel}
	var out, errOut bytes.Buffer
	err := run(ctx, []string{"-agent", "skilllite", "-source", testSource, "-out", "-"}, stdin, &out, &errOut)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run = %v, want context.Canceled", err)
	}
	evs := adaptertest.DecodeLines(t, out.Bytes())
	adaptertest.CheckSessions(t, evs, testSource)
	want := []string{
		`started goal="Run the flaky test five times" agent=skilllite model=unknown tools=`,
		`plan.created model tasks=[1 2 3]`,
		`model - task=1 tokens=2000/150/-`,
		`tool run_command task=1 hint=command ok`,
		`ended aborted replans=0 calls=1 failed=0 iterations=1`,
	}
	for i, e := range evs {
		if got := adaptertest.Render(t, e); i >= len(want) || !strings.HasPrefix(got, want[i]) {
			t.Errorf("event %d = %s, want %s…", i+1, got, want[min(i, len(want)-1)])
		}
	}
	if len(evs) != len(want) {
		t.Errorf("%d events, want %d", len(evs), len(want))
	}
}

func TestRunPublishesToJetStream(t *testing.T) {
	srv, _, js := testkit.Embedded(t)
	ctx := t.Context()
	st, err := bus.EnsureStream(ctx, js, bus.DefaultStream())
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	args := []string{"-agent", "skilllite", "-source", testSource, "-nats", srv.ClientURL(),
		"-in", filepath.Join(fixtures, "plain_answer.jsonl"), "-tools", "read_file, write_file,,"}
	if err := run(ctx, args, nil, &out, &errOut); err != nil {
		t.Fatalf("run(%q): %v\n%s", args, err, errOut.String())
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 7 { // 6 plan signals and 1 model call
		t.Fatalf("stream holds %d messages, want 7\n%s", info.State.Msgs, errOut.String())
	}
	var evs []*events.Event
	for seq := uint64(1); seq <= info.State.Msgs; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		e, err := events.Decode(m.Data)
		if err != nil {
			t.Fatalf("message %d does not pass the contract: %v", seq, err)
		}
		if want := events.SourceSubject("evo", testSource); m.Subject != want {
			t.Errorf("message %d on %s, want %s (its source's subject)", seq, m.Subject, want)
		}
		if got := m.Header.Get(jetstream.MsgIDHeader); got != e.ID {
			t.Errorf("message %d: Nats-Msg-Id %q, want the event id %q", seq, got, e.ID)
		}
		evs = append(evs, e)
	}
	adaptertest.CheckSessions(t, evs, testSource)
	want := translatedTypes(t, "plain_answer.jsonl")
	if got := types(evs); !slices.Equal(got, want) {
		t.Errorf("stream holds %v, want %v", got, want)
	}
	p, err := evs[0].Payload()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.(*events.SessionStartedData).Tools, []string{"read_file", "write_file", "list_directory", "complete_task"}; !slices.Equal(got, want) {
		t.Errorf("tools = %q, want %q (from -tools, then those seen)", got, want)
	}
	if want := "bridge: 13 lines read, 7 events emitted, 1 sessions, 1 plain answers, 2 ignored, 0 malformed; " +
		"0 calls skipped, 0 results suppressed, 0 turns whose tool_calls differ from the agent's\n"; !strings.HasSuffix(errOut.String(), want) {
		t.Errorf("stderr ends %q, want %q", errOut.String(), want)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	in := filepath.Join(fixtures, "no_replan.jsonl")
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no agent", []string{"-out", "-", "-in", in}, "-agent is required: one of skilllite, otel, claude-code, cursor, codex"},
		{"unknown agent", []string{"-agent", "nosuch", "-out", "-", "-in", in}, `-agent "nosuch" is not a known agent: one of skilllite, otel, claude-code, cursor, codex`},
		{"name not a subject token", []string{"-agent", "skilllite", "-name", "sk.lite", "-out", "-"}, `-name "sk.lite": want letters`},
		{"neither -out nor -nats", []string{"-agent", "skilllite"}, "-out FILE (- for stdout) or -nats URL"},
		{"both -out and -nats", []string{"-agent", "skilllite", "-out", "-", "-nats", "nats://127.0.0.1:1"}, "exclude each other"},
		{"source of another agent", []string{"-agent", "skilllite", "-source", "coder/x", "-out", "-"}, `first segment "coder" is not the agent name "skilllite" (-name)`},
		{"source with a space", []string{"-agent", "skilllite", "-source", "skilllite/a b", "-out", "-"}, `-source "skilllite/a b"`},
		{"user without password", []string{"-agent", "skilllite", "-nats", "nats://127.0.0.1:1", "-user", "u"}, "user and password go together"},
		{"bad prefix", []string{"-agent", "skilllite", "-nats", "nats://127.0.0.1:1", "-prefix", "evo.>"}, "not a literal subject"},
		{"stray argument", []string{"-agent", "skilllite", "-out", "-", "extra"}, "unexpected arguments"},
		{"unknown flag", []string{"-agent", "skilllite", "-out", "-", "-bogus"}, "flag provided but not defined"},
		{"negative depth limit", []string{"-agent", "skilllite", "-out", "-", "-depth-limit", "-1"}, "-depth-limit -1"},
		{"feedback report without feedback", []string{"-agent", "skilllite", "-out", "-", "-feedback-report", "x.json"}, "-feedback-report needs -feedback FILE"},
		{"feedback for otel", []string{"-agent", "otel", "-out", "-", "-feedback", "f.sqlite"}, "-feedback does not apply to -agent otel (it takes no flags of its own)"},
		{"feedback for cursor", []string{"-agent", "cursor", "-out", "-", "-feedback", "f.sqlite"}, "-feedback does not apply to -agent cursor (it takes -model, -name, -source)"},
		{"source for otel", []string{"-agent", "otel", "-out", "-", "-source", "otel/x"}, "-source does not apply to -agent otel"},
		{"follow to -out", []string{"-agent", "codex", "-in", "x", "-follow", "-out", "-"}, "-follow publishes to NATS: give -nats URL (not -out)"},
		{"follow stdin", []string{"-agent", "codex", "-follow", "-nats", "nats://127.0.0.1:1"}, "-follow reads -in, a directory or a file, not stdin"},
		{"follow zero poll", []string{"-agent", "codex", "-in", "x", "-follow", "-poll", "0s", "-nats", "nats://127.0.0.1:1"}, "-poll 0s must be positive"},
		{"state without follow", []string{"-agent", "codex", "-in", "x", "-state", "s.json", "-out", "-"}, "-state applies to -follow only"},
		{"bad depth limit", []string{"-agent", "skilllite", "-out", "-", "-depth-limit", "many"}, `invalid value "many" for -depth-limit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(t.Context(), tt.args, strings.NewReader(""), &out, &errOut)
			if !errors.Is(err, errUsage) {
				t.Fatalf("run(%q) = %v, want errUsage", tt.args, err)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("run(%q) said %q, want it to contain %q", tt.args, errOut.String(), tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("run(%q) wrote %q to stdout", tt.args, out.String())
			}
		})
	}
}

// TestMainUnknownAgent: an agent the registry does not know is a usage
// error (exit 2) that names every known agent, and nothing is written.
func TestMainUnknownAgent(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-agent", "nosuch", "-in", "x.jsonl", "-out", "-"}
	if got := Main(t.Context(), args, strings.NewReader(""), &out, &errOut); got != 2 {
		t.Fatalf("Main(%q) = %d, want 2", args, got)
	}
	for _, a := range registry.All() {
		if !strings.Contains(errOut.String(), a.Name()) {
			t.Errorf("stderr %q does not name the known agent %q", errOut.String(), a.Name())
		}
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q, want nothing", out.String())
	}
}

// TestRunName: -name sets the agent name of the events, and with it their
// default source.
func TestRunName(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-agent", "skilllite", "-name", "coder", "-in", filepath.Join(fixtures, "no_replan.jsonl"), "-out", "-"}
	if err := run(t.Context(), args, nil, &out, &errOut); err != nil {
		t.Fatalf("run(%q): %v", args, err)
	}
	evs := adaptertest.DecodeLines(t, out.Bytes())
	adaptertest.CheckSessions(t, evs, adapter.DefaultSource("coder"))
}

// TestRunOTLPWithoutEvents: OTLP that makes no event is refused with the
// reason: spans of no convention read (an HTTP server's trace), or log
// records without their spans.
func TestRunOTLPWithoutEvents(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"an HTTP trace", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"GET /health","attributes":[{"key":"http.request.method","value":{"stringValue":"GET"}}]}]}]}]}`,
			"no events: 1 spans in 1 traces, none of them an agent, workflow, model, tool or plan span"},
		{"logs alone", `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"0102030405060708090a0b0c0d0e0f10","attributes":[{"key":"event.name","value":{"stringValue":"tool_result"}},{"key":"tool_use_id","value":{"stringValue":"t1"}}]}]}]}]}`,
			"no events: 1 log records and no spans"},
	} {
		var out, errOut bytes.Buffer
		err := run(t.Context(), []string{"-agent", "otel", "-out", "-"}, strings.NewReader(tc.in), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.want) || out.Len() != 0 {
			t.Errorf("%s: %v, %d bytes out; want an error saying %q\n%s", tc.name, err, out.Len(), tc.want, errOut.String())
		}
	}
}

// TestRunRefusesUnusableInput: an input of which every record is malformed
// for the adapter (another agent's records), or an empty one, is an error,
// not an empty run.
func TestRunRefusesUnusableInput(t *testing.T) {
	cursorHooks := filepath.Join("..", "..", "..", "internal", "adapter", "cursor", "testdata", "session.jsonl")
	for _, agent := range []string{"claude-code", "otel", "skilllite"} {
		var out, errOut bytes.Buffer
		args := []string{"-agent", agent, "-in", cursorHooks, "-out", "-"}
		err := run(t.Context(), args, nil, &out, &errOut)
		want := "no events"
		if agent == "otel" {
			want = "not an OTLP export: a JSON object with members hook, time" // refused at its first record
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run(%q) = %v, want %q\n%s", args, err, want, errOut.String())
		}
	}
	for _, a := range registry.All() {
		var out, errOut bytes.Buffer
		args := []string{"-agent", a.Name(), "-out", "-"}
		err := run(t.Context(), args, strings.NewReader(""), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "holds no -agent "+a.Name()+" record") {
			t.Errorf("run(%q) on empty input = %v, want the no-record error", args, err)
		}
	}
}

func TestRunDefaultSource(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-agent", "skilllite", "-in", filepath.Join(fixtures, "no_replan.jsonl"), "-out", "-"}
	if err := run(t.Context(), args, nil, &out, &errOut); err != nil {
		t.Fatalf("run(%q): %v", args, err)
	}
	evs := adaptertest.DecodeLines(t, out.Bytes())
	want := adapter.DefaultSource("skilllite")
	adaptertest.CheckSessions(t, evs, want)
}

func TestHelpExplains(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"-h"}, nil, &out, &errOut); err != nil {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"-agent", "-in", "-out", "-nats", "-source", "-agent-version", "-model", "-tools", "-depth-limit", "-transcripts",
		"-user", "-creds", "agent_chat", "session_key", "task_plan", "update_task_plan", "aborted", "plain answer", "tee",
		"| ingest -file -", "Examples:", "-agent cursor", "afterFileEdit"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("-h output lacks %q", want)
		}
	}
}

// -transcripts: the tool calls get the transcripts' times; a directory that
// does not exist is an error before anything is read.
func TestRunTranscripts(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-agent", "skilllite", "-source", testSource, "-in", filepath.Join(fixtures, "no_replan.jsonl"),
		"-transcripts", filepath.Join(fixtures, "transcripts"), "-out", "-"}
	if err := run(t.Context(), args, nil, &out, &errOut); err != nil {
		t.Fatalf("run(%q): %v\n%s", args, err, errOut.String())
	}
	evs := adaptertest.DecodeLines(t, out.Bytes())
	if want := time.Unix(1782640804, 0).UTC(); len(evs) == 0 || !evs[0].Time.Equal(want) {
		t.Errorf("the session starts at %v, want %v (the transcript's first call)", evs[0].Time, want)
	}
	if !strings.Contains(errOut.String(), `msg="transcripts read"`) || !strings.Contains(errOut.String(), "calls=4") {
		t.Errorf("stderr %q does not report the transcripts read", errOut.String())
	}
	args[len(args)-3] = filepath.Join(fixtures, "no-such-dir")
	if err := run(t.Context(), args, nil, &out, &errOut); err == nil {
		t.Error("a missing transcripts directory is no error")
	}
}
