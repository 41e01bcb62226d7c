package metrics

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/evosignal/evosignal/queries"
)

// Trend periods (-every).
const (
	EveryDay  = "day"
	EveryWeek = "week"
)

// TrendRow is one period (and group) of the evolution curve. Counts and
// rates are over the ended sessions that started in the period, except
// OpenSessions, Rulesets and NoRulesetSessions, which cover every session
// started in it. The success and first-try success rates leave out the
// ended sessions of unknown outcome (UnknownOutcome): their denominator is
// Sessions − UnknownOutcome. Rates are nil when their denominator is 0;
// intervals are Wilson 95%.
type TrendRow struct {
	Period string `json:"period"` // first day of the period (UTC), YYYY-MM-DD; a week starts on Monday
	Group
	Sessions       int64 `json:"sessions"`
	OpenSessions   int64 `json:"open_sessions"`
	UnknownOutcome int64 `json:"unknown_outcome"` // ended with outcome unknown: left out of the success rates

	Successes             int64     `json:"successes"`
	SuccessRate           *float64  `json:"success_rate"`
	SuccessRateCI         *Interval `json:"success_rate_ci"`
	FirstTrySuccesses     int64     `json:"first_try_successes"` // success with no replan attempt at all
	FirstTrySuccessRate   *float64  `json:"first_try_success_rate"`
	FirstTrySuccessRateCI *Interval `json:"first_try_success_rate_ci"`
	Replanned             int64     `json:"replanned"` // sessions with a valid replan
	ReplanRate            *float64  `json:"replan_rate"`
	ReplanRateCI          *Interval `json:"replan_rate_ci"`
	ValidReplans          int64     `json:"valid_replans"`
	AvgReplans            *float64  `json:"avg_replans"`

	// Real tool calls (control calls excluded) and their failure rate. No
	// interval: calls of one session are not independent trials.
	RealToolCalls       int64    `json:"real_tool_calls"`
	FailedRealToolCalls int64    `json:"failed_real_tool_calls"`
	ToolFailureRate     *float64 `json:"tool_failure_rate"`

	// Hints stripped for any reason, and those stripped because they named
	// no available tool (hallucinated; the rest were stripped by a learned
	// rule, which a new rule set raises by design).
	StrippedHints               int64    `json:"stripped_hints"`
	StrippedHintsPerSession     *float64 `json:"stripped_hints_per_session"`
	HallucinatedHints           int64    `json:"hallucinated_hints"`
	HallucinatedHintsPerSession *float64 `json:"hallucinated_hints_per_session"`

	Rulesets          []string `json:"rulesets"`            // rule set versions loaded by sessions started in the period, sorted
	NoRulesetSessions int64    `json:"no_ruleset_sessions"` // sessions started in the period without a rule set

	// Ended sessions without a plan, and those of them with a re-decision
	// inferred from their tool calls (views/inferred_redecisions.sql): an
	// estimate, never part of Replanned or ReplanRate.
	PlanlessSessions int64     `json:"planless_sessions"`
	InferredSessions int64     `json:"inferred_sessions"`
	InferredRate     *float64  `json:"inferred_rate"` // inferred_sessions / planless_sessions
	InferredRateCI   *Interval `json:"inferred_rate_ci"`
}

// Trend runs queries/analyze/trend.sql: one row per period in which
// sessions of a group started, sorted by period then group. Periods without
// sessions between a group's first and last are filled with empty rows
// (counts 0, rates nil), so a curve shows its gaps.
func Trend(ctx context.Context, src Source, f Filter, every string) ([]TrendRow, error) {
	rows, _, err := TrendChecked(ctx, src, f, every)
	return rows, err
}

