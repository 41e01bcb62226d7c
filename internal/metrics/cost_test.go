package metrics

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/workshop/sim"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// costFleet simulates a fleet with planted costs (tokens drawn per model
// call, some cached), loops (retries of a failing tool), churn (replans
// with no tool call between), the soft cap and depth limits, and loads it:
// the database and the simulator's truth.
func costFleet(tb testing.TB) (Source, sim.Summary) {
	tb.Helper()
	sc := sim.Default()
	sc.Model.RetriesBeforeReplan = 1
	sc.Model.Replan = 0.8
	sc.Model.Churn = 0.3
	sc.Model.CachedShare = 0.4
	sc.Model.MaxAttempts = 8
	sc.Model.TaskToolBudget = 4 // depth limits
	sc.Model.InputTokens = sim.Range{100, 9000}
	sc.Model.OutputTokens = sim.Range{1, 700}
	var sum sim.Summary
	d := testdb.New(tb, testdb.Options{})
	d.Load(tb, testdb.Generate(tb, "cost", func(ctx context.Context, sink agent.Sink) error {
		var err error
		sum, err = sim.Run(ctx, sim.Config{Scenario: sc, Seed: 11, Sessions: 300, Concurrency: 2, Ordered: true}, sink)
		return err
	}))
	return DB{DB: d.Store().DB()}, sum
}

// TestCostAndStuckEqualTruth: on a simulated fleet every figure of analyze
// cost and analyze stuck equals what the simulator counted as it ran.
func TestCostAndStuckEqualTruth(t *testing.T) {
	src, sum := costFleet(t)
	ctx := t.Context()
	for _, state := range []string{"loop", "churn", "soft_cap", "depth_limit", "pending_at_end"} {
		if sum.Stuck[state] == nil || sum.Stuck[state].Occurrences == 0 {
			t.Errorf("the fleet has no %s: the test plants nothing to find", state)
		}
	}

	t.Run("outcomes", func(t *testing.T) {
		rows, err := CostByOutcome(ctx, src, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]sim.CostTruth{}
		for _, r := range rows {
			got[r.OutcomeClass] = sim.CostTruth{Sessions: r.Sessions, ModelCalls: r.ModelCalls,
				InputTokens: orZero(r.InputTokens), OutputTokens: orZero(r.OutputTokens), CachedInputTokens: orZero(r.CachedTokens),
				RealCalls: r.RealToolCalls, DurationMS: r.DurationMS}
			if r.Tokens == nil || *r.Tokens != orZero(r.InputTokens)+orZero(r.OutputTokens) || r.TokensSessions != r.Sessions {
				t.Errorf("%s: tokens %v over %d sessions, want input + output over all %d", r.OutcomeClass, r.Tokens, r.TokensSessions, r.Sessions)
			}
			if r.ModelCallsMean == nil || *r.ModelCallsMean != float64(r.ModelCalls)/float64(r.Sessions) {
				t.Errorf("%s: model calls mean %v, want %d / %d", r.OutcomeClass, r.ModelCallsMean, r.ModelCalls, r.Sessions)
			}
			if r.Sessions > 1 && (r.TokensMeanCI == nil || r.TokensMeanCI.Lo > *r.TokensMean || r.TokensMeanCI.Hi < *r.TokensMean) {
				t.Errorf("%s: tokens mean %v, interval %+v", r.OutcomeClass, r.TokensMean, r.TokensMeanCI)
			}
		}
		want := map[string]sim.CostTruth{}
		for k, v := range sum.Cost {
			w := *v
			w.FailedCalls = 0 // not a figure of this view
			want[k] = w
		}
		compare(t, got, want)
	})

	t.Run("segments", func(t *testing.T) {
		rows, err := CostBySegment(ctx, src, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]sim.CostTruth{}
		for _, r := range rows {
			got[r.Segment] = sim.CostTruth{Sessions: r.Sessions, Segments: r.Segments, ModelCalls: r.ModelCalls,
				InputTokens: orZero(r.InputTokens), OutputTokens: orZero(r.OutputTokens), CachedInputTokens: orZero(r.CachedInputTokens),
				RealCalls: r.RealToolCalls, FailedCalls: r.FailedToolCalls, DurationMS: r.DurationMS}
		}
		want := map[string]sim.CostTruth{}
		for k, v := range sum.Segments {
			want[k] = *v
		}
		compare(t, got, want)
	})

	t.Run("after-failure", func(t *testing.T) {
		rows, err := CostAfterFailure(ctx, src, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]sim.AfterFailureTruth{}
		for _, r := range rows {
			got[r.Hint+" "+r.NextStep] = sim.AfterFailureTruth{Failures: r.Failures, Recovered: r.Recovered,
				ModelCalls: r.ModelCalls, Tokens: orZero(r.Tokens), RealCalls: r.RealToolCalls, DurationMS: r.DurationMS}
		}
		want := map[string]sim.AfterFailureTruth{}
		steps := map[string]bool{}
		for k, v := range sum.AfterFailure {
			want[k] = *v
			_, step, _ := strings.Cut(k, " ")
			steps[step] = true
		}
		if !steps["replan"] || !steps["retry"] || !steps["switch"] {
			t.Errorf("next steps of the fleet %v: want replan, retry and switch", steps)
		}
		compare(t, got, want)
	})

	t.Run("stuck", func(t *testing.T) {
		rows, err := Stuck(ctx, src, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(StuckStates) {
			t.Fatalf("%d rows, want one per state (%d)", len(rows), len(StuckStates))
		}
		got := map[string]sim.StuckTruth{}
		for i, r := range rows {
			if r.State != StuckStates[i] || r.Sessions != sum.Sessions {
				t.Errorf("row %d: state %s over %d sessions, want %s over %d", i, r.State, r.Sessions, StuckStates[i], sum.Sessions)
			}
			if r.StuckSessions > 0 {
				got[r.State] = sim.StuckTruth{Sessions: r.StuckSessions, Occurrences: r.Occurrences, Recovered: r.Recovered}
			}
		}
		want := map[string]sim.StuckTruth{}
		for k, v := range sum.Stuck {
			want[k] = *v
		}
		compare(t, got, want)

		ex, err := StuckExamples(ctx, src, Filter{}, 2)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, e := range ex {
			per[e.State]++
		}
		for _, st := range StuckStates {
			if per[st] != 2 {
				t.Errorf("%d examples of %s, want 2", per[st], st)
			}
		}
	})

	t.Run("triggers", func(t *testing.T) {
		rows, err := ReplanTriggers(ctx, src, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]sim.TriggerTruth{}
		for _, r := range rows {
			got[r.Trigger] = sim.TriggerTruth{Replans: r.Replans, Sessions: r.Sessions, Successes: r.Successes}
		}
		want := map[string]sim.TriggerTruth{}
		for k, v := range sum.Triggers {
			want[k] = *v
		}
		compare(t, got, want)
	})
}

// compare reports every key whose value differs between got and want.
func compare[T comparable](t *testing.T, got, want map[string]T) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s:\n got %s\nwant %+v", k, show(g, ok), w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: got %+v, not in the truth", k, g)
		}
	}
}

