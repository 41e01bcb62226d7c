package metrics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/evosignal/evosignal/internal/taxonomy"
)

// HintsConfig tunes Hints.
type HintsConfig struct {
	// MinCalls is the support a row needs to be ranked by its evidence:
	// rows with fewer real calls come after every row with enough.
	MinCalls int64
}

// DefaultHintsConfig returns the documented defaults (-min-calls 30).
func DefaultHintsConfig() HintsConfig { return HintsConfig{MinCalls: 30} }

// Validate reports every problem at once.
func (c HintsConfig) Validate() error {
	var errs []error
	if c.MinCalls < 1 {
		errs = append(errs, fmt.Errorf("-min-calls %d: want at least 1", c.MinCalls))
	}
	return errors.Join(errs...)
}

// HintRow is one row of analyze hints: the outcomes of the real tool calls
// made under one tool hint (in one group). Rates are nil where their
// denominator is 0. docs/analyze.md documents every field.
type HintRow struct {
	Group
	Hint *string `json:"hint"` // nil: calls (and tasks) without a hint

	Calls       int64     `json:"calls"`
	Failed      int64     `json:"failed"`
	FailureRate *float64  `json:"failure_rate"`
	FailureCI   *Interval `json:"failure_ci"` // 95% Wilson interval of failure_rate

	// The baseline: the group's calls under every other hint (no hint
	// included).
	OtherCalls       int64    `json:"other_calls"`
	OtherFailed      int64    `json:"other_failed"`
	OtherFailureRate *float64 `json:"other_failure_rate"`
	// Lift is failure_rate / other_failure_rate.
	Lift   *float64 `json:"lift"`
	PValue *float64 `json:"p_value"` // two-sided, failed/ok × this hint/others
	Test   *string  `json:"test"`    // fisher_exact or chi_square_yates
	// Supported: calls ≥ the -min-calls threshold; supported rows are
	// ranked first.
	Supported bool `json:"supported"`

	// Followed calls used the hinted tool; deviated ones another.
	Followed            int64    `json:"followed"`
	FollowedRate        *float64 `json:"followed_rate"`
	FollowedFailureRate *float64 `json:"followed_failure_rate"`
	Deviated            int64    `json:"deviated"`
	DeviatedFailureRate *float64 `json:"deviated_failure_rate"`

	// Planned: tasks that entered a plan with the hint; dropped: those a
	// valid replan dropped; stripped: times the hint was removed as
	// unavailable (hallucinated).
	Planned  int64    `json:"planned"`
	Dropped  int64    `json:"dropped"`
	DropRate *float64 `json:"drop_rate"`
	Stripped int64    `json:"stripped"`
}

// Hints runs queries/analyze/hints.sql and adds the statistics. Rows come
// sorted by evidence, worst hint first: supported rows before the others,
// then by lift (descending; a failing hint against a baseline that never
// fails counts as infinite lift), p-value, calls, group and hint.
func Hints(ctx context.Context, src Source, f Filter, tax *taxonomy.Taxonomy, cfg HintsConfig) ([]HintRow, error) {
	if err := errors.Join(f.Validate(), cfg.Validate()); err != nil {
		return nil, err
	}
	t, err := runClassifying(ctx, src, "analyze/hints.sql", f, tax)
	if err != nil {
		return nil, err
	}
	rows := make([]HintRow, 0, len(t.Rows))
	err = eachRow(t, func(r *row) error {
		rows = append(rows, hintRow(r, cfg))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read hints: %w", err)
	}
	sortHints(rows)
	return rows, nil
}

func hintRow(c *row, cfg HintsConfig) HintRow {
	r := HintRow{
		Group:       c.group(true),
		Hint:        c.str("hint"),
		Calls:       c.int("calls"),
		Failed:      c.int("failed"),
		OtherCalls:  c.int("other_calls"),
		OtherFailed: c.int("other_failed"),
		Followed:    c.int("followed"),
		Deviated:    c.int("deviated"),
		Planned:     c.int("planned"),
		Dropped:     c.int("dropped"),
		Stripped:    c.int("stripped"),
	}
	r.FailureRate = Rate(r.Failed, r.Calls)
	r.FailureCI = Wilson(r.Failed, r.Calls, Z95)
	r.OtherFailureRate = Rate(r.OtherFailed, r.OtherCalls)
	if r.FailureRate != nil && r.OtherFailureRate != nil && *r.OtherFailureRate > 0 {
		l := *r.FailureRate / *r.OtherFailureRate
		r.Lift = &l
	}
	if p, test := Test2x2(r.Failed, r.Calls-r.Failed, r.OtherFailed, r.OtherCalls-r.OtherFailed); p != nil {
		r.PValue, r.Test = p, &test
	}
	r.Supported = r.Calls >= cfg.MinCalls
	if r.Hint != nil {
		r.FollowedRate = Rate(r.Followed, r.Calls)
		r.FollowedFailureRate = Rate(c.int("followed_failed"), r.Followed)
		r.DeviatedFailureRate = Rate(c.int("deviated_failed"), r.Deviated)
	}
	r.DropRate = Rate(r.Dropped, r.Planned)
	return r
}

// liftKey orders rows by lift, where a lift that is undefined because the
// baseline never fails is +Inf (the hint fails, nothing else does) or 1
// (nothing fails), and a row without calls or without a baseline is -Inf.
func (r HintRow) liftKey() float64 {
	switch {
	case r.Lift != nil:
		return *r.Lift
	case r.FailureRate == nil || r.OtherFailureRate == nil:
		return math.Inf(-1)
	case *r.FailureRate > 0:
		return math.Inf(1)
	default:
		return 1
	}
}

func sortHints(rows []HintRow) {
	slices.SortStableFunc(rows, func(a, b HintRow) int {
		if a.Supported != b.Supported {
			if a.Supported {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.liftKey(), a.liftKey()); c != 0 {
			return c
		}
		if c := cmpNilLast(a.PValue, b.PValue); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Calls, a.Calls); c != 0 {
			return c
		}
		if c := cmp.Compare(a.key(), b.key()); c != 0 {
			return c
		}
		return cmpNilLast(a.Hint, b.Hint)
	})
}

// cmpNilLast compares two optional values, nil after every value.
func cmpNilLast[T cmp.Ordered](a, b *T) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}
