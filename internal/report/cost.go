package report

import (
	"context"
	"fmt"

	"github.com/evosignal/evosignal/internal/metrics"
)

// Cost is what sessions cost (analyze cost): per outcome class in the
// window and the one before, per plan segment in the window, and per rule
// set over the curve's range, where what replanning costs falls as rules
// take effect.
type Cost struct {
	Outcomes         []metrics.CostOutcomeRow `json:"outcomes"`
	PreviousOutcomes []metrics.CostOutcomeRow `json:"previous_outcomes"`
	Segments         []metrics.CostSegmentRow `json:"segments"`
	ByRuleset        []RulesetCost            `json:"by_ruleset"`
}

// RulesetCost is what the ended sessions that loaded one rule set (or none)
// cost per session, over the curve's range: all their model calls and
// tokens, and the part spent after a session's first replan (the segments
// between_replans and after_last_replan), over all of them.
type RulesetCost struct {
	Ruleset                    *string  `json:"ruleset"` // null: no rule set
	Sessions                   int64    `json:"sessions"`
	ModelCallsPerSession       *float64 `json:"model_calls_per_session"`
	ReplanModelCallsPerSession *float64 `json:"replan_model_calls_per_session"`
	TokensPerSession           *float64 `json:"tokens_per_session"`
	ReplanTokensPerSession     *float64 `json:"replan_tokens_per_session"`
}

// Stuck is where agents get stuck (analyze stuck): every state in the
// window and the one before, a few example sessions of the window, and the
// visible replan triggers of the window with the rate at which the
// replanned sessions then succeeded.
type Stuck struct {
	States   []metrics.StuckRow     `json:"states"`
	Previous []metrics.StuckRow     `json:"previous"`
	Examples []metrics.StuckExample `json:"examples"`
	Triggers []metrics.TriggerRow   `json:"triggers"`
}

// stuckExamples is how many example sessions the report shows per state.
const stuckExamples = 3

func costSection(ctx context.Context, src metrics.Source, cur, prev, curve metrics.Filter) (Cost, error) {
	var c Cost
	var err error
	if c.Outcomes, err = metrics.CostByOutcome(ctx, src, cur); err != nil {
		return c, fmt.Errorf("cost of the window: %w", err)
	}
	if c.PreviousOutcomes, err = metrics.CostByOutcome(ctx, src, prev); err != nil {
		return c, fmt.Errorf("cost of the previous window: %w", err)
	}
	if c.Segments, err = metrics.CostBySegment(ctx, src, cur); err != nil {
		return c, fmt.Errorf("cost per plan segment: %w", err)
	}
	curve.By = []string{"ruleset"}
	segs, err := metrics.CostBySegment(ctx, src, curve)
	if err != nil {
		return c, fmt.Errorf("cost per rule set: %w", err)
	}
	c.ByRuleset = rulesetCosts(segs)
	return c, nil
}

// rulesetCosts folds the segment rows of each rule set into its cost per
// session, in the rows' order.
func rulesetCosts(segs []metrics.CostSegmentRow) []RulesetCost {
	var order []string
	sets := map[string]*rulesetCost{}
	for _, r := range segs {
		k, v := "\x00none", r.Ruleset.Value()
		if v != nil {
			k = *v
		}
		if sets[k] == nil {
			sets[k] = &rulesetCost{version: v}
			order = append(order, k)
		}
		sets[k].cost.Add(r)
	}
	out := make([]RulesetCost, 0, len(order))
	for _, k := range order {
		x, c := sets[k], sets[k].cost
		out = append(out, RulesetCost{Ruleset: x.version, Sessions: c.Sessions,
			ModelCallsPerSession: metrics.Rate(c.ModelCalls, c.Sessions), ReplanModelCallsPerSession: metrics.Rate(c.ReplanModelCalls, c.Sessions),
			TokensPerSession: metrics.Rate(c.Tokens, c.Sessions), ReplanTokensPerSession: metrics.Rate(c.ReplanTokens, c.Sessions)})
	}
	return out
}

