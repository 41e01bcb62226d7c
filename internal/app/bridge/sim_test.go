package bridge

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/rpcsim"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// bridgeOut runs the command over input and returns the events it wrote.
func bridgeOut(tb testing.TB, input []byte) []byte {
	tb.Helper()
	var out, errOut bytes.Buffer
	args := []string{"-agent", "skilllite", "-source", testSource, "-out", "-"}
	if err := run(context.Background(), args, bytes.NewReader(input), &out, &errOut); err != nil {
		tb.Fatalf("bridge: %v\n%s", err, errOut.String())
	}
	return out.Bytes()
}

// TestSimulatedStreamFigures: a long seeded stream in SkillLite's real
// format goes through bridge | ingest -file -, and every figure of analyze
// replans and analyze hints equals what the simulated agent did. Bridged
// twice, it adds nothing the second time.
func TestSimulatedStreamFigures(t *testing.T) {
	ctx := t.Context()
	input, truth := rpcsim.Generate(rpcsim.Config{Seed: 20260628, Turns: 600})
	t.Logf("stream: %d bytes; truth: %+v", len(input), truth)

	d := testdb.New(t, testdb.Options{Taxonomy: taxonomy.Default()})
	first := bridgeOut(t, input)
	res := d.LoadResult(t, testdb.Input{Name: "-", Data: first})
	if res.DeadLetters != 0 || res.Duplicates != 0 || res.Accepted == 0 {
		t.Fatalf("ingest: %+v", res)
	}
	// Bridged again: the content-derived ids store nothing twice. SkillLite's
	// stdout has no times, so the events the bridge stamped with the clock
	// differ in time (and durations) the second time: the ingester keeps the
	// first and dead-letters those as conflicting duplicates; the others are
	// plain duplicates (docs/bridge-skilllite.md, "Bridging twice").
	again := d.LoadResult(t, testdb.Input{Name: "-", Data: bridgeOut(t, input)})
	if again.Accepted != 0 || again.Duplicates+again.DeadLetters != res.Accepted {
		t.Fatalf("the same stream bridged again: %+v; want none of %d events stored again", again, res.Accepted)
	}
	var others int
	if err := d.Store().DB().QueryRowContext(ctx, "SELECT count(*) FROM dead_letters WHERE reason_code <> 'conflicting_duplicate'").Scan(&others); err != nil || others != 0 {
		t.Fatalf("dead letters other than conflicting duplicates after bridging twice: %d, %v", others, err)
	}

	src := metrics.DB{DB: d.Store().DB()}
	rp, err := metrics.Replans(ctx, src, metrics.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	r := rp.Rows[0]
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"sessions", r.Sessions, truth.Sessions},
		{"open_sessions", r.OpenSessions, 0},
		{"replanned", r.Replanned, truth.Replanned},
		{"valid_replans", r.ValidReplans, truth.ValidReplans},
		{"invalid_replans", r.InvalidReplans, truth.InvalidReplans},
		{"successes", r.Successes, truth.Successes},
		{"first_try_successes", r.FirstTrySuccesses, truth.FirstTrySuccesses},
		{"over_cap_sessions", r.OverCapSessions, truth.OverCapSessions},
		{"trigger model", r.Triggers.Model, truth.Triggers["model"]},
		{"trigger tool_failures", r.Triggers.ToolFailures, truth.Triggers["tool_failures"]},
		{"trigger depth_limit", r.Triggers.DepthLimit, truth.Triggers["depth_limit"]},
		{"trigger no_progress", r.Triggers.NoProgress, 0},
		{"trigger user", r.Triggers.User, 0},
		{"stripped_hints", r.StrippedHints, truth.StrippedHints},
		{"reported_replans_mismatch", r.ReportedReplansMismatch, 0},
	} {
		if c.got != c.want {
			t.Errorf("analyze replans %s = %d, want %d", c.name, c.got, c.want)
		}
	}
	for i, b := range r.SuccessByReplans {
		if b.Sessions != truth.BucketSessions[i] || b.Successes != truth.BucketSuccesses[i] {
			t.Errorf("analyze replans bucket %s: %d sessions, %d successes; want %d, %d",
				b.Replans, b.Sessions, b.Successes, truth.BucketSessions[i], truth.BucketSuccesses[i])
		}
	}

	hints, err := metrics.Hints(ctx, src, metrics.Filter{}, taxonomy.Default(), metrics.DefaultHintsConfig())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, h := range hints {
		name := ""
		if h.Hint != nil {
			name = *h.Hint
		}
		seen[name] = true
		if h.Calls != truth.Calls[name] || h.Failed != truth.Failed[name] || h.Stripped != truth.Stripped[name] {
			t.Errorf("analyze hints %q: calls %d, failed %d, stripped %d; want %d, %d, %d",
				name, h.Calls, h.Failed, h.Stripped, truth.Calls[name], truth.Failed[name], truth.Stripped[name])
		}
	}
	for name := range truth.Calls {
		if !seen[name] {
			t.Errorf("analyze hints has no row for %q (%d calls)", name, truth.Calls[name])
		}
	}
	for name := range truth.Stripped {
		if !seen[name] {
			t.Errorf("analyze hints has no row for stripped %q", name)
		}
	}
	var stripped, depth int64
	for _, typ := range types(adaptertest.DecodeLines(t, first)) {
		switch typ {
		case events.HintStripped:
			stripped++
		case events.DepthLimitReached:
			depth++
		}
	}
	if stripped != truth.StrippedHints || depth != truth.DepthLimits {
		t.Errorf("%d agent.hint.stripped and %d agent.depth_limit.reached events, want %d and %d",
			stripped, depth, truth.StrippedHints, truth.DepthLimits)
	}
	if truth.Suppressed == 0 || truth.Skipped == 0 || truth.Refused == 0 || truth.InvalidReplans == 0 ||
		truth.OverCapSessions == 0 || truth.StrippedHints == 0 || truth.DepthLimits == 0 || truth.PlainAnswers == 0 {
		t.Errorf("the stream lacks a behaviour it is meant to show: %+v", truth)
	}
}

// TestPlanFileNotes: bridging SkillLite turns that keep their plan in a
// Markdown file prints the data-quality notes of the plan files (edits of
// unknown prior content, plan-file calls superseded by the task list)
// after the summary line, as the hook adapters do.
func TestPlanFileNotes(t *testing.T) {
	input, turns := rpcsim.PlanFiles(20261201, 30)
	var unknown, superseded int64
	for _, tr := range turns {
		unknown += tr.Unknown
		superseded += tr.Superseded
	}
	if unknown == 0 || superseded == 0 {
		t.Fatalf("the seeded turns have %d unknown-prior edits and %d superseded calls; want some of each", unknown, superseded)
	}
	var out, errOut bytes.Buffer
	args := []string{"-agent", "skilllite", "-source", testSource, "-out", "-"}
	if err := run(context.Background(), args, bytes.NewReader(input), &out, &errOut); err != nil {
		t.Fatalf("bridge: %v\n%s", err, errOut.String())
	}
	var notes int
	for _, l := range strings.Split(errOut.String(), "\n") {
		if strings.HasPrefix(l, "bridge: data quality: ") {
			notes++
		}
	}
	if notes < 2 {
		t.Fatalf("stderr has %d data-quality lines, want one for the unknown-prior edits and one for the superseded calls:\n%s", notes, errOut.String())
	}
	for _, n := range []int64{unknown, superseded} {
		if !strings.Contains(errOut.String(), fmt.Sprint(n)) {
			t.Errorf("stderr does not give the count %d:\n%s", n, errOut.String())
		}
	}
}
