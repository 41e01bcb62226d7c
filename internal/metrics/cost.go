package metrics

import (
	"context"
	"fmt"
	"math"
	"math/big"

	"github.com/evosignal/evosignal/queries"
)

// Cost views (analyze cost -view).
const (
	CostOutcomes  = "outcomes"
	CostSegments  = "segments"
	CostAfterFail = "after-failure"
)

// CostViews are the views of analyze cost, the default first.
var CostViews = []string{CostOutcomes, CostSegments, CostAfterFail}

// CostOutcomeRow is what the ended sessions of one outcome class (and
// group) cost (queries/analyze/cost_outcomes.sql): per session, its model
// calls, tokens (input + output), real tool calls and time, each as a sum
// and a mean with its 95% interval (Student's t over the sessions). Model
// calls are over ModelCallsSessions, the sessions with any (an agent that
// reports none is not one that made none); tokens over TokensSessions, the
// sessions whose model calls reported any.
type CostOutcomeRow struct {
	Group
	OutcomeClass string `json:"outcome_class"` // first_try_success, success_after_replans, failure
	Sessions     int64  `json:"sessions"`

	ModelCallsSessions int64     `json:"model_calls_sessions"`
	ModelCalls         int64     `json:"model_calls"`
	ModelCallsMean     *float64  `json:"model_calls_mean"`
	ModelCallsMeanCI   *Interval `json:"model_calls_mean_ci"`

	TokensSessions int64     `json:"tokens_sessions"`
	Tokens         *int64    `json:"tokens"`
	TokensMean     *float64  `json:"tokens_mean"`
	TokensMeanCI   *Interval `json:"tokens_mean_ci"`
	InputTokens    *int64    `json:"input_tokens"` // cached ones included
	OutputTokens   *int64    `json:"output_tokens"`
	CachedTokens   *int64    `json:"cached_input_tokens"`

	RealToolCalls       int64     `json:"real_tool_calls"`
	RealToolCallsMean   *float64  `json:"real_tool_calls_mean"`
	RealToolCallsMeanCI *Interval `json:"real_tool_calls_mean_ci"`

	DurationMS       int64     `json:"duration_ms"`
	DurationMSMean   *float64  `json:"duration_ms_mean"`
	DurationMSMeanCI *Interval `json:"duration_ms_mean_ci"`
}

// CostSegmentRow is what one plan segment of the ended sessions (of a
// group) spent (queries/analyze/cost_segments.sql), in sums and per
// session with the segment.
type CostSegmentRow struct {
	Group
	Segment  string `json:"segment"` // no_replan, before_first_replan, between_replans, after_last_replan
	Sessions int64  `json:"sessions"`
	Segments int64  `json:"segments"`

	ModelCalls        int64  `json:"model_calls"`
	CallsWithTokens   int64  `json:"calls_with_tokens"`
	InputTokens       *int64 `json:"input_tokens"`
	OutputTokens      *int64 `json:"output_tokens"`
	CachedInputTokens *int64 `json:"cached_input_tokens"`
	RealToolCalls     int64  `json:"real_tool_calls"`
	FailedToolCalls   int64  `json:"failed_real_tool_calls"`
	DurationMS        int64  `json:"duration_ms"`

	ModelCallsPerSession    *float64 `json:"model_calls_per_session"`
	TokensPerSession        *float64 `json:"tokens_per_session"` // input + output, over the sessions
	RealToolCallsPerSession *float64 `json:"real_tool_calls_per_session"`
	DurationMSPerSession    *float64 `json:"duration_ms_per_session"`
}

// Tokens is the row's input and output tokens, 0 where none were
// reported.
func (r CostSegmentRow) Tokens() int64 { return orZero(r.InputTokens) + orZero(r.OutputTokens) }

// AfterFirstReplan reports whether the segment comes after a session's
// first replan: what replanning cost the session.
func (r CostSegmentRow) AfterFirstReplan() bool {
	return r.Segment != "no_replan" && r.Segment != "before_first_replan"
}

// ReplanCost is what the ended sessions of segment rows spent, all in all
// and after their first replan (AfterFirstReplan), with the sessions they
// are over (each session has one no_replan or before_first_replan row).
type ReplanCost struct {
	Sessions, ModelCalls, ReplanModelCalls, Tokens, ReplanTokens int64
}

