package metrics

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/evosignal/evosignal/queries"
)

// StuckStates are the states where agents get stuck, in the order analyze
// stuck lists them (queries/analyze/stuck_states.sql defines them).
var StuckStates = []string{"loop", "churn", "depth_limit", "soft_cap", "pending_at_end"}

// StuckRow is one stuck state of the ended sessions of a group
// (queries/analyze/stuck.sql): its rate (sessions with it), its
// occurrences, what preceded it most often, and how often a stuck session
// still succeeded (over StuckSessions − StuckUnknown).
type StuckRow struct {
	Group
	State          string    `json:"state"`
	Sessions       int64     `json:"sessions"`
	UnknownOutcome int64     `json:"unknown_outcome"`
	StuckSessions  int64     `json:"stuck_sessions"`
	Rate           *float64  `json:"rate"`
	RateCI         *Interval `json:"rate_ci"`
	Occurrences    int64     `json:"occurrences"`
	// TopDetail is what preceded the state most often (a tool and hint, or
	// a replan trigger), TopDetailOccurrences its count.
	TopDetail            *string   `json:"top_detail"`
	TopDetailOccurrences int64     `json:"top_detail_occurrences"`
	Recovered            int64     `json:"recovered"`
	StuckUnknown         int64     `json:"stuck_unknown"`
	RecoveryRate         *float64  `json:"recovery_rate"`
	RecoveryRateCI       *Interval `json:"recovery_rate_ci"`
}

// StuckExample is one session in a stuck state
// (queries/analyze/stuck_examples.sql): its first occurrence (seq and
// what preceded it) and how many it had.
type StuckExample struct {
	State       string  `json:"state"`
	Session     string  `json:"session"`
	Agent       string  `json:"agent"`
	TaskType    *string `json:"task_type"`
	Outcome     string  `json:"outcome"`
	Recovered   bool    `json:"recovered"`
	Occurrences int64   `json:"occurrences"`
	Seq         int64   `json:"seq"`
	Detail      *string `json:"detail"`
}

// TriggerRow is one visible replan trigger of a group
// (queries/analyze/replan_triggers.sql): its replans, the ended sessions
// with one, and the rate at which they then succeeded (over Sessions −
// UnknownOutcome).
type TriggerRow struct {
	Group
	Trigger        string    `json:"visible_trigger"`
	Replans        int64     `json:"replans"`
	Sessions       int64     `json:"sessions"`
	UnknownOutcome int64     `json:"unknown_outcome"`
	Successes      int64     `json:"successes"`
	SuccessRate    *float64  `json:"success_rate"`
	SuccessRateCI  *Interval `json:"success_rate_ci"`
}

// Stuck runs queries/analyze/stuck.sql: every state of every group.
func Stuck(ctx context.Context, src Source, f Filter) ([]StuckRow, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/stuck.sql"), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("query stuck: %w", err)
	}
	rows := []StuckRow{}
	err = eachRow(t, func(r *row) error {
		x := StuckRow{
			Group:                r.group(false),
			State:                r.need("state"),
			Sessions:             r.int("sessions"),
			UnknownOutcome:       r.int("unknown_outcome"),
			StuckSessions:        r.int("stuck_sessions"),
			Occurrences:          r.int("occurrences"),
			TopDetail:            r.str("top_detail"),
			TopDetailOccurrences: r.int("top_detail_occurrences"),
			Recovered:            r.int("recovered"),
			StuckUnknown:         r.int("stuck_unknown"),
		}
		x.Rate, x.RateCI = rateWithCI(x.StuckSessions, x.Sessions)
		x.RecoveryRate, x.RecoveryRateCI = rateWithCI(x.Recovered, x.StuckSessions-x.StuckUnknown)
		rows = append(rows, x)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read stuck: %w", err)
	}
	return rows, nil
}

// StuckExamples runs queries/analyze/stuck_examples.sql: at most n
// sessions per state, the latest started first.
func StuckExamples(ctx context.Context, src Source, f Filter, n int64) ([]StuckExample, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("examples %d: want ≥ 0", n)
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/stuck_examples.sql"), append(f.Args(), sql.Named("examples", n))...)
	if err != nil {
		return nil, fmt.Errorf("query stuck examples: %w", err)
	}
	rows := []StuckExample{}
	err = eachRow(t, func(r *row) error {
		rows = append(rows, StuckExample{
			State:       r.need("state"),
			Session:     r.need("session"),
			Agent:       r.text("agent"),
			TaskType:    r.str("task_type"),
			Outcome:     r.text("outcome"),
			Recovered:   r.bool("recovered"),
			Occurrences: r.int("occurrences"),
			Seq:         r.int("seq"),
			Detail:      r.str("detail"),
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read stuck examples: %w", err)
	}
	return rows, nil
}

// ReplanTriggers runs queries/analyze/replan_triggers.sql.
func ReplanTriggers(ctx context.Context, src Source, f Filter) ([]TriggerRow, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	t, err := src.Query(ctx, queries.MustExpand("analyze/replan_triggers.sql"), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("query replan triggers: %w", err)
	}
	rows := []TriggerRow{}
	err = eachRow(t, func(r *row) error {
		x := TriggerRow{
			Group:          r.group(false),
			Trigger:        r.need("visible_trigger"),
			Replans:        r.int("replans"),
			Sessions:       r.int("sessions"),
			UnknownOutcome: r.int("unknown_outcome"),
			Successes:      r.int("successes"),
		}
		x.SuccessRate, x.SuccessRateCI = rateWithCI(x.Successes, x.Sessions-x.UnknownOutcome)
		rows = append(rows, x)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read replan triggers: %w", err)
	}
	return rows, nil
}
