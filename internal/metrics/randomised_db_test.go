package metrics

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/sim"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// TestRandomisedEffect runs the loop in miniature: a generation without
// rules, rules learned from it with a 20% holdout, a second generation
// under them. The randomised effect's arms are the simulator's own count,
// the assignment checks out, and the rules' effect on first-try success
// is called better.
func TestRandomisedEffect(t *testing.T) {
	ctx := t.Context()
	d := testdb.New(t, testdb.Options{})
	sc := sim.Default()
	gen := func(name string, seed uint64, start time.Time, rules func(string) ruleset.RuleSet) sim.Summary {
		var sum sim.Summary
		d.Load(t, testdb.Generate(t, name, func(ctx context.Context, sink agent.Sink) error {
			var err error
			sum, err = sim.Run(ctx, sim.Config{Scenario: sc, Seed: seed, Sessions: 400, Concurrency: 2, Ordered: true, Start: start, Rules: rules}, sink)
			return err
		}))
		return sum
	}
	start := sim.DefaultStart
	gen("generation 1", 1, start, nil)
	src := DB{DB: d.Store().DB()}
	rs, err := LearnRules(ctx, src, Filter{}, taxonomy.Default(), DefaultRulesConfig(), start.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Rules) == 0 {
		t.Fatal("no rules learned from generation 1")
	}
	SetHoldout(0.2, rs)
	sum := gen("generation 2", 2, start.AddDate(0, 0, 1), func(string) ruleset.RuleSet { return *rs })
	if sum.Arms["holdout"] == nil || sum.Arms["rules"] == nil {
		t.Fatalf("arms %v: the fleet ran no holdout", sum.Arms)
	}

	rows, err := Randomised(ctx, src, Filter{}, EffectOnFirstTry)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Ruleset != rs.Version {
		t.Fatalf("rows %+v, want one for %s", rows, rs.Version)
	}
	r := rows[0]
	h, ru := sum.Arms["holdout"], sum.Arms["rules"]
	if r.UnitsHoldout != h.Sessions || r.UnitsRules != ru.Sessions || r.SessionsHoldout != h.Sessions || r.Holdout != 0.2 || !r.AssignmentOK {
		t.Errorf("arms %d/%d units (share %.2f, ok %v, %s), want the simulator's %d/%d at 0.2", r.UnitsRules, r.UnitsHoldout, r.Holdout, r.AssignmentOK, r.Problem, ru.Sessions, h.Sessions)
	}
	for _, m := range r.Metrics {
		var kr, kh int64
		switch m.Metric {
		case EffectOnSuccess:
			kr, kh = ru.Successes, h.Successes
		case EffectOnFirstTry:
			kr, kh = ru.FirstTry, h.FirstTry
		case EffectOnReplan:
			kr, kh = ru.Replanned, h.Replanned
		default:
			continue
		}
		if m.Rules == nil || m.Holdout == nil || *m.Rules != float64(kr)/float64(ru.Sessions) || *m.Holdout != float64(kh)/float64(h.Sessions) {
			t.Errorf("%s: rules %v holdout %v, want %d/%d and %d/%d", m.Metric, m.Rules, m.Holdout, kr, ru.Sessions, kh, h.Sessions)
		}
		if m.Effect == nil || m.CI == nil || m.CI.Lo > *m.Effect || m.CI.Hi < *m.Effect {
			t.Errorf("%s: effect %v interval %+v", m.Metric, m.Effect, m.CI)
		}
	}
	if r.Verdict != EffectHelpful {
		t.Errorf("verdict %s on first-try success (%+v), want helpful: the learned rules help", r.Verdict, r.Metrics[1])
	}
}

// TestRandomisedSampleRatioMismatch: an agent whose assignment is broken
// (it reports the holdout arm for half of its sessions under a 10%
// holdout) gets its effect withheld, with the mismatch named.
func TestRandomisedSampleRatioMismatch(t *testing.T) {
	d := testdb.New(t, testdb.Options{})
	d.Load(t, testdb.Generate(t, "broken", func(ctx context.Context, sink agent.Sink) error {
		at := time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC)
		for i := range 400 {
			s := agent.NewSession(sink, "coder/h/w1", fmt.Sprint("broken-", i)).WithClock(func() time.Time { return at })
			arm := events.ArmRules
			if i%2 == 0 {
				arm = events.ArmHoldout
			}
			st := agent.SessionStarted{Agent: "coder", Tools: []string{"grep"},
				Assignment: &agent.Assignment{Ruleset: "rs-broken", Arm: arm, Holdout: 0.1, Unit: events.UnitSession}}
			if arm == events.ArmRules {
				st.Ruleset = "rs-broken"
			}
			if err := s.Started(ctx, st); err != nil {
				return err
			}
			if err := s.Ended(ctx, agent.SessionEnded{Outcome: events.OutcomeSuccess}); err != nil {
				return err
			}
		}
		return nil
	}))
	rows, err := Randomised(t.Context(), DB{DB: d.Store().DB()}, Filter{}, EffectOnSuccess)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("rows %+v, want 1", rows)
	}
	r := rows[0]
	if r.AssignmentOK || r.Verdict != "withheld" || r.SRMPValue == nil || *r.SRMPValue >= SRMAlpha {
		t.Errorf("assignment ok %v, verdict %s, SRM p %v: want a mismatch and the effect withheld", r.AssignmentOK, r.Verdict, r.SRMPValue)
	}
	for _, m := range r.Metrics {
		if m.Effect != nil || m.CI != nil {
			t.Errorf("%s: effect %v shown under a broken assignment", m.Metric, m.Effect)
		}
	}
	t.Log(r.Problem)
}
