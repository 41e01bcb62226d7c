package claudecode_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/adapter/claudecode"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// bridgeInputs runs the adapter over ins, one Read each, as the bridge
// does, and returns the events as JSON lines and the report.
func bridgeInputs(tb testing.TB, ins ...[]byte) ([]byte, string) {
	tb.Helper()
	a := claudecode.NewAdapter()
	fs := flag.NewFlagSet("bridge", flag.ContinueOnError)
	a.Flags(fs)
	if err := fs.Parse([]string{"-source", source}); err != nil {
		tb.Fatal(err)
	}
	if err := a.Validate(); err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	start, err := a.Open(ctx, adapter.Env{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return clock }})
	if err != nil {
		tb.Fatal(err)
	}
	var out bytes.Buffer
	w := agent.NewJSONLWriter(&out)
	tr, err := start(w)
	if err != nil {
		tb.Fatal(err)
	}
	for _, in := range ins {
		if err := tr.Read(ctx, bytes.NewReader(in)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := errors.Join(tr.Close(ctx), w.Flush()); err != nil {
		tb.Fatal(err)
	}
	var report strings.Builder
	if err := tr.Report(&report); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes(), report.String()
}

// TestAdapterTellsInputsApart: a hook log, the same hook log as a JSON
// array, and a transcript, each read as what it is, whichever comes
// first; the report has a summary line for each kind read.
func TestAdapterTellsInputsApart(t *testing.T) {
	hookLog, err := os.ReadFile("../../../testdata/realcli/claude-code/hooks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	transcript, err := os.ReadFile(realTranscript)
	if err != nil {
		t.Fatal(err)
	}
	array := []byte("[\n" + strings.Join(strings.Split(strings.TrimSpace(string(hookLog)), "\n"), ",\n") + "\n]\n")
	hooksOnly, hooksReport := bridgeInputs(t, hookLog)
	arrayOnly, _ := bridgeInputs(t, array)
	txOnly, txReport := bridgeInputs(t, transcript)
	if !bytes.Equal(hooksOnly, arrayOnly) {
		t.Errorf("the hook log as an array gives other events")
	}
	if len(hooksOnly) == 0 || len(txOnly) == 0 {
		t.Fatalf("hooks gave %d bytes of events, the transcript %d", len(hooksOnly), len(txOnly))
	}
	both, report := bridgeInputs(t, transcript, hookLog)
	if want := append(append([]byte(nil), txOnly...), hooksOnly...); !bytes.Equal(both, want) {
		t.Errorf("a transcript then a hook log: not the events of each")
	}
	for _, want := range []string{"hook records read", "118 transcript lines read (1 files)", "2 requests (2 ended, 0 open)", "tokens: input 296765, output 496"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(hooksReport, "transcript") || strings.Contains(txReport, "hook records") {
		t.Errorf("a report names what was not read:\n%s\n%s", hooksReport, txReport)
	}
}

// TestAdapterFiles lists a tree laid out as ~/.claude/projects: every
// *.jsonl below it, the sub-agents' too, in path order.
func TestAdapterFiles(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{
		"-home-u-app/b2.jsonl", "-home-u-app/a1.jsonl", "-home-u-app/a1/subagents/agent-x.jsonl",
		"-home-u-lib/c3.jsonl", "-home-u-lib/notes.txt",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := claudecode.NewAdapter().Files(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.ToSlash(strings.TrimPrefix(got[i], root+string(filepath.Separator)))
	}
	want := []string{"-home-u-app/a1.jsonl", "-home-u-app/a1/subagents/agent-x.jsonl", "-home-u-app/b2.jsonl", "-home-u-lib/c3.jsonl"}
	if !slices.Equal(got, want) {
		t.Errorf("Files = %q, want %q", got, want)
	}
}

// FuzzTranscript reads lines of transcripts (each seed line alone, and
// the files whole): whatever the input, a line is translated or skipped
// as malformed, never an error, and the same input twice reads alike.
func FuzzTranscript(f *testing.F) {
	for _, name := range []string{realTranscript, "testdata/transcript.jsonl", "testdata/subagent.jsonl"} {
		in, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(in)
		for line := range bytes.Lines(in) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx := context.Background()
		var runs [2][]byte
		for i := range runs {
			var out bytes.Buffer
			w := agent.NewJSONLWriter(&out)
			tr, err := claudecode.NewTranscript(claudecode.Config{Agent: "claude-code", Source: source, Model: "m", Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig()}, w)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Read(ctx, bytes.NewReader(b), func(*claudecode.LineError) {}); err != nil && !strings.Contains(err.Error(), "token too long") {
				t.Fatalf("Read: %v", err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			runs[i] = out.Bytes()
		}
		if !bytes.Equal(runs[0], runs[1]) {
			t.Fatalf("the same input read twice gives other events")
		}
	})
}
