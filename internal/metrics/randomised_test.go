package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent/ruleset"
)

// sequentialRun assigns units one by one (holdout share h) with outcome
// probabilities pr (rules) and ph (holdout), reads the always-valid
// interval of the effect after every `every` units up to n, and reports
// whether any read excluded 0 and whether every read held the true effect.
func sequentialRun(rng *rand.Rand, n, every int, h, pr, ph float64, fixed bool) (called, covered bool) {
	var nr, nh int64
	var syr, syh float64
	covered = true
	for i := 1; i <= n; i++ {
		if rng.Float64() < h {
			nh++
			if rng.Float64() < ph {
				syh++
			}
		} else {
			nr++
			if rng.Float64() < pr {
				syr++
			}
		}
		if i%every != 0 || nr == 0 || nh == 0 {
			continue
		}
		// y is 0 or 1: Σy² = Σy.
		d, ci := armEffect(nr, nh, syr, syr, syh, syh)
		if ci == nil {
			continue
		}
		if fixed { // the fixed-sample 95% interval, as a nightly report would read it
			mr, mh := syr/float64(nr), syh/float64(nh)
			half := Z95 * math.Sqrt(mr*(1-mr)/float64(nr)+mh*(1-mh)/float64(nh))
			ci = &Interval{Lo: *d - half, Hi: *d + half}
		}
		if ci.Lo > 0 || ci.Hi < 0 {
			called = true
		}
		if ci.Lo > pr-ph || ci.Hi < pr-ph {
			covered = false
		}
	}
	return called, covered
}

// TestSequentialAA reads the interval after every 100 sessions of A/A runs
// (no effect: both arms succeed half of the time, 10% held out, 3,000
// sessions): at most 5% of the seeded runs may call an effect at any read.
func TestSequentialAA(t *testing.T) {
	const runs = 400
	calls := 0
	for seed := range runs {
		rng := rand.New(rand.NewPCG(uint64(seed), 0xaa))
		if called, _ := sequentialRun(rng, 3000, 100, 0.1, 0.5, 0.5, false); called {
			calls++
		}
	}
	// The fixed-sample interval read as often calls far more: what the
	// always-valid one is for (and what makes this test able to fail).
	fixedCalls := 0
	for seed := range runs {
		rng := rand.New(rand.NewPCG(uint64(seed), 0xaa))
		if called, _ := sequentialRun(rng, 3000, 100, 0.1, 0.5, 0.5, true); called {
			fixedCalls++
		}
	}
	if fixedCalls <= 2*calls || fixedCalls < runs/10 {
		t.Errorf("fixed-sample intervals called an effect in %d of %d runs, the always-valid ones in %d: want the fixed ones far more often", fixedCalls, runs, calls)
	}
	t.Logf("fixed-sample intervals read every 100 sessions: %d of %d A/A runs called an effect", fixedCalls, runs)
	if rate := float64(calls) / runs; rate > 0.05 {
		t.Errorf("%d of %d A/A runs called an effect at some read (%.1f%%), want at most 5%%", calls, runs, 100*rate)
	} else {
		t.Logf("%d of %d A/A runs called an effect at some read (%.1f%%)", calls, runs, 100*rate)
	}
}

// TestSequentialCoverage: with a real effect (+15 points), the interval
// holds it at every read in at least 95% of runs, and by 3,000 sessions
// most runs have called it.
func TestSequentialCoverage(t *testing.T) {
	const runs = 300
	covered, called := 0, 0
	for seed := range runs {
		rng := rand.New(rand.NewPCG(uint64(seed), 0xcc))
		c, cov := sequentialRun(rng, 3000, 100, 0.1, 0.65, 0.5, false)
		if cov {
			covered++
		}
		if c {
			called++
		}
	}
	if float64(covered)/runs < 0.95 {
		t.Errorf("the interval held the true effect at every read in %d of %d runs, want at least 95%%", covered, runs)
	}
	if float64(called)/runs < 0.8 {
		t.Errorf("%d of %d runs called a +15 pts effect by 3000 sessions, want most", called, runs)
	}
	t.Logf("covered %d/%d, called %d/%d", covered, runs, called, runs)
}

func TestConfidenceSequenceShrinks(t *testing.T) {
	prev := math.Inf(1)
	for _, n := range []int64{10, 100, 1000, 10000, 100000} {
		w := ConfidenceSequence(n, 1, 0.05, 1000)
		if !(w < prev) {
			t.Errorf("half-width at %d = %v, not below %v", n, w, prev)
		}
		// Always wider than the fixed-n interval of the same data.
		if fixed := Z95 / math.Sqrt(float64(n)); w <= fixed {
			t.Errorf("half-width at %d = %v, not wider than the fixed-n %v", n, w, fixed)
		}
		prev = w
	}
	if p := srm(100, 1000, 0.1); p == nil || math.Abs(*p-1) > 1e-12 {
		t.Errorf("srm(100 of 1000, 0.1) = %v, want 1", p)
	}
	if p := srm(150, 1000, 0.1); p == nil || *p > 1e-6 {
		t.Errorf("srm(150 of 1000, 0.1) = %v, want tiny", p)
	}
}

// TestGuard: a set in force judged harmful is replaced by the newest set of
// the history that is neither it nor harmful, with the evidence recorded;
// with none, by an empty set; a set not judged harmful stays.
func TestGuard(t *testing.T) {
	at := time.Date(2026, 1, 9, 0, 0, 0, 0, time.UTC)
	eff, ci := -0.2, &Interval{Lo: -0.3, Hi: -0.1}
	rows := []RandomisedRow{
		{Ruleset: "rs-bad", Verdict: EffectHarmful, SessionsRules: 800, SessionsHoldout: 200,
			Metrics: []RandomisedMetric{{Metric: EffectOnFirstTry, Effect: &eff, CI: ci}}},
		{Ruleset: "rs-worse", Verdict: EffectHarmful},
		{Ruleset: "rs-good", Verdict: EffectHelpful},
	}
	rule := []ruleset.Rule{{ID: "prefer:docs:read_file", Kind: ruleset.KindPrefer, TaskType: "docs", ToolHint: "read_file"}}
	hist := []ruleset.RuleSet{{Version: "rs-bad", Rules: rule}, {Version: "rs-worse", Rules: rule}, {Version: "rs-good", Holdout: 0.1, Rules: rule}, {Version: "rs-older", Rules: rule}}
	got, ok := Guard(rows, "rs-bad", hist, EffectOnFirstTry, at)
	if !ok || got.Version != "rs-good" || got.Holdout != 0.1 || len(got.Rules) != 1 || got.RolledBack == nil {
		t.Fatalf("Guard = %+v, %v: want rs-good with the rollback recorded", got, ok)
	}
	if rb := *got.RolledBack; rb.Version != "rs-bad" || rb.Effect != eff || rb.Lo != ci.Lo || rb.Hi != ci.Hi || rb.SessionsRules != 800 || rb.SessionsHoldout != 200 || !rb.At.Equal(at) {
		t.Errorf("rollback record %+v", rb)
	}
	if got, ok := Guard(rows, "rs-good", hist, EffectOnFirstTry, at); ok || got != nil {
		t.Errorf("Guard of a helpful set = %+v, %v: want no rollback", got, ok)
	}
	if got, ok := Guard(rows, "rs-bad", hist[:2], EffectOnFirstTry, at); !ok || got.Version != "" || len(got.Rules) != 0 || got.RolledBack == nil {
		t.Errorf("Guard with no good set = %+v, %v: want an empty set with the rollback", got, ok)
	}
}
