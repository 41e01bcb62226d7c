package metrics

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/queries"
)

// The randomised effect of a rule set: its rules arm against its holdout
// arm (agent.session.started assignment, v1.4), and of each rule with a
// holdout of its own: the sessions applying it against those holding it
// out, within the set's rules arm; from queries/analyze/effect_randomised.sql.

// SRMAlpha is the p-value below which a sample-ratio mismatch is called:
// the arms' shares are too far from the holdout share for the assignment
// to be working, and the effect is withheld. It is small because the
// check is read every night.
const SRMAlpha = 0.001

// DefaultCSAlpha and DefaultCSTarget are the error rate of the always-valid
// intervals and the number of units at which they are tightest.
const (
	DefaultCSAlpha  = 0.05
	DefaultCSTarget = 1000
)

// RandomisedRow is the randomised effect of one rule set version (Rule
// empty), or of one of its rules with a holdout of its own (Rule its id:
// the arms are the sessions of the set's rules arm that applied the rule
// and those that held it out).
type RandomisedRow struct {
	Ruleset string  `json:"ruleset"`
	Rule    string  `json:"rule,omitempty"`
	Holdout float64 `json:"holdout"` // the share held out
	// Units (sessions, or workspaces) and sessions of each arm; mixed
	// units were reported in both arms and are left out.
	UnitsRules      int64 `json:"units_rules"`
	UnitsHoldout    int64 `json:"units_holdout"`
	MixedUnits      int64 `json:"mixed_units"`
	SessionsRules   int64 `json:"sessions_rules"`
	SessionsHoldout int64 `json:"sessions_holdout"`
	// HoldoutShare is the holdout arm's share of the units; SRMPValue the
	// chi-square test of it against Holdout; AssignmentOK false when the
	// p-value is below SRMAlpha, units were in both arms, or the sessions
	// reported several shares: then every effect is withheld (nil) and
	// Problem says why.
	HoldoutShare *float64 `json:"holdout_share"`
	SRMPValue    *float64 `json:"srm_p_value"`
	AssignmentOK bool     `json:"assignment_ok"`
	Problem      string   `json:"problem,omitempty"`
	// Metrics are success, first_try_success, replan and tokens, in that
	// order.
	Metrics []RandomisedMetric `json:"metrics"`
	// Verdict is the verdict on the configured metric (EffectConfig.Metric):
	// helpful or harmful (the interval entirely on the good or the bad
	// side), undecided (it holds 0, or there is none yet), or withheld.
	Verdict string `json:"verdict"`
}

// RandomisedMetric is one metric's effect in the two arms.
type RandomisedMetric struct {
	Metric string `json:"metric"`
	// Rules and Holdout are the arms' rates (tokens: mean tokens per
	// session) over their sessions; Sessions* the sessions they are over.
	Rules           *float64 `json:"rules"`
	Holdout         *float64 `json:"holdout"`
	SessionsRules   int64    `json:"sessions_rules"`
	SessionsHoldout int64    `json:"sessions_holdout"`
	// Effect is rules minus holdout, the difference of the arms' means over
	// their units; CI its always-valid 95% interval (a confidence sequence:
	// it keeps its error rate however often it is read). Both nil when
	// withheld, or while an arm has fewer than MinArmUnits units.
	Units  int64     `json:"units"`
	Effect *float64  `json:"effect"`
	CI     *Interval `json:"ci"`
	// LowerIsBetter: replan and tokens.
	LowerIsBetter bool `json:"lower_is_better"`
}

// ConfidenceSequence is the half-width of the asymptotic confidence
// sequence for a mean after n observations with sample standard deviation
// sd (Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas, "Time-uniform
// central limit theory and asymptotic confidence sequences", 2023,
// eq. 2.6): sd · sqrt(2(nρ²+1)/(n²ρ²) · ln(sqrt(nρ²+1)/alpha)), with ρ
// chosen so that it is tightest at target observations. With probability
// at least 1 − alpha (asymptotically) every interval mean ± half, at every
// n, holds the true mean: it may be read after every observation.
func ConfidenceSequence(n int64, sd, alpha float64, target int64) float64 {
	if n < 1 || !(alpha > 0 && alpha < 1) || target < 1 {
		return math.NaN()
	}
	la := -2 * math.Log(alpha)
	rho2 := (la + math.Log(la+1)) / float64(target)
	t := float64(n)
	return sd * math.Sqrt(2*(t*rho2+1)/(t*t*rho2)*math.Log(math.Sqrt(t*rho2+1)/alpha))
}

