package codex_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/adapter/codex"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
)

// bridgeFile runs the codex adapter, as the bridge does, over one file.
func bridgeFile(t *testing.T, path string) ([]*events.Event, string) {
	t.Helper()
	a := codex.NewAdapter()
	fs := flag.NewFlagSet("bridge", flag.ContinueOnError)
	a.Flags(fs)
	if err := fs.Parse([]string{"-source", "codex/bridge/test"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	env := adapter.Env{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now}
	start, err := a.Open(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := agent.NewJSONLWriter(&buf)
	tr, err := start(w)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	if err := tr.Read(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	if err := tr.Report(&report); err != nil {
		t.Fatal(err)
	}
	return adaptertest.DecodeLines(t, buf.Bytes()), report.String()
}

// TestHookLog: Codex's own hook inputs (the real CLI's, in both tool
// modes) give the rollout's requests, under the same ids, with the same
// plans, replans, calls and completions; only the failed command is not
// seen, as Codex's hooks carry no exit code (the report says so).
func TestHookLog(t *testing.T) {
	for _, dir := range []string{"codex", "codex-code-mode"} {
		t.Run(dir, func(t *testing.T) {
			fromHooks, report := bridgeFile(t, "../../../testdata/realcli/"+dir+"/hooks.jsonl")
			fromRollout, _ := bridgeFile(t, "../../../testdata/realcli/"+dir+"/rollout-1.jsonl")
			summary := func(evs []*events.Event) (map[string]int, []string, int) {
				types := map[string]int{}
				subjects := map[string]bool{}
				failed := 0
				for _, e := range evs {
					types[string(e.Type)]++
					subjects[e.Subject] = true
					if e.Type == events.ToolCalled {
						p, err := e.Payload()
						if err != nil {
							t.Fatal(err)
						}
						if !p.(*events.ToolCalledData).OK {
							failed++
						}
					}
				}
				return types, slices.Sorted(maps.Keys(subjects)), failed
			}
			ht, hs, hf := summary(fromHooks)
			rt, rs, rf := summary(fromRollout)
			if !maps.Equal(ht, rt) || !slices.Equal(hs, rs) {
				t.Errorf("hooks gave %v in %q, the rollout %v in %q", ht, hs, rt, rs)
			}
			if len(hs) != 2 || ht["agent.plan.created"] != 2 || ht["agent.plan.updated"] != 1 || ht["agent.task.completed"] != 5 {
				t.Errorf("hooks gave %v in %d requests; want 2 requests, 2 plans, 1 replan, 5 completions (testdata/realcli/README.md)", ht, len(hs))
			}
			if hf != 0 || rf != 1 {
				t.Errorf("failed calls: %d from the hooks, %d from the rollout; want 0 and 1", hf, rf)
			}
			if !bytes.Contains([]byte(report), []byte("Codex's hooks carry no exit code")) {
				t.Errorf("report lacks the note on failures:\n%s", report)
			}
		})
	}
}
