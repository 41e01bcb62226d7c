package metrics

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/evosignal/evosignal/queries"
)

// SeveralReplans is the number of valid replans from which a successful
// session counts as succeeding "after several" in ReplanComparison
// (replans_comparison.sql holds the same constant).
const SeveralReplans = 2

// ReplanComparison sets the ended sessions that succeeded without a valid
// replan (no_replan) against those that succeeded after SeveralReplans or
// more (several), over every session of the filter (not per group): which
// task types, tool hints, stripped hints and replan triggers occur more in
// one than in the other. A session of unknown outcome is in neither arm:
// nothing shows that it succeeded.
type ReplanComparison struct {
	SeveralMinReplans int64           `json:"several_min_replans"`
	NoReplanSessions  int64           `json:"no_replan_sessions"`
	SeveralSessions   int64           `json:"several_sessions"`
	Features          []ReplanFeature `json:"features"` // largest |difference| first
}

// ReplanFeature is how often one feature occurs in each arm.
type ReplanFeature struct {
	// Kind is task_type (the session's task type; Value null when
	// unknown), hint (a tool hint in one of its plan versions),
	// stripped_hint (a hint stripped from one of its plans) or trigger (the
	// trigger of one of its update_task_plan calls, valid or not).
	Kind          string   `json:"kind"`
	Value         *string  `json:"value"`
	NoReplan      int64    `json:"no_replan"` // sessions of the no_replan arm with the feature
	NoReplanShare *float64 `json:"no_replan_share"`
	Several       int64    `json:"several"`
	SeveralShare  *float64 `json:"several_share"`
	// Difference is several_share − no_replan_share, with Newcombe's 95%
	// interval; nil when an arm is empty.
	Difference   *float64  `json:"difference"`
	DifferenceCI *Interval `json:"difference_ci"`
}

// CompareReplans runs queries/analyze/replans_comparison.sql for f: the
// features of the sessions that succeeded without a valid replan against
// those that succeeded after several.
func CompareReplans(ctx context.Context, src Source, f Filter) (ReplanComparison, error) {
	c := ReplanComparison{SeveralMinReplans: SeveralReplans, Features: []ReplanFeature{}}
	t, err := src.Query(ctx, queries.MustExpand("analyze/replans_comparison.sql"), f.Args()...)
	if err != nil {
		return c, fmt.Errorf("query replans comparison: %w", err)
	}
	err = eachRow(t, func(r *row) error {
		c.NoReplanSessions, c.SeveralSessions = r.int("no_replan_sessions"), r.int("several_sessions")
		ft := ReplanFeature{Kind: r.text("kind"), Value: r.str("value"),
			NoReplan: r.int("no_replan"), Several: r.int("several")}
		ft.NoReplanShare = Rate(ft.NoReplan, c.NoReplanSessions)
		ft.SeveralShare = Rate(ft.Several, c.SeveralSessions)
		if ft.NoReplanShare != nil && ft.SeveralShare != nil {
			d := *ft.SeveralShare - *ft.NoReplanShare
			ft.Difference = &d
			ft.DifferenceCI = NewcombeDiff(ft.Several, c.SeveralSessions, ft.NoReplan, c.NoReplanSessions, Z95)
		}
		c.Features = append(c.Features, ft)
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("read replans comparison: %w", err)
	}
	slices.SortStableFunc(c.Features, func(a, b ReplanFeature) int {
		return cmp.Compare(absOrNaN(b.Difference), absOrNaN(a.Difference))
	})
	return c, nil
}

// absOrNaN orders undefined differences last when sorting by size
// (cmp.Compare puts NaN first, and the comparison above is reversed).
func absOrNaN(d *float64) float64 {
	if d == nil {
		return math.NaN()
	}
	return math.Abs(*d)
}
