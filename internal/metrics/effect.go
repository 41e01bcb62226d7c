package metrics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/evosignal/evosignal/queries"
)

// EffectRow compares, for one rule set version or one learned rule, the
// ended sessions that applied it (treated) with comparable ended sessions
// that did not (control): same group, same agent, same task type (unknown
// task type is a stratum of its own), started in the same window. Strata in
// which either arm is empty are left out (UnmatchedSessions counts their
// treated sessions); the arms are pooled over the others. Sessions of
// unknown outcome count in both arms and in Replan, but not in Success and
// FirstTrySuccess, whose denominators are TreatedSessions −
// TreatedUnknownOutcome and ControlSessions − ControlUnknownOutcome.
type EffectRow struct {
	Kind string `json:"kind"` // ruleset or rule
	ID   string `json:"id"`   // the rule set version or the rule id
	Group

	Strata            int64 `json:"strata"`             // (agent, task type) strata with both arms
	UnmatchedSessions int64 `json:"unmatched_sessions"` // treated sessions in strata without a control
	TreatedSessions   int64 `json:"treated_sessions"`
	ControlSessions   int64 `json:"control_sessions"`

	// Sessions of each arm with outcome unknown: left out of Success and
	// FirstTrySuccess.
	TreatedUnknownOutcome int64 `json:"treated_unknown_outcome"`
	ControlUnknownOutcome int64 `json:"control_unknown_outcome"`

	Success         EffectMetric `json:"success"`           // outcome success
	FirstTrySuccess EffectMetric `json:"first_try_success"` // success with no replan attempt
	Replan          EffectMetric `json:"replan"`            // at least one valid replan (lower is better)

	Verdict string `json:"verdict"` // helpful, harmful, nil or undecided, on the deciding metric
	Retire  bool   `json:"retire"`  // harmful or nil: a candidate for retirement
}

// EffectMetric is one proportion in both arms and their difference.
type EffectMetric struct {
	TreatedCount int64     `json:"treated_count"` // treated sessions with the outcome
	TreatedRate  *float64  `json:"treated_rate"`
	TreatedCI    *Interval `json:"treated_ci"` // Wilson 95%
	ControlCount int64     `json:"control_count"`
	ControlRate  *float64  `json:"control_rate"`
	ControlCI    *Interval `json:"control_ci"`
	Difference   *float64  `json:"difference"`    // treated_rate − control_rate
	DifferenceCI *Interval `json:"difference_ci"` // Newcombe 95%
}

// Verdicts of an effect.
const (
	EffectHelpful   = "helpful"
	EffectHarmful   = "harmful"
	EffectNil       = "nil"
	EffectUndecided = "undecided"
)

// Metrics a verdict can be decided on (-metric).
const (
	EffectOnSuccess  = "success"
	EffectOnFirstTry = "first_try_success"
	EffectOnReplan   = "replan"
)

// EffectMetrics lists the metrics a verdict can be decided on.
var EffectMetrics = []string{EffectOnSuccess, EffectOnFirstTry, EffectOnReplan}

// EffectConfig sets how the verdicts are reached.
type EffectConfig struct {
	// MinSessions is how many sessions each arm needs before an effect can
	// be declared nil.
	MinSessions int64
	// NilMargin: an effect is nil when the difference interval lies inside
	// [−NilMargin, +NilMargin] (with enough sessions).
	NilMargin float64
	// Metric decides the verdict: success, first_try_success or replan (for
	// which a lower rate is the good side).
	Metric string
}

// DefaultEffectConfig returns the defaults the analyze command documents.
func DefaultEffectConfig() EffectConfig {
	return EffectConfig{MinSessions: 200, NilMargin: 0.02, Metric: EffectOnSuccess}
}

// Validate reports every problem at once.
func (c EffectConfig) Validate() error {
	var errs []error
	if c.MinSessions < 1 {
		errs = append(errs, fmt.Errorf("min sessions %d must be at least 1", c.MinSessions))
	}
	if !(c.NilMargin > 0 && c.NilMargin < 1) {
		errs = append(errs, fmt.Errorf("nil margin %v must be in (0, 1)", c.NilMargin))
	}
	if !slices.Contains(EffectMetrics, c.Metric) {
		errs = append(errs, fmt.Errorf("metric %q: want one of %s", c.Metric, strings.Join(EffectMetrics, ", ")))
	}
	return errors.Join(errs...)
}

// EffectResult is the effect analysis: a row per rule set version and rule
// (and group), rule sets first, and notes.
type EffectResult struct {
	Rows  []EffectRow
	Notes []string
}

