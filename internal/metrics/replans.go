package metrics

import (
	"context"
	"fmt"

	"github.com/evosignal/evosignal/queries"
)

// ReplansRow is one group of the replans analysis. Every count and rate is
// over ended sessions (those with agent.session.ended) except OpenSessions.
// Replans are counted from agent.plan.updated events: a valid replan is an
// accepted update_task_plan call, an attempt is any call. The success and
// first-try success rates leave out the ended sessions of unknown outcome
// (UnknownOutcome: no evidence of how they went), numerator and
// denominator; every other figure counts them. Rates are nil when their
// denominator is 0; intervals are Wilson 95%.
type ReplansRow struct {
	Group
	Sessions       int64 `json:"sessions"`        // ended sessions
	OpenSessions   int64 `json:"open_sessions"`   // seen, but never ended
	UnknownOutcome int64 `json:"unknown_outcome"` // ended with outcome unknown: left out of the success rates

	Replanned    int64     `json:"replanned"`   // sessions with at least one valid replan
	ReplanRate   *float64  `json:"replan_rate"` // replanned / sessions
	ReplanRateCI *Interval `json:"replan_rate_ci"`
	ValidReplans int64     `json:"valid_replans"` // valid replans in all sessions
	AvgReplans   *float64  `json:"avg_replans"`   // valid_replans / sessions

	FirstTrySuccesses     int64          `json:"first_try_successes"`    // outcome success and no replan attempt at all
	FirstTrySuccessRate   *float64       `json:"first_try_success_rate"` // over sessions − unknown_outcome
	FirstTrySuccessRateCI *Interval      `json:"first_try_success_rate_ci"`
	Successes             int64          `json:"successes"`    // outcome success
	SuccessRate           *float64       `json:"success_rate"` // over sessions − unknown_outcome
	SuccessRateCI         *Interval      `json:"success_rate_ci"`
	SuccessByReplans      []ReplanBucket `json:"success_by_replans"` // 0, 1, 2, 3+ valid replans

	OverCapSessions int64     `json:"over_cap_sessions"` // sessions with an attempt at or past the soft cap
	OverCapRate     *float64  `json:"over_cap_rate"`
	OverCapRateCI   *Interval `json:"over_cap_rate_ci"`
	InvalidReplans  int64     `json:"invalid_replans"` // rejected attempts
	Triggers        Triggers  `json:"triggers"`        // attempts per trigger

	StrippedHints           int64    `json:"stripped_hints"`
	StrippedHintsPerSession *float64 `json:"stripped_hints_per_session"`

	// Median time from the session's start to its first replan attempt,
	// over the sessions with one (nil when none).
	MedianMSToFirstReplan *float64 `json:"median_ms_to_first_replan"`

	// Ended sessions whose own count (agent.session.ended replans) differs
	// from their agent.plan.updated events: a data-quality figure.
	ReportedReplansMismatch int64 `json:"reported_replans_mismatch"`

	// Ended sessions without a plan (session_signals.has_plan false), and
	// the re-decisions inferred from their tool calls
	// (views/inferred_redecisions.sql). An estimate, labelled as such: never
	// part of Replanned, ReplanRate, ValidReplans or AvgReplans.
	PlanlessSessions    int64     `json:"planless_sessions"`
	InferredSessions    int64     `json:"inferred_sessions"` // plan-less sessions with at least one inferred re-decision
	InferredRate        *float64  `json:"inferred_rate"`     // inferred_sessions / planless_sessions
	InferredRateCI      *Interval `json:"inferred_rate_ci"`
	InferredRedecisions int64     `json:"inferred_redecisions"`
	AvgInferred         *float64  `json:"avg_inferred"` // inferred_redecisions / planless_sessions
}

// ReplanBucket is the success rate of the ended sessions with a number of
// valid replans, over those of known outcome.
type ReplanBucket struct {
	Replans        string    `json:"replans"` // "0", "1", "2" or "3+"
	Sessions       int64     `json:"sessions"`
	UnknownOutcome int64     `json:"unknown_outcome"` // of Sessions, left out of SuccessRate
	Successes      int64     `json:"successes"`
	SuccessRate    *float64  `json:"success_rate"` // successes / (sessions − unknown_outcome)
	SuccessRateCI  *Interval `json:"success_rate_ci"`
}

// Triggers counts update_task_plan calls (valid or not) per trigger; they
// add up to valid_replans + invalid_replans.
type Triggers struct {
	Model        int64 `json:"model"`
	DepthLimit   int64 `json:"depth_limit"`
	ToolFailures int64 `json:"tool_failures"`
	NoProgress   int64 `json:"no_progress"`
	User         int64 `json:"user"`
}

// ReplansResult is the replans analysis: rows per group and data-quality
// notes (CompareReplans adds the comparison of successes without and after
// several replans, which analyze replans shows).
type ReplansResult struct {
	Rows  []ReplansRow
	Notes []string
}

// Replans runs queries/analyze/replans.sql for f. Without -by it always
// returns one row, with null rates when no session matched.
func Replans(ctx context.Context, src Source, f Filter) (*ReplansResult, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/replans.sql"), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("query replans: %w", err)
	}
	res := &ReplansResult{Rows: []ReplansRow{}}
	err = eachRow(t, func(r *row) error {
		res.Rows = append(res.Rows, readReplansRow(r))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read replans: %w", err)
	}
	if len(res.Rows) == 0 && len(f.By) == 0 {
		res.Rows = append(res.Rows, newReplansRow(Group{}, replanCounts{}))
	}
	res.Notes = replansNotes(res.Rows)
	return res, nil
}

