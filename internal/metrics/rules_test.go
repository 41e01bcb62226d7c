package metrics

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

var rulesNow = time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)

// swapThresholds are low enough for the 12 calls and 3 replans of
// testdata/analyze/rules_swaps.jsonl.
func swapThresholds() RulesConfig {
	cfg := DefaultRulesConfig()
	cfg.MinCalls, cfg.PreferSuccess, cfg.ReplaceSuccess = 5, 0.6, 0.4
	return cfg
}

func ruleIDs(rs *ruleset.RuleSet) []string {
	ids := make([]string, len(rs.Rules))
	for i, r := range rs.Rules {
		ids[i] = r.ID
	}
	return ids
}

// testdata/analyze/rules_swaps.jsonl: three skilllite sessions each plan
// "Fix the callers of Parse" (coding) hinted search_web, fail twice, replan
// to the same task hinted grep, which succeeds twice and completes; one
// coder session calls grep once.
func TestLearnRulesSwaps(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "rules_swaps.jsonl"))
	ctx := context.Background()
	tax := taxonomy.Default()
	f := Filter{Since: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}
	rs, err := LearnRules(ctx, src, f, tax, swapThresholds(), rulesNow)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"avoid:coding:search_web", "replace:coding:search_web:grep", "prefer:coding:grep"}
	if got := ruleIDs(rs); !slices.Equal(got, want) {
		t.Fatalf("rules %v, want %v", got, want)
	}
	avoid, replace, prefer := rs.Rules[0], rs.Rules[1], rs.Rules[2]

	// avoid: 6 search_web calls, all failed, against 6 grep calls + 1 coder
	// grep call... no: the coder session's task is coding too: 7 others.
	ae := avoid.Evidence.(*CallEvidence)
	if ae.Calls != 6 || ae.Failed != 6 || ae.BaselineCalls != 7 || ae.BaselineFailed != 0 || ae.Lift != nil {
		t.Errorf("avoid evidence %+v, want 6/6 failed against 0/7", ae)
	}
	// Wilson(6, 6) lower bound 0.6097; Fisher [[6 0] [0 7]]: p = 1/C(13,6) = 0.0005828.
	if math.Abs(avoid.Confidence-0.6096657) > 1e-6 || math.Abs(*ae.PValue-1.0/1716) > 1e-9 || avoid.Support != 6 {
		t.Errorf("avoid confidence %v, p %v, support %d; want 0.6096657, 0.0005828, 6", avoid.Confidence, *ae.PValue, avoid.Support)
	}
	if avoid.Instead != "grep" || avoid.TaskType != "coding" || avoid.ToolHint != "search_web" {
		t.Errorf("avoid %+v, want coding search_web instead grep", avoid)
	}
	re := replace.Evidence.(*ReplaceEvidence)
	if *re != (ReplaceEvidence{Replans: 3, Added: 3, Completed: 3, Succeeded: 3, SuccessRate: 1, SuccessCI: re.SuccessCI}) ||
		math.Abs(re.SuccessCI.Lo-0.4385030) > 1e-6 || replace.Support != 3 || replace.Instead != "grep" {
		t.Errorf("replace %+v evidence %+v, want 3 replans, 3/3 succeeded, lower bound 0.4385", replace, re)
	}
	pe := prefer.Evidence.(*CallEvidence)
	// 7 grep calls of 13 coding calls, all successful.
	if pe.Calls != 7 || pe.Failed != 0 || pe.TypeCalls != 13 || math.Abs(pe.Share-7.0/13) > 1e-12 {
		t.Errorf("prefer evidence %+v, want 7 of 13 calls, none failed", pe)
	}
	if math.Abs(prefer.Confidence-(1-Wilson(0, 7, Z95).Hi)) > 1e-12 {
		t.Errorf("prefer confidence %v, want the Wilson lower bound of 7/7", prefer.Confidence)
	}

	if rs.Classifier != tax.ID() || rs.Window.Since == nil || !rs.Window.Since.Equal(f.Since) || rs.Window.Until != nil ||
		!rs.GeneratedAt.Equal(rulesNow) || rs.Thresholds != ruleset.Thresholds(swapThresholds()) {
		t.Errorf("rule set header %+v", rs)
	}

	// The planner loads it as it is.
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := ruleset.Parse(b)
	if err != nil {
		t.Fatalf("ruleset.Parse: %v\n%s", err, b)
	}
	if ps.Version != rs.Version || !slices.Equal(ps.IDs(), want) || ps.Rules[1].Instead != "grep" || ps.Rules[0].Kind != ruleset.KindAvoid {
		t.Errorf("planner rule set %+v", ps)
	}
}

