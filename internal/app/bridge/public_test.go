package bridge

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
)

// publicCount is the hand count of a sample from a public repository
// (testdata/public/README.md), read off the file, not off our output.
// Sessions are the agent's own ids; a session is open when the file holds
// neither its Stop nor its SessionEnd.
type publicCount struct {
	Sessions, Open, Prompts      int64
	Plans, Replans               int64
	RealCalls, FailedCalls, Done int64
	ControlCalls                 int64
}

// TestPublicSamples bridges each sample of testdata/public into the real
// pipeline (embedded NATS, ingester, DuckDB): the store holds exactly the
// hand count, and bridging the same file a second time stores nothing new
// and dead-letters nothing (the samples' hook records carry no time: they
// are stamped with the file's modification time, the same on both runs).
func TestPublicSamples(t *testing.T) {
	for _, tc := range []struct {
		name, agent, file string
		want              publicCount
	}{
		{
			// ranaroussi/quantstats ae96895, logs/post_tool_use.json: one
			// session, 5 TodoWrite (one plan, four tasks completed one by
			// one), 9 real calls; no prompt, Stop or SessionEnd in the file.
			name: "quantstats post_tool_use", agent: "claude-code",
			file: "claude-code/quantstats-post_tool_use.json",
			want: publicCount{Sessions: 1, Open: 1, Plans: 1, RealCalls: 9, Done: 4, ControlCalls: 5},
		},
		{
			// The same session's logs/pre_tool_use.json: a PreToolUse is
			// only the time a call began, never a plan or a call.
			name: "quantstats pre_tool_use", agent: "claude-code",
			file: "claude-code/quantstats-pre_tool_use.json",
			want: publicCount{Sessions: 1, Open: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join("..", "..", "..", "testdata", "public", tc.file)
			p := adaptertest.StartPipeline(t)
			bridgeTwiceChecked(t, p, tc.agent, file, func() { checkPublicCount(t, p, tc.want) })
			// JetStream's duplicate window hides a second run's events
			// from the store: the events themselves must be the same.
			var outs [2][]byte
			for i := range outs {
				out := filepath.Join(t.TempDir(), "events.jsonl")
				var errOut bytes.Buffer
				if err := run(t.Context(), []string{"-agent", tc.agent, "-in", file, "-out", out}, nil, &errOut, &errOut); err != nil {
					t.Fatalf("run -out: %v\n%s", err, errOut.String())
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				outs[i] = b
			}
			if !bytes.Equal(outs[0], outs[1]) || len(outs[0]) == 0 {
				t.Errorf("bridging the same file twice gave different events:\n%s\n%s", outs[0], outs[1])
			}
		})
	}
}

func checkPublicCount(tb testing.TB, p *adaptertest.Pipeline, want publicCount) {
	tb.Helper()
	for _, c := range []struct {
		what  string
		query string
		want  int64
	}{
		{"sessions (agent's own ids)", "SELECT count(DISTINCT split_part(session, '/', 1)) FROM session_starts", want.Sessions},
		{"sessions left open", "SELECT count(*) FROM session_starts s WHERE NOT EXISTS (SELECT 1 FROM session_ends e WHERE e.session = s.session)", want.Open},
		{"requests (prompts)", "SELECT count(*) FROM session_starts WHERE goal <> ''", want.Prompts},
		{"plans", "SELECT count(*) FROM events WHERE type = 'agent.plan.created'", want.Plans},
		{"replans", "SELECT count(*) FROM replans WHERE valid", want.Replans},
		{"invalid replans", "SELECT count(*) FROM replans WHERE NOT valid", 0},
		{"real tool calls", "SELECT count(*) FROM tool_calls WHERE NOT control", want.RealCalls},
		{"failed real tool calls", "SELECT count(*) FROM tool_calls WHERE NOT control AND NOT ok", want.FailedCalls},
		{"task completions", "SELECT count(*) FROM task_completions", want.Done},
		{"control calls (the plan tool's)", "SELECT count(*) FROM tool_calls WHERE control", want.ControlCalls},
	} {
		if got := p.Count(tb, c.query); got != c.want {
			tb.Errorf("%s = %d, want %d (the hand count of testdata/public/README.md)", c.what, got, c.want)
		}
	}
}