// Add adds one segment row.
func (c *ReplanCost) Add(r CostSegmentRow) {
	c.ModelCalls += r.ModelCalls
	c.Tokens += r.Tokens()
	if r.AfterFirstReplan() {
		c.ReplanModelCalls += r.ModelCalls
		c.ReplanTokens += r.Tokens()
	} else {
		c.Sessions += r.Sessions
	}
}

// CostAfterFailureRow is what followed the failed hinted calls of one hint
// and next step (and group), and what recovering cost
// (queries/analyze/cost_after_failure.sql). The costs are over the
// recovered failures; the session success rate over Sessions −
// UnknownOutcome.
type CostAfterFailureRow struct {
	Group
	Hint           string    `json:"hint"`
	NextStep       string    `json:"next_step"` // replan, retry, switch, stop
	Failures       int64     `json:"failures"`
	Recovered      int64     `json:"recovered"`
	RecoveryRate   *float64  `json:"recovery_rate"`
	RecoveryRateCI *Interval `json:"recovery_rate_ci"`
	Sessions       int64     `json:"sessions"`
	UnknownOutcome int64     `json:"unknown_outcome"`
	Successes      int64     `json:"successes"`
	SuccessRate    *float64  `json:"success_rate"`
	SuccessRateCI  *Interval `json:"success_rate_ci"`

	ModelCallsFailures int64     `json:"model_calls_failures"` // recovered failures in sessions with model calls
	ModelCalls         int64     `json:"model_calls"`
	ModelCallsMean     *float64  `json:"model_calls_mean"`
	ModelCallsMeanCI   *Interval `json:"model_calls_mean_ci"`

	TokensFailures int64     `json:"tokens_failures"`
	Tokens         *int64    `json:"tokens"`
	TokensMean     *float64  `json:"tokens_mean"`
	TokensMeanCI   *Interval `json:"tokens_mean_ci"`

	RealToolCalls       int64     `json:"real_tool_calls"`
	RealToolCallsMean   *float64  `json:"real_tool_calls_mean"`
	RealToolCallsMeanCI *Interval `json:"real_tool_calls_mean_ci"`

	DurationMS       int64     `json:"duration_ms"`
	DurationMSMean   *float64  `json:"duration_ms_mean"`
	DurationMSMeanCI *Interval `json:"duration_ms_mean_ci"`
}

// mean reads the <name>_sum and <name>_sq columns of a row (the sum of n
// observations and of their squares, exact integers): the mean and its
// interval. The variance is computed exactly, in integers, before the one
// division, so that no order of summation changes a digit.
func (r *row) mean(name string, n int64) (*float64, *Interval) {
	sum, sq := r.big(name+"_sum"), r.big(name+"_sq")
	if n < 1 || sum == nil || sq == nil {
		return nil, nil
	}
	m, _ := new(big.Rat).SetFrac(sum, big.NewInt(n)).Float64()
	if n < 2 {
		return &m, nil
	}
	// s² = (n·Σx² − (Σx)²) / (n(n−1))
	num := new(big.Int).Sub(new(big.Int).Mul(big.NewInt(n), sq), new(big.Int).Mul(sum, sum))
	v, _ := new(big.Rat).SetFrac(num, new(big.Int).Mul(big.NewInt(n), big.NewInt(n-1))).Float64()
	sd := math.Sqrt(max(v, 0))
	return &m, MeanCI(&m, &sd, n)
}

// nint reads an integer column that may be NULL (nil).
func (r *row) nint(col string) *int64 {
	if r.cell(col) == nil {
		return nil
	}
	n := r.int(col)
	return &n
}

