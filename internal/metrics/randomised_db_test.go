package metrics

import (
	"context"
	"fmt"
	"math"
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

// TestRandomisedBeatsObservational: two rule sets roll out one after the
// other (a generation without rules, then one under the first set, then
// one under the second, which is better), each holding out 20%. The
// observational effect of the first set compares its sessions with every
// session without it, the second set's among them, and is biased; the
// randomised one compares its own arms. The truth is the same sessions
// simulated once all with the first set and once all without rules.
func TestRandomisedBeatsObservational(t *testing.T) {
	ctx := t.Context()
	d := testdb.New(t, testdb.Options{})
	src := DB{DB: d.Store().DB()}
	sc := sim.Default()
	const n = 400
	cfg := func(seed uint64, day int, rules func(string) ruleset.RuleSet) sim.Config {
		return sim.Config{Scenario: sc, Seed: seed, Sessions: n, Concurrency: 2, Ordered: true, Start: sim.DefaultStart.AddDate(0, 0, day), Rules: rules}
	}
	load := func(name string, c sim.Config) {
		d.Load(t, testdb.Generate(t, name, func(ctx context.Context, sink agent.Sink) error {
			_, err := sim.Run(ctx, c, sink)
			return err
		}))
	}
	// The first set fixes two task types, the second all of them (the
	// scenario's ground truth: avoid its wrong hints, prefer its best tool).
	truthRules := func(types int, version string) *ruleset.RuleSet {
		var rules []ruleset.Rule
		for i, tt := range sc.Truth().Types {
			if i >= types {
				break
			}
			for _, tool := range tt.Avoid {
				rules = append(rules, ruleset.Rule{ID: "avoid:" + tt.TaskType + ":" + tool, Kind: ruleset.KindAvoid, TaskType: tt.TaskType, ToolHint: tool, Instead: tt.BestTool})
			}
			rules = append(rules, ruleset.Rule{ID: "prefer:" + tt.TaskType, Kind: ruleset.KindPrefer, TaskType: tt.TaskType, ToolHint: tt.BestTool})
		}
		return &ruleset.RuleSet{Version: version, Holdout: 0.2, Rules: rules}
	}
	load("no rules", cfg(1, 0, nil))
	first := truthRules(2, "rs-first")
	load("first set", cfg(2, 1, func(string) ruleset.RuleSet { return *first }))
	second := truthRules(len(sc.Truth().Types), "rs-second")
	load("second set", cfg(3, 2, func(string) ruleset.RuleSet { return *second }))

	// The truth: generation 2's sessions all with the first set, and all
	// without rules.
	rate := func(rules func(string) ruleset.RuleSet) float64 {
		sum, err := sim.Run(ctx, cfg(2, 1, rules), discard{})
		if err != nil {
			t.Fatal(err)
		}
		return float64(sum.FirstTry) / float64(sum.Sessions)
	}
	noHoldout := *first
	noHoldout.Holdout = 0
	truth := rate(func(string) ruleset.RuleSet { return noHoldout }) - rate(nil)

	rows, err := Randomised(ctx, src, Filter{}, EffectOnFirstTry)
	if err != nil {
		t.Fatal(err)
	}
	var rnd *RandomisedMetric
	for _, r := range rows {
		if r.Ruleset == first.Version {
			rnd = &r.Metrics[1]
		}
	}
	obsRes, err := Effect(ctx, src, Filter{}, EffectConfig{MinSessions: 200, NilMargin: 0.02, Metric: EffectOnFirstTry})
	if err != nil {
		t.Fatal(err)
	}
	var obs *EffectMetric
	for _, r := range obsRes.Rows {
		if r.Kind == "ruleset" && r.ID == first.Version {
			obs = &r.FirstTrySuccess
		}
	}
	if rnd == nil || rnd.Effect == nil || obs == nil || obs.Difference == nil {
		t.Fatalf("randomised %+v, observational %+v: want both", rnd, obs)
	}
	t.Logf("truth %+.3f, randomised %+.3f %+v, observational %+.3f %+v", truth, *rnd.Effect, *rnd.CI, *obs.Difference, *obs.DifferenceCI)
	if rnd.CI.Lo > truth || rnd.CI.Hi < truth {
		t.Errorf("the randomised interval %+v misses the truth %+.3f", *rnd.CI, truth)
	}
	if obs.DifferenceCI.Lo <= truth && obs.DifferenceCI.Hi >= truth {
		t.Errorf("the observational interval %+v holds the truth %+.3f: the rollout did not bias it", *obs.DifferenceCI, truth)
	}
	if math.Abs(*obs.Difference-truth) < 2*math.Abs(*rnd.Effect-truth) {
		t.Errorf("observational %+.3f is not further from the truth %+.3f than randomised %+.3f", *obs.Difference, truth, *rnd.Effect)
	}
}

// discard is a sink that drops every event.
type discard struct{}

func (discard) Send(context.Context, *events.Event) error { return nil }

// TestRandomisedRuleEffect: rules with a holdout of their own (a 30% share
// within the rules arm), among them a harmful rule per task type planted
// (avoid the type's best tool, instead its worst). Each rule's row has the
// simulator's own count of the sessions that applied it and held it out;
// no learned rule is judged harmful, a planted one is (seed 2: planted:search,
// −8.9 pts [−17.9, −0.0]; the others lean harmful too, but one rule bears
// only on its own type's tasks, so its effect is diluted), and Retire takes
// out exactly the rules judged harmful, recording the evidence, and the
// next set of the key carries the list on.
func TestRandomisedRuleEffect(t *testing.T) {
	ctx := t.Context()
	d := testdb.New(t, testdb.Options{})
	sc := sim.Default()
	gen := func(name string, seed uint64, n int, start time.Time, rules func(string) ruleset.RuleSet) sim.Summary {
		var sum sim.Summary
		d.Load(t, testdb.Generate(t, name, func(ctx context.Context, sink agent.Sink) error {
			var err error
			sum, err = sim.Run(ctx, sim.Config{Scenario: sc, Seed: seed, Sessions: n, Concurrency: 2, Ordered: true, Start: start, Rules: rules}, sink)
			return err
		}))
		return sum
	}
	start := sim.DefaultStart
	gen("generation 1", 1, 400, start, nil)
	src := DB{DB: d.Store().DB()}
	rs, err := LearnRules(ctx, src, Filter{}, taxonomy.Default(), DefaultRulesConfig(), start.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	planted := map[string]bool{}
	for _, tt := range sc.Truth().Types {
		worst := ""
		for _, tool := range sc.Tools {
			if tool.Name != tt.BestTool && (worst == "" || sc.Success(tool.Name, tt.TaskType) < sc.Success(worst, tt.TaskType)) {
				worst = tool.Name
			}
		}
		id := "planted:" + tt.TaskType
		planted[id] = true
		rs.Rules = append(rs.Rules, ruleset.Rule{ID: id, Kind: ruleset.KindAvoid, TaskType: tt.TaskType, ToolHint: tt.BestTool, Instead: worst})
	}
	rs.Version = RuleSetVersion(rs.Rules)
	SetHoldout(0.1, rs)
	SetRuleHoldout(0.3, rs)
	sum := gen("generation 2", 2, 1500, start.AddDate(0, 0, 1), func(string) ruleset.RuleSet { return *rs })

	rows, err := Randomised(ctx, src, Filter{}, EffectOnFirstTry)
	if err != nil {
		t.Fatal(err)
	}
	if len(RuleRows(rows)) != len(rs.Rules) || len(SetRows(rows)) != 1 {
		t.Fatalf("%d set rows and %d rule rows, want 1 and %d", len(SetRows(rows)), len(RuleRows(rows)), len(rs.Rules))
	}
	harmful := map[string]bool{}
	for _, r := range RuleRows(rows) {
		truth := sum.RuleArms[r.Rule]
		on, off := truth[ruleset.ArmRules], truth[ruleset.ArmHoldout]
		if on == nil || off == nil {
			t.Fatalf("rule %s: simulator arms %v", r.Rule, truth)
		}
		if r.Ruleset != rs.Version || r.UnitsRules != on.Sessions || r.UnitsHoldout != off.Sessions || r.Holdout != 0.3 || !r.AssignmentOK {
			t.Errorf("rule %s: %d / %d units in %s (share %v, ok %v %s), want the simulator's %d / %d", r.Rule, r.UnitsRules, r.UnitsHoldout, r.Ruleset, r.Holdout, r.AssignmentOK, r.Problem, on.Sessions, off.Sessions)
		}
		m := r.Metrics[1]
		if m.Rules == nil || *m.Rules != float64(on.FirstTry)/float64(on.Sessions) || *m.Holdout != float64(off.FirstTry)/float64(off.Sessions) {
			t.Errorf("rule %s: first-try %v / %v, want %d/%d and %d/%d", r.Rule, m.Rules, m.Holdout, on.FirstTry, on.Sessions, off.FirstTry, off.Sessions)
		}
		t.Logf("%-28s %4d / %3d  %+.1f pts [%+.1f, %+.1f] %s", r.Rule, r.UnitsRules, r.UnitsHoldout, 100**m.Effect, 100*m.CI.Lo, 100*m.CI.Hi, r.Verdict)
		if r.Verdict == EffectHarmful {
			harmful[r.Rule] = true
		}
		if !planted[r.Rule] && r.Verdict == EffectHarmful {
			t.Errorf("learned rule %s judged harmful", r.Rule)
		}
	}
	if len(harmful) == 0 {
		t.Fatal("no planted rule was judged harmful")
	}
	learned := *rs
	fresh := Retire(&learned, nil, rows, EffectOnFirstTry, start)
	if len(fresh) != len(harmful) || len(learned.Retired) != len(harmful) || len(learned.Rules) != len(rs.Rules)-len(harmful) || learned.Version == rs.Version {
		t.Fatalf("retired %d (%d listed), %d rules left of %d, version %s: want the %d harmful ones out", len(fresh), len(learned.Retired), len(learned.Rules), len(rs.Rules), learned.Version, len(harmful))
	}
	for _, r := range fresh {
		if !harmful[r.Rule] || r.Version != rs.Version || r.Effect >= 0 || r.Hi >= 0 {
			t.Errorf("retired %+v, want a harmful rule with its evidence", r)
		}
	}
	for _, r := range learned.Rules {
		if harmful[r.ID] {
			t.Errorf("rule %s still in the set", r.ID)
		}
	}
	// The next set of the key carries the list on, and leaves the rule out
	// even with no new evidence.
	next := *rs
	if Retire(&next, &learned, nil, EffectOnFirstTry, start); len(next.Retired) != len(harmful) || len(next.Rules) != len(learned.Rules) {
		t.Errorf("next set: %d retired, %d rules, want %d and %d", len(next.Retired), len(next.Rules), len(harmful), len(learned.Rules))
	}
}
