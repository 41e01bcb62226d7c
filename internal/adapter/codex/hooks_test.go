package codex_test

import (
	"bytes"
	"context"
	"encoding/json"
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
			// Only the rollout has the model responses (its token_counts),
			// whose tokens sum to the thread's last total_token_usage.
			if rt["agent.model.called"] == 0 {
				t.Errorf("the rollout gave no model calls")
			}
			delete(rt, "agent.model.called")
			if got, want := modelTokens(t, fromRollout), lastTotal(t, "../../../testdata/realcli/"+dir+"/rollout-1.jsonl"); want == 0 || got != want {
				t.Errorf("model calls' tokens sum to %d, want the last total_tokens %d", got, want)
			}
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

// modelTokens sums the input and output tokens of evs' model calls.
func modelTokens(tb testing.TB, evs []*events.Event) int64 {
	var n int64
	for _, e := range evs {
		if e.Type != events.ModelCalled {
			continue
		}
		p, err := e.Payload()
		if err != nil {
			tb.Fatal(err)
		}
		d := p.(*events.ModelCalledData)
		if d.InputTokens == nil || d.OutputTokens == nil {
			tb.Fatalf("model call %s without its tokens", e.ID)
		}
		n += *d.InputTokens + *d.OutputTokens
	}
	return n
}

// lastTotal is the total_tokens of the rollout's last token_count.
func lastTotal(tb testing.TB, path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var total int64
	for line := range bytes.Lines(b) {
		var l struct {
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total struct {
						Total int64 `json:"total_tokens"`
					} `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) == nil && l.Payload.Type == "token_count" && l.Payload.Info != nil {
			total = l.Payload.Info.Total.Total
		}
	}
	return total
}