// CostByOutcome runs queries/analyze/cost_outcomes.sql.
func CostByOutcome(ctx context.Context, src Source, f Filter) ([]CostOutcomeRow, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/cost_outcomes.sql"), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("query cost by outcome: %w", err)
	}
	rows := []CostOutcomeRow{}
	err = eachRow(t, func(r *row) error {
		x := CostOutcomeRow{
			Group:              r.group(false),
			OutcomeClass:       r.need("outcome_class"),
			Sessions:           r.int("sessions"),
			ModelCallsSessions: r.int("model_calls_sessions"),
			ModelCalls:         r.int("model_calls_sum"),
			TokensSessions:     r.int("tokens_sessions"),
			Tokens:             r.nint("tokens_sum"),
			InputTokens:        r.nint("input_tokens_sum"),
			OutputTokens:       r.nint("output_tokens_sum"),
			CachedTokens:       r.nint("cached_input_tokens_sum"),
			RealToolCalls:      r.int("real_tool_calls_sum"),
			DurationMS:         r.int("duration_ms_sum"),
		}
		x.ModelCallsMean, x.ModelCallsMeanCI = r.mean("model_calls", x.ModelCallsSessions)
		x.TokensMean, x.TokensMeanCI = r.mean("tokens", x.TokensSessions)
		x.RealToolCallsMean, x.RealToolCallsMeanCI = r.mean("real_tool_calls", x.Sessions)
		x.DurationMSMean, x.DurationMSMeanCI = r.mean("duration_ms", x.Sessions)
		rows = append(rows, x)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read cost by outcome: %w", err)
	}
	return rows, nil
}

// CostBySegment runs queries/analyze/cost_segments.sql.
func CostBySegment(ctx context.Context, src Source, f Filter) ([]CostSegmentRow, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/cost_segments.sql"), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("query cost by segment: %w", err)
	}
	rows := []CostSegmentRow{}
	err = eachRow(t, func(r *row) error {
		x := CostSegmentRow{
			Group:             r.group(false),
			Segment:           r.need("segment"),
			Sessions:          r.int("sessions"),
			Segments:          r.int("segments"),
			ModelCalls:        r.int("model_calls"),
			CallsWithTokens:   r.int("calls_with_tokens"),
			InputTokens:       r.nint("input_tokens"),
			OutputTokens:      r.nint("output_tokens"),
			CachedInputTokens: r.nint("cached_input_tokens"),
			RealToolCalls:     r.int("real_tool_calls"),
			FailedToolCalls:   r.int("failed_real_tool_calls"),
			DurationMS:        r.int("duration_ms"),
		}
		x.ModelCallsPerSession = Rate(x.ModelCalls, x.Sessions)
		if x.InputTokens != nil || x.OutputTokens != nil {
			x.TokensPerSession = Rate(x.Tokens(), x.Sessions)
		}
		x.RealToolCallsPerSession = Rate(x.RealToolCalls, x.Sessions)
		x.DurationMSPerSession = Rate(x.DurationMS, x.Sessions)
		rows = append(rows, x)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read cost by segment: %w", err)
	}
	return rows, nil
}

// CostAfterFailure runs queries/analyze/cost_after_failure.sql.
func CostAfterFailure(ctx context.Context, src Source, f Filter) ([]CostAfterFailureRow, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/cost_after_failure.sql"), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("query cost after failure: %w", err)
	}
	rows := []CostAfterFailureRow{}
	err = eachRow(t, func(r *row) error {
		x := CostAfterFailureRow{
			Group:              r.group(false),
			Hint:               r.need("hint"),
			NextStep:           r.need("next_step"),
			Failures:           r.int("failures"),
			Recovered:          r.int("recovered"),
			Sessions:           r.int("sessions"),
			UnknownOutcome:     r.int("unknown_outcome"),
			Successes:          r.int("successes"),
			ModelCalls:         r.int("model_calls_sum"),
			TokensFailures:     r.int("tokens_failures"),
			ModelCallsFailures: r.int("model_calls_failures"),
			Tokens:             r.nint("tokens_sum"),
			RealToolCalls:      r.int("real_tool_calls_sum"),
			DurationMS:         r.int("duration_ms_sum"),
		}
		x.RecoveryRate, x.RecoveryRateCI = rateWithCI(x.Recovered, x.Failures)
		x.SuccessRate, x.SuccessRateCI = rateWithCI(x.Successes, x.Sessions-x.UnknownOutcome)
		x.ModelCallsMean, x.ModelCallsMeanCI = r.mean("model_calls", x.ModelCallsFailures)
		x.TokensMean, x.TokensMeanCI = r.mean("tokens", x.TokensFailures)
		x.RealToolCallsMean, x.RealToolCallsMeanCI = r.mean("real_tool_calls", x.Recovered)
		x.DurationMSMean, x.DurationMSMeanCI = r.mean("duration_ms", x.Recovered)
		rows = append(rows, x)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read cost after failure: %w", err)
	}
	return rows, nil
}

func orZero(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
