package report

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/metrics"
)

// Rules compares the rule set learned up to the window's end with the one
// learned up to its start, and lists what should be retired.
type Rules struct {
	Current  RuleSet `json:"current"`
	Previous RuleSet `json:"previous"`
	// New are the rules of the current set that the previous set lacks,
	// with their evidence as the rules analyzer gives it.
	New []ruleset.Rule `json:"new"`
	// Retired are the rules (and rule set versions) to retire: no longer
	// learned, or judged harmful or nil by the effect analyzer.
	Retired []Retired `json:"retired"`
}

// RuleSet names a learned rule set.
type RuleSet struct {
	Version string         `json:"version"`
	Window  ruleset.Window `json:"window"` // the sessions learned from, by start
	Rules   []string       `json:"rules"`  // the rule ids, in the set's order
}

// Reasons to retire a rule.
const (
	RetireNoLongerHolds = "no_longer_holds" // in the previous set, not learned any more
	RetireHarmful       = metrics.EffectHarmful
	RetireNil           = metrics.EffectNil
)

// Retired is one rule, or one rule set version, to retire.
type Retired struct {
	ID string `json:"id"`
	// Kind is the rule's (prefer, avoid, replace), "rule" for a rule id
	// no learned set holds, or "ruleset" for a rule set version.
	Kind    string   `json:"kind"`
	Reasons []string `json:"reasons"` // no_longer_holds, harmful, nil
	// Verdict is the effect analyzer's, when it judged the id (else null).
	Verdict *string `json:"verdict"`
	// Rule is the rule as last learned (the previous set's, else the
	// current's), when a learned set holds it.
	Rule *ruleset.Rule `json:"rule"`
}

// ruleChanges learns the two rule sets and sets them against each other
// and against the effect verdicts.
func ruleChanges(ctx context.Context, src metrics.Source, cfg Config, effects []metrics.EffectRow, now time.Time) (Rules, error) {
	cur, err := metrics.LearnRules(ctx, src, cfg.filter(cfg.RulesSince, cfg.Until), cfg.Taxonomy, cfg.Rules, now)
	if err != nil {
		return Rules{}, fmt.Errorf("rules learned up to the window's end: %w", err)
	}
	prev, err := metrics.LearnRules(ctx, src, cfg.filter(cfg.RulesSince, cfg.Since), cfg.Taxonomy, cfg.Rules, now)
	if err != nil {
		return Rules{}, fmt.Errorf("rules learned up to the window's start: %w", err)
	}
	r := Rules{Current: ruleSet(cur), Previous: ruleSet(prev), New: []ruleset.Rule{}, Retired: []Retired{}}
	inPrev, inCur := byID(prev), byID(cur)
	for _, rule := range cur.Rules {
		if _, ok := inPrev[rule.ID]; !ok {
			r.New = append(r.New, rule)
		}
	}
	retired := map[string]*Retired{}
	retire := func(id, kind, reason string) *Retired {
		x, ok := retired[id]
		if !ok {
			x = &Retired{ID: id, Kind: kind}
			if rule, ok := inPrev[id]; ok {
				x.Rule, x.Kind = &rule, string(rule.Kind)
			} else if rule, ok := inCur[id]; ok {
				x.Rule, x.Kind = &rule, string(rule.Kind)
			}
			retired[id] = x
		}
		if !slices.Contains(x.Reasons, reason) {
			x.Reasons = append(x.Reasons, reason)
		}
		return x
	}
	for _, rule := range prev.Rules {
		if _, ok := inCur[rule.ID]; !ok {
			retire(rule.ID, string(rule.Kind), RetireNoLongerHolds)
		}
	}
	for _, e := range effects {
		if !e.Retire {
			continue
		}
		kind := "rule"
		if e.Kind == "ruleset" {
			kind = "ruleset"
		}
		x := retire(e.ID, kind, e.Verdict)
		// With -by the analyzer judges each group; one harmful group is
		// reason enough, and the worst verdict is the one shown.
		if x.Verdict == nil || e.Verdict == metrics.EffectHarmful {
			v := e.Verdict
			x.Verdict = &v
		}
	}
	for _, x := range retired {
		r.Retired = append(r.Retired, *x)
	}
	slices.SortFunc(r.Retired, func(a, b Retired) int {
		return cmp.Or(cmp.Compare(retireOrder(a), retireOrder(b)), strings.Compare(a.ID, b.ID))
	})
	return r, nil
}

func ruleSet(rs *ruleset.RuleSet) RuleSet {
	s := RuleSet{Version: rs.Version, Window: rs.Window, Rules: make([]string, len(rs.Rules))}
	for i, r := range rs.Rules {
		s.Rules[i] = r.ID
	}
	return s
}

func byID(rs *ruleset.RuleSet) map[string]ruleset.Rule {
	m := make(map[string]ruleset.Rule, len(rs.Rules))
	for _, r := range rs.Rules {
		m[r.ID] = r
	}
	return m
}

// retireOrder lists rule sets first, then harmful, nil, and rules that no
// longer hold.
func retireOrder(x Retired) int {
	switch {
	case x.Kind == "ruleset":
		return 0
	case slices.Contains(x.Reasons, RetireHarmful):
		return 1
	case slices.Contains(x.Reasons, RetireNil):
		return 2
	}
	return 3
}