// MinArmUnits is how many units each arm needs before an effect gets an
// interval: below it the normal approximation the interval rests on is
// too rough (the first reads of a 10% holdout hold a handful of units).
const MinArmUnits = 30

// armEffect is the effect of the rules arm over the holdout arm on a
// unit-level outcome, from each arm's units, Σy and Σy²: the difference of
// the arms' means, and its always-valid interval, the confidence sequence
// of a mean over all n units whose per-unit variance is n·(s_r²/n_r +
// s_h²/n_h), the variance of the difference times n. Under the random
// assignment the difference estimates the rule set's effect. nil while an
// arm has fewer than MinArmUnits units.
func armEffect(nr, nh int64, syr, sy2r, syh, sy2h float64) (*float64, *Interval) {
	if nr < MinArmUnits || nh < MinArmUnits {
		return nil, nil
	}
	mr, mh := syr/float64(nr), syh/float64(nh)
	vr := max((sy2r-float64(nr)*mr*mr)/float64(nr-1), 0)
	vh := max((sy2h-float64(nh)*mh*mh)/float64(nh-1), 0)
	n := nr + nh
	sd := math.Sqrt(float64(n) * (vr/float64(nr) + vh/float64(nh)))
	d := mr - mh
	half := ConfidenceSequence(n, sd, DefaultCSAlpha, DefaultCSTarget)
	return &d, &Interval{Lo: d - half, Hi: d + half}
}

// srm is the chi-square test (1 degree of freedom) of k holdout units of
// n against share h.
func srm(k, n int64, h float64) *float64 {
	if n < 1 || !(h > 0 && h < 1) {
		return nil
	}
	e1, e2 := float64(n)*h, float64(n)*(1-h)
	d := float64(k) - e1
	stat := d*d/e1 + d*d/e2
	p := math.Erfc(math.Sqrt(stat / 2))
	return &p
}

// Randomised runs queries/analyze/effect_randomised.sql: one row per rule
// set version with a holdout, then one per rule of it with a holdout of its
// own, their effects, and whether each assignment checks out. metric names
// the verdict's metric (EffectConfig.Metric).
func Randomised(ctx context.Context, src Source, f Filter, metric string) ([]RandomisedRow, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/effect_randomised.sql"), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("query randomised effect: %w", err)
	}
	rows := []RandomisedRow{}
	err = eachRow(t, func(r *row) error {
		x := RandomisedRow{
			Ruleset:         r.need("ruleset"),
			Rule:            r.text("rule"),
			Holdout:         orNaN(r.float("holdout")),
			UnitsRules:      r.int("units_rules"),
			UnitsHoldout:    r.int("units_holdout"),
			MixedUnits:      r.int("mixed_units"),
			SessionsRules:   r.int("sessions_rules"),
			SessionsHoldout: r.int("sessions_holdout"),
		}
		units := x.UnitsRules + x.UnitsHoldout
		x.HoldoutShare = Rate(x.UnitsHoldout, units)
		x.SRMPValue = srm(x.UnitsHoldout, units, x.Holdout)
		x.AssignmentOK = true
		switch {
		case r.int("holdouts") > 1:
			x.AssignmentOK, x.Problem = false, "the sessions reported different holdout shares"
		case x.MixedUnits > 0:
			x.AssignmentOK, x.Problem = false, fmt.Sprintf("%d units were reported in both arms", x.MixedUnits)
		case x.SRMPValue != nil && *x.SRMPValue < SRMAlpha:
			x.AssignmentOK, x.Problem = false, fmt.Sprintf("sample-ratio mismatch: %d of %d units held out (%.1f%%), expected %.1f%% (p = %.2g)",
				x.UnitsHoldout, units, 100**x.HoldoutShare, 100*x.Holdout, *x.SRMPValue)
		}
		for _, m := range []struct{ name, col, k string }{
			{EffectOnSuccess, "success", "success"},
			{EffectOnFirstTry, "first_try", "first_try"},
			{EffectOnReplan, "replanned", "replanned"},
			{"tokens", "tokens", "tokens"},
		} {
			rm := RandomisedMetric{Metric: m.name, LowerIsBetter: m.name == EffectOnReplan || m.name == "tokens"}
			switch m.name {
			case "tokens":
				rm.SessionsRules, rm.SessionsHoldout = r.int("n_rules_tokens"), r.int("n_holdout_tokens")
				rm.Rules, rm.Holdout = Rate(r.int("sum_rules_tokens"), rm.SessionsRules), Rate(r.int("sum_holdout_tokens"), rm.SessionsHoldout)
			case EffectOnReplan:
				rm.SessionsRules, rm.SessionsHoldout = r.int("n_rules_replanned"), r.int("n_holdout_replanned")
				rm.Rules, rm.Holdout = Rate(r.int("k_rules_replanned"), rm.SessionsRules), Rate(r.int("k_holdout_replanned"), rm.SessionsHoldout)
			default: // over the sessions of known outcome
				rm.SessionsRules, rm.SessionsHoldout = r.int("n_rules_success"), r.int("n_holdout_success")
				rm.Rules, rm.Holdout = Rate(r.int("k_rules_"+m.k), rm.SessionsRules), Rate(r.int("k_holdout_"+m.k), rm.SessionsHoldout)
			}
			nr, nh := r.int("n_rules_u_"+m.col), r.int("n_holdout_u_"+m.col)
			rm.Units = nr + nh
			if x.AssignmentOK && nr > 0 && nh > 0 {
				rm.Effect, rm.CI = armEffect(nr, nh,
					orNaN(r.float("sy_rules_"+m.col)), orNaN(r.float("sy2_rules_"+m.col)),
					orNaN(r.float("sy_holdout_"+m.col)), orNaN(r.float("sy2_holdout_"+m.col)))
			}
			x.Metrics = append(x.Metrics, rm)
		}
		x.Verdict = randomisedVerdict(x, metric)
		rows = append(rows, x)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read randomised effect: %w", err)
	}
	return rows, nil
}