func show(v any, ok bool) string {
	if !ok {
		return "no row"
	}
	return fmt.Sprintf("%+v", v)
}

// TestMeanFromSums: the mean and its interval from a sum and a sum of
// squares equal those of the observations themselves (1, 2, 3, 4: mean
// 2.5, s = 1.2909944), also for sums past int64.
func TestMeanFromSums(t *testing.T) {
	huge, _ := new(big.Int).SetString("100000000000000000000000", 10) // 1e23
	tb := &Table{Columns: []string{"x_sum", "x_sq", "y_sum", "y_sq"}, Rows: [][]any{{big.NewInt(10), int64(30), huge, new(big.Int).Mul(huge, big.NewInt(1e11))}}}
	r := &row{t: tb, cells: tb.Rows[0]}
	m, ci := r.mean("x", 4)
	half := 3.182446305 * 1.2909944487358056 / 2
	if m == nil || *m != 2.5 || ci == nil || math.Abs(ci.Lo-(2.5-half)) > 1e-9 || math.Abs(ci.Hi-(2.5+half)) > 1e-9 {
		t.Errorf("mean of 1..4 = %v %+v, want 2.5 ± %v", m, ci, half)
	}
	// 1e12 observations of 1e11 each: mean 1e11, no spread.
	m, ci = r.mean("y", 1e12)
	if m == nil || *m != 1e11 || ci == nil || ci.Lo != 1e11 || ci.Hi != 1e11 {
		t.Errorf("mean of 1e12 × 1e11 = %v %+v, want 1e11 exactly", m, ci)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
}