// TrendChecked is Trend that also returns how many sessions it left out
// because their start is outside years 0001-9999 UTC (a database may hold
// such times from before the decoder refused them): they have no period.
func TrendChecked(ctx context.Context, src Source, f Filter, every string) (rows []TrendRow, outOfRange int64, err error) {
	if err := f.Validate(); err != nil {
		return nil, 0, err
	}
	if every != EveryDay && every != EveryWeek {
		return nil, 0, fmt.Errorf("trend period %q: want %s or %s", every, EveryDay, EveryWeek)
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/trend.sql"), append(f.Args(), sql.Named("every", every))...)
	if err != nil {
		return nil, 0, fmt.Errorf("query trend: %w", err)
	}
	rows = []TrendRow{}
	err = eachRow(t, func(r *row) error {
		if r.str("period") == nil {
			outOfRange += r.int("sessions") + r.int("open_sessions")
			return nil
		}
		row := TrendRow{
			Period:              r.text("period"),
			Group:               r.group(false),
			Sessions:            r.int("sessions"),
			OpenSessions:        r.int("open_sessions"),
			UnknownOutcome:      r.int("unknown_outcome"),
			Successes:           r.int("successes"),
			FirstTrySuccesses:   r.int("first_try_successes"),
			Replanned:           r.int("replanned"),
			ValidReplans:        r.int("valid_replans"),
			RealToolCalls:       r.int("real_tool_calls"),
			FailedRealToolCalls: r.int("failed_real_tool_calls"),
			StrippedHints:       r.int("stripped_hints"),
			HallucinatedHints:   r.int("hallucinated_hints"),
			Rulesets:            r.strs("rulesets"),
			NoRulesetSessions:   r.int("no_ruleset_sessions"),
			PlanlessSessions:    r.int("planless_sessions"),
			InferredSessions:    r.int("inferred_sessions"),
		}
		if _, err := time.Parse(time.DateOnly, row.Period); err != nil {
			return fmt.Errorf("period %q: %w", row.Period, err)
		}
		rows = append(rows, row.withRates())
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("read trend: %w", err)
	}
	return fillTrendGaps(rows, every), outOfRange, nil
}

func (row TrendRow) withRates() TrendRow {
	rated := row.Sessions - row.UnknownOutcome
	row.SuccessRate, row.SuccessRateCI = rateWithCI(row.Successes, rated)
	row.FirstTrySuccessRate, row.FirstTrySuccessRateCI = rateWithCI(row.FirstTrySuccesses, rated)
	row.ReplanRate, row.ReplanRateCI = rateWithCI(row.Replanned, row.Sessions)
	row.AvgReplans = Rate(row.ValidReplans, row.Sessions)
	row.ToolFailureRate = Rate(row.FailedRealToolCalls, row.RealToolCalls)
	row.StrippedHintsPerSession = Rate(row.StrippedHints, row.Sessions)
	row.HallucinatedHintsPerSession = Rate(row.HallucinatedHints, row.Sessions)
	row.InferredRate, row.InferredRateCI = rateWithCI(row.InferredSessions, row.PlanlessSessions)
	return row
}

// fillTrendGaps adds an empty row for every period missing between a
// group's first and last period, and sorts by period, then group.
func fillTrendGaps(rows []TrendRow, every string) []TrendRow {
	step := 1
	if every == EveryWeek {
		step = 7
	}
	type span struct {
		g           Group
		first, last time.Time
		seen        map[string]bool
	}
	spans := map[string]*span{}
	var order []string
	for _, r := range rows {
		p, _ := time.Parse(time.DateOnly, r.Period) // checked when read
		k := r.Group.key()
		s, ok := spans[k]
		if !ok {
			s = &span{g: r.Group, first: p, last: p, seen: map[string]bool{}}
			spans[k] = s
			order = append(order, k)
		}
		if p.Before(s.first) {
			s.first = p
		}
		if p.After(s.last) {
			s.last = p
		}
		s.seen[r.Period] = true
	}
	for _, k := range order {
		s := spans[k]
		for p := s.first; !p.After(s.last); p = p.AddDate(0, 0, step) {
			if period := p.Format(time.DateOnly); !s.seen[period] {
				rows = append(rows, TrendRow{Period: period, Group: s.g, Rulesets: []string{}}.withRates())
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b TrendRow) int {
		return cmp.Or(cmp.Compare(a.Period, b.Period), compareGroups(a.Group, b.Group))
	})
	return rows
}