// randomisedVerdict is the verdict on metric: withheld when the
// assignment does not check out, undecided while the interval holds 0 (or
// there is none), else helpful or harmful.
func randomisedVerdict(x RandomisedRow, metric string) string {
	if !x.AssignmentOK {
		return "withheld"
	}
	for _, m := range x.Metrics {
		if m.Metric != metric {
			continue
		}
		if m.CI == nil || (m.CI.Lo <= 0 && m.CI.Hi >= 0) {
			return EffectUndecided
		}
		if (m.CI.Lo > 0) != m.LowerIsBetter {
			return EffectHelpful
		}
		return EffectHarmful
	}
	return EffectUndecided
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Guard decides what to publish in place of the rule set in force (version
// inForce) given the randomised effects rows and the key's history (newest
// first, as agent/rules.History gives it). When inForce's randomised
// verdict on metric is harmful, it returns the newest set of the history
// that is neither inForce nor judged harmful itself, with RolledBack
// recording the evidence (an empty set when there is none), and true;
// otherwise nil and false: publish what was learned. at stamps the
// rollback.
func Guard(rows []RandomisedRow, inForce string, history []ruleset.RuleSet, metric string, at time.Time) (*ruleset.RuleSet, bool) {
	harmful := map[string]RandomisedRow{}
	for _, r := range rows {
		if r.Rule == "" && r.Verdict == EffectHarmful {
			harmful[r.Ruleset] = r
		}
	}
	bad, ok := harmful[inForce]
	if inForce == "" || !ok {
		return nil, false
	}
	rb := &ruleset.Rollback{Version: inForce, Metric: metric, SessionsRules: bad.SessionsRules, SessionsHoldout: bad.SessionsHoldout, At: at.UTC()}
	for _, m := range bad.Metrics {
		if m.Metric == metric && m.Effect != nil && m.CI != nil {
			rb.Effect, rb.Lo, rb.Hi = *m.Effect, m.CI.Lo, m.CI.Hi
		}
	}
	for _, h := range history {
		if _, isBad := harmful[h.Version]; isBad || h.Version == inForce || len(h.Rules) == 0 {
			continue
		}
		good := h
		good.Rules = slices.Clone(h.Rules)
		good.RolledBack = rb
		good.GeneratedAt = at.UTC()
		return &good, true
	}
	return &ruleset.RuleSet{GeneratedAt: at.UTC(), RolledBack: rb, Rules: []ruleset.Rule{}}, true
}

// Guarded is a key the guard changed: the learned set it did not publish
// as learned, and the set to publish instead: RolledBack set when the set
// in force was harmful (Guard), Retired the rules it newly took out as
// harmful alone (Retire).
type Guarded struct {
	Key        string
	Learned    string
	Set        *ruleset.RuleSet
	RolledBack bool
	Retired    []ruleset.Retired
}

// GuardKeys runs the guard for each key of sets (a rule set key and the
// set learned for it; nil sets are left alone), with the key's history
// from history (newest first; the set in force first): Guard, which may
// replace the learned set with the last good one, then Retire on the set
// to publish, which takes out the rules harmful alone and carries on the
// set in force's retired list. It replaces the sets in place and returns
// the keys it changed, in key order.
func GuardKeys(rows []RandomisedRow, sets map[string]*ruleset.RuleSet, history func(key string) ([]ruleset.RuleSet, error), metric string, at time.Time) ([]Guarded, error) {
	var out []Guarded
	for _, key := range slices.Sorted(maps.Keys(sets)) {
		learned := sets[key]
		if learned == nil {
			continue
		}
		hist, err := history(key)
		if err != nil {
			return out, err
		}
		g := Guarded{Key: key, Learned: learned.Version, Set: learned}
		var inForce *ruleset.RuleSet
		if len(hist) > 0 {
			inForce = &hist[0]
			if rb, ok := Guard(rows, hist[0].Version, hist, metric, at); ok {
				g.Set, g.RolledBack = rb, true
			}
		}
		g.Retired = Retire(g.Set, inForce, rows, metric, at)
		if g.RolledBack || len(g.Retired) > 0 {
			sets[key] = g.Set
			out = append(out, g)
		}
	}
	return out, nil
}

// SetRows are the rows of whole rule sets, RuleRows those of single rules.
func SetRows(rows []RandomisedRow) []RandomisedRow {
	return slices.DeleteFunc(slices.Clone(rows), func(r RandomisedRow) bool { return r.Rule != "" })
}

// RuleRows are the rows of rules with a holdout of their own.
func RuleRows(rows []RandomisedRow) []RandomisedRow {
	return slices.DeleteFunc(slices.Clone(rows), func(r RandomisedRow) bool { return r.Rule == "" })
}

// Retire takes out of the learned set the rules that are harmful alone:
// those whose own randomised verdict (rows of rules, any version) is
// harmful on metric, and those already retired in the key's set in force
// (inForce, which may be nil). The rules left keep their order; Retired
// lists every retired rule, the newly retired with their evidence, and
// Version is recomputed when a rule went. It returns the newly retired.
func Retire(learned *ruleset.RuleSet, inForce *ruleset.RuleSet, rows []RandomisedRow, metric string, at time.Time) []ruleset.Retired {
	if learned == nil {
		return nil
	}
	retired := map[string]bool{}
	var list []ruleset.Retired
	if inForce != nil {
		for _, r := range inForce.Retired {
			if !retired[r.Rule] {
				retired[r.Rule] = true
				list = append(list, r)
			}
		}
	}
	for _, r := range learned.Retired {
		if !retired[r.Rule] {
			retired[r.Rule] = true
			list = append(list, r)
		}
	}
	var fresh []ruleset.Retired
	for _, x := range rows {
		if x.Rule == "" || x.Verdict != EffectHarmful || retired[x.Rule] {
			continue
		}
		rt := ruleset.Retired{Rule: x.Rule, Rollback: ruleset.Rollback{Version: x.Ruleset, Metric: metric,
			SessionsRules: x.SessionsRules, SessionsHoldout: x.SessionsHoldout, At: at.UTC()}}
		for _, m := range x.Metrics {
			if m.Metric == metric && m.Effect != nil && m.CI != nil {
				rt.Effect, rt.Lo, rt.Hi = *m.Effect, m.CI.Lo, m.CI.Hi
			}
		}
		retired[x.Rule] = true
		list = append(list, rt)
		fresh = append(fresh, rt)
	}
	learned.Retired = list
	kept := slices.DeleteFunc(slices.Clone(learned.Rules), func(r ruleset.Rule) bool { return retired[r.ID] })
	if len(kept) != len(learned.Rules) {
		learned.Rules = kept
		learned.Version = ruleSetVersion(kept)
	}
	return fresh
}
