package bridge

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/plandialect"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/oteltest"
	"github.com/evosignal/evosignal/internal/workshop/plangen"
)

var genStart = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func writeFile(tb testing.TB, name string, b []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// bridgeTwice runs the bridge on a file into the pipeline, checks the
// analyzers against the truth, runs it again on the same file and checks
// that nothing more was stored. It returns the stderr of the first run.
func bridgeTwice(t *testing.T, agentFlag, file string, truth adaptertest.Truth) string {
	t.Helper()
	return bridgeTwiceInto(t, adaptertest.StartPipeline(t), agentFlag, file, truth)
}

// bridgeTwiceInto is bridgeTwice into the pipeline p.
func bridgeTwiceInto(t *testing.T, p *adaptertest.Pipeline, agentFlag, file string, truth adaptertest.Truth) string {
	t.Helper()
	return bridgeTwiceChecked(t, p, agentFlag, file, func() { p.CheckTruth(t, truth) })
}

// bridgeTwiceChecked bridges file into p twice, running check after each
// run: the second stores nothing new and dead-letters nothing. It returns
// the first run's stderr.
func bridgeTwiceChecked(t *testing.T, p *adaptertest.Pipeline, agentFlag, file string, check func()) string {
	t.Helper()
	args := []string{"-agent", agentFlag, "-in", file, "-nats", p.Srv.ClientURL()}
	var first string
	var stored int64
	for i := range 2 {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), args, nil, &out, &errOut); err != nil {
			t.Fatalf("run %d (%q): %v\n%s", i+1, args, err, errOut.String())
		}
		p.Settle(t)
		check()
		n := p.Count(t, "SELECT count(*) FROM events")
		if i == 0 {
			first, stored = errOut.String(), n
		} else if n != stored {
			t.Errorf("bridging the same file again: %d events stored, want %d", n, stored)
		}
	}
	noDeadLetters(t, p)
	return first
}

