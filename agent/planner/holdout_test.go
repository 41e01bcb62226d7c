package planner

import (
	"fmt"
	"testing"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
)

// TestHoldout: with a rule set that has a holdout, the session is assigned
// an arm by ruleset.Assign and reports it; in the holdout arm no rule
// applies (the avoided hint stays) and no rule set is reported; in the
// rules arm both are as without a holdout. A workspace is assigned as a
// whole.
func TestHoldout(t *testing.T) {
	rules := func(version string) ruleset.RuleSet {
		return ruleset.RuleSet{Version: version, Holdout: 0.5, Rules: []ruleset.Rule{
			{ID: "r-017", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "search_web"}}}
	}
	// Versions under which this session falls in each arm.
	byArm := map[string]string{}
	for i := 0; len(byArm) < 2; i++ {
		v := fmt.Sprint("rs-", i)
		if _, ok := byArm[ruleset.Assign(v, testSession, 0.5)]; !ok {
			byArm[ruleset.Assign(v, testSession, 0.5)] = v
		}
	}
	for _, arm := range []string{ruleset.ArmRules, ruleset.ArmHoldout} {
		t.Run(arm, func(t *testing.T) {
			version := byArm[arm]
			f := newFixture(t, Config{Tools: testTools, Rules: rules(version)})
			ctx := t.Context()
			mustNil(t, "Start()", f.p.Start(ctx, StartInfo{Agent: "skilllite"}))
			res, err := f.p.NewPlanFromTasks(ctx, []agent.Task{typed(task(0, "find the call sites", "search_web"), "edit")})
			mustNil(t, "NewPlanFromTasks()", err)
			started := agent.SessionStarted{Agent: "skilllite", Tools: append(append([]string{}, testTools...), ToolCompleteTask, ToolUpdateTaskPlan),
				Assignment: &agent.Assignment{Ruleset: version, Arm: events.Arm(arm), Holdout: 0.5, Unit: events.UnitSession, UnitID: testSession}}
			hint := res.Tasks[0].ToolHint
			if arm == ruleset.ArmRules {
				started.Ruleset, started.Rules = version, []string{"r-017"}
				if hint != nil {
					t.Errorf("rules arm: hint %q stayed, want it stripped by r-017", *hint)
				}
			} else if hint == nil || *hint != "search_web" {
				t.Errorf("holdout arm: hint %v, want search_web kept (no rule applies)", hint)
			}
			checkEvents(t, f.sink.all()[:1], []string{ev(t, events.SessionStarted, started)})
		})
	}

	t.Run("workspace", func(t *testing.T) {
		f := newFixture(t, Config{Tools: testTools, Rules: rules("rs-w"), Workspace: "/home/me/proj"})
		mustNil(t, "Start()", f.p.Start(t.Context(), StartInfo{Agent: "skilllite"}))
		p, err := f.sink.all()[0].Payload()
		mustNil(t, "Payload()", err)
		a := p.(*events.SessionStartedData).Assignment
		if a == nil || a.Unit != events.UnitWorkspace || a.UnitID != "/home/me/proj" || string(a.Arm) != ruleset.Assign("rs-w", "/home/me/proj", 0.5) {
			t.Errorf("assignment %+v, want the workspace's arm", a)
		}
	})

	t.Run("no holdout, no assignment", func(t *testing.T) {
		rs := rules("rs-n")
		rs.Holdout = 0
		f := newFixture(t, Config{Tools: testTools, Rules: rs})
		mustNil(t, "Start()", f.p.Start(t.Context(), StartInfo{Agent: "skilllite"}))
		p, _ := f.sink.all()[0].Payload()
		if d := p.(*events.SessionStartedData); d.Assignment != nil || d.Ruleset != "rs-n" {
			t.Errorf("session started %+v, want the rule set and no assignment", d)
		}
	})
}

// TestRuleHoldout: in the rules arm, each rule with a holdout of its own
// draws its arm by ruleset.AssignRule; a held-out rule neither applies nor
// is listed, the assignment reports every such rule's arm, and a rule
// without one always applies.
func TestRuleHoldout(t *testing.T) {
	rs := func(version string) ruleset.RuleSet {
		return ruleset.RuleSet{Version: version, Holdout: 0.1, Rules: []ruleset.Rule{
			{ID: "avoid:edit:search_web", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "search_web", Holdout: 0.5},
			{ID: "avoid:edit:grep", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "grep"}}}
	}
	// A version under which the session is in the rules arm and the first
	// rule held out, and one where it applies.
	byArm := map[string]string{}
	for i := 0; len(byArm) < 2; i++ {
		v := fmt.Sprint("rs-", i)
		if ruleset.Assign(v, testSession, 0.1) != ruleset.ArmRules {
			continue
		}
		if arm := ruleset.AssignRule(v, "avoid:edit:search_web", testSession, 0.5); byArm[arm] == "" {
			byArm[arm] = v
		}
	}
	for arm, version := range byArm {
		t.Run(arm, func(t *testing.T) {
			f := newFixture(t, Config{Tools: testTools, Rules: rs(version)})
			ctx := t.Context()
			mustNil(t, "Start()", f.p.Start(ctx, StartInfo{Agent: "skilllite"}))
			res, err := f.p.NewPlanFromTasks(ctx, []agent.Task{typed(task(0, "find the call sites", "search_web"), "edit")})
			mustNil(t, "NewPlanFromTasks()", err)
			started := agent.SessionStarted{Agent: "skilllite", Tools: append(append([]string{}, testTools...), ToolCompleteTask, ToolUpdateTaskPlan),
				Ruleset: version, Rules: []string{"avoid:edit:search_web", "avoid:edit:grep"},
				Assignment: &agent.Assignment{Ruleset: version, Arm: events.ArmRules, Holdout: 0.1, Unit: events.UnitSession, UnitID: testSession,
					Rules: []agent.RuleArm{{ID: "avoid:edit:search_web", Arm: events.Arm(arm), Holdout: 0.5}}}}
			hint := res.Tasks[0].ToolHint
			if arm == ruleset.ArmHoldout {
				started.Rules = []string{"avoid:edit:grep"}
				if hint == nil || *hint != "search_web" {
					t.Errorf("rule held out: hint %v, want search_web kept", hint)
				}
			} else if hint != nil {
				t.Errorf("rule applied: hint %q stayed, want it stripped", *hint)
			}
			checkEvents(t, f.sink.all()[:1], []string{ev(t, events.SessionStarted, started)})
			if a := f.p.Assignment(); len(a.Rules) != 1 || string(a.Rules[0].Arm) != arm {
				t.Errorf("Assignment() = %+v, want the rule's arm %s", a, arm)
			}
		})
	}
}