// At the default thresholds the fixture is too small for any rule.
func TestLearnRulesDefaults(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "rules_swaps.jsonl"))
	rs, err := LearnRules(context.Background(), src, Filter{}, taxonomy.Default(), DefaultRulesConfig(), rulesNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Rules) != 0 || rs.Rules == nil || rs.Version == "" {
		t.Fatalf("rules %v (version %q), want an empty, versioned set", rs.Rules, rs.Version)
	}
	if _, err := LearnRules(context.Background(), src, Filter{By: []string{"agent"}}, taxonomy.Default(), DefaultRulesConfig(), rulesNow); err == nil {
		t.Fatal("LearnRules with -by agent: no error")
	}
}

// Per agent, each set comes from that agent's sessions only: skilllite's
// has the rules (with 6 baseline calls instead of 7), coder's none.
func TestLearnRulesByAgent(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "rules_swaps.jsonl"))
	sets, err := LearnRulesByAgent(context.Background(), src, Filter{}, taxonomy.Default(), swapThresholds(), rulesNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets["skilllite"] == nil || sets["coder"] == nil {
		t.Fatalf("rule sets for %v, want skilllite and coder", hintKeys(sets))
	}
	sk := sets["skilllite"]
	if got := ruleIDs(sk); !slices.Equal(got, []string{"avoid:coding:search_web", "replace:coding:search_web:grep", "prefer:coding:grep"}) || sk.Agent != "skilllite" {
		t.Errorf("skilllite rules %v (agent %q)", got, sk.Agent)
	}
	if e := sk.Rules[0].Evidence.(*CallEvidence); e.BaselineCalls != 6 {
		t.Errorf("skilllite avoid baseline %d calls, want 6", e.BaselineCalls)
	}
	if c := sets["coder"]; len(c.Rules) != 0 || c.Agent != "coder" {
		t.Errorf("coder rules %v (agent %q), want none", ruleIDs(c), c.Agent)
	}
}

// The version follows the rules a planner applies, not their evidence.
func TestRuleSetVersion(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "rules_swaps.jsonl"))
	ctx := context.Background()
	a, err := LearnRules(ctx, src, Filter{}, taxonomy.Default(), swapThresholds(), rulesNow)
	if err != nil {
		t.Fatal(err)
	}
	// Other thresholds, same rules: the evidence is the same, the version too.
	cfg := swapThresholds()
	cfg.Alpha = 0.05
	b, err := LearnRules(ctx, src, Filter{}, taxonomy.Default(), cfg, rulesNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != b.Version {
		t.Errorf("same rules: versions %s and %s", a.Version, b.Version)
	}
	// Different evidence, same rules.
	c := *a
	c.Rules = slices.Clone(a.Rules)
	c.Rules[0].Support, c.Rules[0].Confidence = 99, 0.99
	if ruleSetVersion(c.Rules) != a.Version {
		t.Error("evidence changed the version")
	}
	// One rule fewer: another version.
	if ruleSetVersion(a.Rules[1:]) == a.Version {
		t.Error("a rule fewer kept the version")
	}
}

func TestRulesConfigValidate(t *testing.T) {
	bad := RulesConfig{MinCalls: 0, PreferSuccess: 2, PreferShare: -1, AvoidLift: 0.5, Alpha: 0, MinReplans: 0, ReplaceSuccess: 1.5}
	err := bad.Validate()
	if err == nil {
		t.Fatal("bad thresholds accepted")
	}
	for _, flag := range []string{"-min-calls", "-prefer-success", "-prefer-share", "-avoid-lift", "-alpha", "-min-replans", "-replace-success"} {
		if !strings.Contains(err.Error(), flag) {
			t.Errorf("error %q does not mention %s", err, flag)
		}
	}
	if err := DefaultRulesConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}