// TestBridgeOTelFile bridges generated sessions written as the collector's
// file exporter writes them (one ExportTraceServiceRequest JSON per line).
func TestBridgeOTelFile(t *testing.T) {
	ss := adaptertest.Generate(31, 60, []string{"TodoWrite", "update_plan", "write_todos"}, genStart, true)
	var b bytes.Buffer
	for _, td := range oteltest.Exports(4, ss) {
		line, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteString("{not otlp}\n")
	truth := adaptertest.TruthOf(ss)
	stderr := bridgeTwice(t, "otel", writeFile(t, "traces.jsonl", b.Bytes()), truth)
	for _, want := range []string{"malformed line skipped", "60 sessions", "plan-tool calls carried no arguments"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestBridgeClaudeCodeHooks bridges generated Claude Code sessions written
// as hook inputs, with and without the hook command's time envelope.
func TestBridgeClaudeCodeHooks(t *testing.T) {
	ss := adaptertest.Generate(41, 60, []string{"TodoWrite"}, genStart, true)
	truth := adaptertest.TruthOf(ss)
	hooks := append(adaptertest.ClaudeCodeHooks(ss), []byte("{\"hook_event_name\":\"Stop\"}\n")...)
	stderr := bridgeTwice(t, "claude-code", writeFile(t, "hooks.jsonl", hooks), truth)
	for _, want := range []string{"malformed hook record skipped", "60 sessions (60 ended, 0 open)", "plan-tool calls carried no arguments"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestBridgeClaudeCodePlanFiles bridges generated Claude Code sessions that
// keep their plan in a Markdown file (Write, Edit and MultiEdit on
// task_plan.md, plangen) as hook inputs: the analyzers find exactly the
// generator's replans and completions, the plan-file calls are not real tool
// calls, and the edits of unknown prior content are a data-quality note.
func TestBridgeClaudeCodePlanFiles(t *testing.T) {
	ss := adaptertest.PlanFileSessions(51, 60, plangen.ClaudeCode, genStart)
	truth := adaptertest.TruthOf(ss)
	if truth.Replanned == 0 || truth.Replanned == truth.Sessions || truth.Completions == 0 || truth.UnknownPrior == 0 {
		t.Fatalf("generated sessions exercise too little: %+v", truth)
	}
	stderr := bridgeTwice(t, "claude-code", writeFile(t, "hooks.jsonl", adaptertest.ClaudeCodeHooks(ss)), truth)
	want := fmt.Sprintf("%d plan-file operations were not read as plans: %s", truth.UnknownPrior, plandialect.QualityUnknownPrior)
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// TestBridgeCursorFixture bridges the published Cursor session
// (internal/adapter/cursor/testdata/session.jsonl) into the pipeline: one
// conversation, one replan, one completion, the plan-file edits and read not
// among the real tool calls.
func TestBridgeCursorFixture(t *testing.T) {
	file := filepath.Join("..", "..", "..", "internal", "adapter", "cursor", "testdata", "session.jsonl")
	stderr := bridgeTwice(t, "cursor", file, adaptertest.Truth{Sessions: 1, Replanned: 1, Replans: 1, RealCalls: 3, Completions: 1})
	if want := "1 conversations (1 ended, 0 open), 2 ignored, 0 malformed"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// codexTruth is the script's truth of both Codex captures
// (testdata/realcli/README.md): two requests, two plans, one replan in
// one of them, six real calls, one failed, five completions.
var codexTruth = adaptertest.Truth{Sessions: 2, Replanned: 1, Replans: 1, RealCalls: 6, FailedCalls: 1, Completions: 5}

// TestBridgeCodexRollouts bridges the rollouts the real Codex 0.171.0 wrote
// for the scripted runs (function tools, and code mode) into the pipeline,
// twice each: the analyzers find the script's truth, and the second run
// stores nothing and dead-letters nothing.
func TestBridgeCodexRollouts(t *testing.T) {
	for _, dir := range []string{"codex", "codex-code-mode"} {
		t.Run(dir, func(t *testing.T) {
			file := filepath.Join("..", "..", "..", "testdata", "realcli", dir, "rollout-1.jsonl")
			p := adaptertest.StartPipeline(t)
			stderr := bridgeTwiceInto(t, p, "codex", file, codexTruth)
			noDeadLetters(t, p)
			if want := "2 requests (2 ended, 0 open), "; !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		})
	}
}

func noDeadLetters(tb testing.TB, p *adaptertest.Pipeline) {
	tb.Helper()
	if n := p.Count(tb, "SELECT count(*) FROM dead_letters"); n != 0 {
		tb.Errorf("%d events dead-lettered, want none", n)
	}
}

// TestBridgeCodexDirectory bridges a directory laid out as
// ~/.codex/sessions (YYYY/MM/DD/rollout-*.jsonl, and a file that is not a
// rollout) in one run: both captures, read in name order, and nothing
// stored the second time.
func TestBridgeCodexDirectory(t *testing.T) {
	root := t.TempDir()
	for i, dir := range []string{"codex", "codex-code-mode"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "realcli", dir, "rollout-1.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		day := filepath.Join(root, "2026", "12", fmt.Sprintf("%02d", i+1))
		if err := os.MkdirAll(day, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(day, "rollout-"+dir+".jsonl"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "session_index.jsonl"), []byte("not a rollout\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	truth := codexTruth
	truth.Sessions, truth.Replanned, truth.Replans = 4, 2, 2
	truth.RealCalls, truth.FailedCalls, truth.Completions = 12, 2, 10
	p := adaptertest.StartPipeline(t)
	stderr := bridgeTwiceInto(t, p, "codex", root, truth)
	noDeadLetters(t, p)
	if want := "(2 files, 2 threads), "; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// TestBridgeClaudeCodeTranscripts backfills a directory laid out as
// ~/.claude/projects in one run: the transcript the real Claude Code
// 2.1.332 wrote for the scripted runs (testdata/realcli/claude-code), a
// sub-agent's file beside it (<session>/subagents/) and a file that is no
// transcript. The analyzers find the script's truth; bridged again, nothing
// is stored and nothing dead-lettered; each file's progress is logged and
// the summary counts the sidechain apart.
func TestBridgeClaudeCodeTranscripts(t *testing.T) {
	transcript, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "realcli", "claude-code", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := os.ReadFile(filepath.Join("..", "..", "..", "internal", "adapter", "claudecode", "testdata", "subagent.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	project := filepath.Join(root, "-tmp-workspace")
	session := "4299a734-e256-4bb4-bd3b-fa91b82a26c3"
	for name, b := range map[string][]byte{
		session + ".jsonl": transcript,
		filepath.Join(session, "subagents", "agent-a1.jsonl"): sub,
		"notes.md": []byte("not a transcript\n"),
	} {
		p := filepath.Join(project, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	truth := adaptertest.Truth{Sessions: 2, Replanned: 1, Replans: 1, RealCalls: 6, FailedCalls: 1, Completions: 5}
	p := adaptertest.StartPipeline(t)
	stderr := bridgeTwiceInto(t, p, "claude-code", root, truth)
	noDeadLetters(t, p)
	for _, want := range []string{
		"transcript read", "agent-a1.jsonl", "121 transcript lines read (2 files)", "2 requests (2 ended, 0 open)",
		"sidechains: 3 lines, 1 calls (0 failed)", "tokens: input 296765, output 496",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestBridgeDirectoryRefused: an adapter that reads one file refuses a
// directory before it writes anything.
func TestBridgeDirectoryRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "events.jsonl")
	var errOut bytes.Buffer
	err := run(t.Context(), []string{"-agent", "cursor", "-in", t.TempDir(), "-out", out}, nil, io.Discard, &errOut)
	if err == nil || !strings.Contains(err.Error(), "is a directory; -agent cursor reads one file") {
		t.Fatalf("run = %v, want a directory refused", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("-out was created: %v", err)
	}
}

// TestBridgeCodexRefusesOtherInput: another agent's file given to -agent
// codex (it used to be read as SkillLite's) is an error that says so.
func TestBridgeCodexRefusesOtherInput(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-agent", "codex", "-in", filepath.Join(fixtures, "no_replan.jsonl"), "-out", "-"}
	err := run(t.Context(), args, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "is this -agent codex input?") {
		t.Fatalf("run(%q) = %v, want the input refused", args, err)
	}
	if out.Len() != 0 {
		t.Errorf("events written: %s", out.String())
	}
}