// replanCounts are the counts replans.sql returns for a group.
type replanCounts struct {
	sessions, open, unknown, replanned, validReplans, firstTry, successes int64
	n, s, u                                                               [4]int64 // by 0, 1, 2, 3+ valid replans
	overCap, invalid, stripped, mismatch                                  int64
	planless, inferredSessions, inferred                                  int64
	triggers                                                              Triggers
	medianMS                                                              *float64
}

func readReplansRow(r *row) ReplansRow {
	c := replanCounts{
		sessions:         r.int("sessions"),
		open:             r.int("open_sessions"),
		unknown:          r.int("unknown_outcome"),
		replanned:        r.int("replanned"),
		validReplans:     r.int("valid_replans"),
		firstTry:         r.int("first_try_successes"),
		successes:        r.int("successes"),
		n:                [4]int64{r.int("n_0"), r.int("n_1"), r.int("n_2"), r.int("n_3plus")},
		s:                [4]int64{r.int("s_0"), r.int("s_1"), r.int("s_2"), r.int("s_3plus")},
		u:                [4]int64{r.int("u_0"), r.int("u_1"), r.int("u_2"), r.int("u_3plus")},
		overCap:          r.int("over_cap_sessions"),
		invalid:          r.int("invalid_replans"),
		stripped:         r.int("stripped_hints"),
		mismatch:         r.int("reported_mismatch"),
		planless:         r.int("planless_sessions"),
		inferredSessions: r.int("inferred_sessions"),
		inferred:         r.int("inferred_redecisions"),
		triggers: Triggers{
			Model:        r.int("trigger_model"),
			DepthLimit:   r.int("trigger_depth_limit"),
			ToolFailures: r.int("trigger_tool_failures"),
			NoProgress:   r.int("trigger_no_progress"),
			User:         r.int("trigger_user"),
		},
		medianMS: r.float("median_ms_to_first_replan"),
	}
	return newReplansRow(r.group(false), c)
}

func newReplansRow(g Group, c replanCounts) ReplansRow {
	row := ReplansRow{
		Group:                   g,
		Sessions:                c.sessions,
		OpenSessions:            c.open,
		UnknownOutcome:          c.unknown,
		Replanned:               c.replanned,
		ValidReplans:            c.validReplans,
		AvgReplans:              Rate(c.validReplans, c.sessions),
		FirstTrySuccesses:       c.firstTry,
		Successes:               c.successes,
		OverCapSessions:         c.overCap,
		InvalidReplans:          c.invalid,
		Triggers:                c.triggers,
		StrippedHints:           c.stripped,
		StrippedHintsPerSession: Rate(c.stripped, c.sessions),
		MedianMSToFirstReplan:   c.medianMS,
		ReportedReplansMismatch: c.mismatch,
		PlanlessSessions:        c.planless,
		InferredSessions:        c.inferredSessions,
		InferredRedecisions:     c.inferred,
		AvgInferred:             Rate(c.inferred, c.planless),
	}
	row.InferredRate, row.InferredRateCI = rateWithCI(c.inferredSessions, c.planless)
	row.ReplanRate, row.ReplanRateCI = rateWithCI(c.replanned, c.sessions)
	row.FirstTrySuccessRate, row.FirstTrySuccessRateCI = rateWithCI(c.firstTry, c.sessions-c.unknown)
	row.SuccessRate, row.SuccessRateCI = rateWithCI(c.successes, c.sessions-c.unknown)
	row.OverCapRate, row.OverCapRateCI = rateWithCI(c.overCap, c.sessions)
	for i, label := range []string{"0", "1", "2", "3+"} {
		b := ReplanBucket{Replans: label, Sessions: c.n[i], UnknownOutcome: c.u[i], Successes: c.s[i]}
		b.SuccessRate, b.SuccessRateCI = rateWithCI(c.s[i], c.n[i]-c.u[i])
		row.SuccessByReplans = append(row.SuccessByReplans, b)
	}
	return row
}

// replansNotes are the data-quality lines over all rows.
func replansNotes(rows []ReplansRow) []string {
	var mismatch, open, unknown int64
	for _, r := range rows {
		mismatch += r.ReportedReplansMismatch
		open += r.OpenSessions
		unknown += r.UnknownOutcome
	}
	var notes []string
	if mismatch > 0 {
		notes = append(notes, fmt.Sprintf("the agent's own replan count (agent.session.ended replans) differs from its agent.plan.updated events in %d ended session(s); "+
			"the figures here count the events (field reported_replans_mismatch)", mismatch))
	}
	if open > 0 {
		notes = append(notes, fmt.Sprintf("%d session(s) never ended (still running, or the agent died): counted in open_sessions only", open))
	}
	if unknown > 0 {
		notes = append(notes, UnknownOutcomeNote(unknown))
	}
	return notes
}

// UnknownOutcomeNote is the note of an analysis whose success rates left
// out n ended sessions of unknown outcome.
func UnknownOutcomeNote(n int64) string {
	return fmt.Sprintf("%d ended session(s) have outcome unknown (no evidence of how they went): left out of the success and first-try success rates, "+
		"counted in every other figure (field unknown_outcome)", n)
}