// Effect runs queries/analyze/effect.sql for f and judges every row by c.
func Effect(ctx context.Context, src Source, f Filter, c EffectConfig) (*EffectResult, error) {
	if err := errors.Join(f.Validate(), c.Validate()); err != nil {
		return nil, err
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/effect.sql"), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("query effect: %w", err)
	}
	res := &EffectResult{Rows: []EffectRow{}}
	var unmatched, unknown int64
	err = eachRow(t, func(r *row) error {
		row := EffectRow{
			Kind:              r.text("kind"),
			ID:                r.text("id"),
			Group:             r.group(false),
			Strata:            r.int("strata"),
			UnmatchedSessions: r.int("unmatched_sessions"),
			TreatedSessions:   r.int("treated_sessions"),
			ControlSessions:   r.int("control_sessions"),

			TreatedUnknownOutcome: r.int("treated_unknown"),
			ControlUnknownOutcome: r.int("control_unknown"),
		}
		nt, nc := row.ratedArms()
		row.Success = newEffectMetric(r.int("treated_successes"), nt, r.int("control_successes"), nc)
		row.FirstTrySuccess = newEffectMetric(r.int("treated_first_try"), nt, r.int("control_first_try"), nc)
		row.Replan = newEffectMetric(r.int("treated_replanned"), row.TreatedSessions, r.int("control_replanned"), row.ControlSessions)
		row.Verdict = effectVerdict(row, c)
		row.Retire = row.Verdict == EffectHarmful || row.Verdict == EffectNil
		unmatched += row.UnmatchedSessions
		unknown += row.TreatedUnknownOutcome + row.ControlUnknownOutcome
		res.Rows = append(res.Rows, row)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read effect: %w", err)
	}
	if len(res.Rows) == 0 {
		res.Notes = append(res.Notes, "no ended session in the window applied a rule set or a rule")
	}
	if unmatched > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d treated session(s) (summed over rows) had no comparable session without the rule set or rule "+
			"(same agent and task type) and are left out (unmatched_sessions)", unmatched))
	}
	if unknown > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d session(s) (summed over rows and arms) have outcome unknown (no evidence of how they went): "+
			"left out of the success and first-try success rates, counted in the replan rate (fields treated_unknown_outcome, control_unknown_outcome)", unknown))
	}
	return res, nil
}

// ratedArms are the arms' sessions of known outcome: the denominators of
// Success and FirstTrySuccess.
func (row EffectRow) ratedArms() (treated, control int64) {
	return row.TreatedSessions - row.TreatedUnknownOutcome, row.ControlSessions - row.ControlUnknownOutcome
}

func newEffectMetric(kt, nt, kc, nc int64) EffectMetric {
	m := EffectMetric{TreatedCount: kt, ControlCount: kc}
	m.TreatedRate, m.TreatedCI = rateWithCI(kt, nt)
	m.ControlRate, m.ControlCI = rateWithCI(kc, nc)
	if m.TreatedRate != nil && m.ControlRate != nil {
		d := *m.TreatedRate - *m.ControlRate
		m.Difference = &d
		m.DifferenceCI = NewcombeDiff(kt, nt, kc, nc, Z95)
	}
	return m
}

// effectVerdict judges the difference interval of the deciding metric, turned so
// that positive is good: harmful when it lies entirely below 0; nil when
// both arms have MinSessions and it lies inside ±NilMargin (an effect too
// small to matter, even if it is reliably not 0; the sessions are those the
// metric counts, of known outcome for the success metrics); helpful when it lies
// entirely above 0; undecided otherwise.
func effectVerdict(row EffectRow, c EffectConfig) string {
	m, sign := row.Success, 1.0
	nt, nc := row.ratedArms() // the deciding metric's sessions in each arm
	switch c.Metric {
	case EffectOnFirstTry:
		m = row.FirstTrySuccess
	case EffectOnReplan:
		m, sign = row.Replan, -1
		nt, nc = row.TreatedSessions, row.ControlSessions
	}
	ci := m.DifferenceCI
	if ci == nil {
		return EffectUndecided
	}
	lo, hi := ci.Lo, ci.Hi
	if sign < 0 {
		lo, hi = -ci.Hi, -ci.Lo
	}
	switch {
	case hi < 0:
		return EffectHarmful
	case nt >= c.MinSessions && nc >= c.MinSessions &&
		lo >= -c.NilMargin && hi <= c.NilMargin:
		return EffectNil
	case lo > 0:
		return EffectHelpful
	}
	return EffectUndecided
}