// rulesetCost is one rule set's version (nil: none) and its segments' cost.
type rulesetCost struct {
	version *string
	cost    metrics.ReplanCost
}

func stuckSection(ctx context.Context, src metrics.Source, cur, prev metrics.Filter) (Stuck, error) {
	var s Stuck
	var err error
	if s.States, err = metrics.Stuck(ctx, src, cur); err != nil {
		return s, fmt.Errorf("stuck states of the window: %w", err)
	}
	if s.Previous, err = metrics.Stuck(ctx, src, prev); err != nil {
		return s, fmt.Errorf("stuck states of the previous window: %w", err)
	}
	if s.Examples, err = metrics.StuckExamples(ctx, src, cur, stuckExamples); err != nil {
		return s, fmt.Errorf("stuck examples: %w", err)
	}
	if s.Triggers, err = metrics.ReplanTriggers(ctx, src, cur); err != nil {
		return s, fmt.Errorf("replan triggers: %w", err)
	}
	return s, nil
}

// outcomeClassText names an outcome class for a reader.
func outcomeClassText(c string) string {
	switch c {
	case "first_try_success":
		return "First-try success"
	case "success_after_replans":
		return "Success after replans"
	case "failure":
		return "Failure"
	}
	return c
}

// segmentText names a plan segment for a reader.
func segmentText(s string) string {
	switch s {
	case "no_replan":
		return "No replan (whole session)"
	case "before_first_replan":
		return "Before the first replan"
	case "between_replans":
		return "Between replans"
	case "after_last_replan":
		return "After the last replan"
	}
	return s
}

// num0 writes a mean with no decimals, "–" for none.
func num0(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f", *v)
}

// meanCI writes a mean's interval with no decimals, "" for none.
func meanCI(ci *metrics.Interval) string {
	if ci == nil {
		return ""
	}
	return fmt.Sprintf("[%.0f, %.0f]", ci.Lo, ci.Hi)
}

// byOutcome finds a class's row, nil when the window has none.
func byOutcome(rows []metrics.CostOutcomeRow, class string) *metrics.CostOutcomeRow {
	for i := range rows {
		if rows[i].OutcomeClass == class {
			return &rows[i]
		}
	}
	return nil
}

// stateText names a stuck state for a reader.
func stateText(s string) string {
	switch s {
	case "loop":
		return "Loop (the same failing call again)"
	case "churn":
		return "Plan churn (a replan with no tool call since the last plan)"
	case "depth_limit":
		return "Depth limit reached"
	case "soft_cap":
		return "Soft cap reached"
	case "pending_at_end":
		return "Ended with pending tasks"
	}
	return s
}

// meanCI2 writes a mean's interval with two decimals, "" for none.
func meanCI2(ci *metrics.Interval) string {
	if ci == nil {
		return ""
	}
	return fmt.Sprintf("[%.2f, %.2f]", ci.Lo, ci.Hi)
}

// seconds is a mean in milliseconds as seconds.
func seconds(ms *float64) *float64 {
	if ms == nil {
		return nil
	}
	s := *ms / 1000
	return &s
}

// rulesetName is a rule set version, or "no rule set".
func rulesetName(v *string) string {
	if v == nil {
		return "no rule set"
	}
	return *v
}

// randomisedOf is the randomised row's metric named (EffectConfig.Metric).
func randomisedOf(x metrics.RandomisedRow, metric string) metrics.RandomisedMetric {
	for _, m := range x.Metrics {
		if m.Metric == metric {
			return m
		}
	}
	return metrics.RandomisedMetric{Metric: metric}
}

// assignmentText says whether a randomised effect's assignment checks out.
func assignmentText(x metrics.RandomisedRow) string {
	if x.AssignmentOK {
		if x.SRMPValue != nil {
			return fmt.Sprintf("checks out (p = %.2g)", *x.SRMPValue)
		}
		return "checks out"
	}
	return "broken: " + x.Problem
}
