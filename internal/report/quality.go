package report

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/queries"
)

// deadLettersSQL counts the window's dead letters by reason.
var deadLettersSQL = queries.MustRead("report/dead_letters.sql")

// DataQuality is what may make the window's numbers less trustworthy.
type DataQuality struct {
	// DeadLetters received in the window (by commit time), all agents.
	DeadLetters         int64              `json:"dead_letters"`
	DeadLettersByReason []DeadLetterReason `json:"dead_letters_by_reason"` // most first
	// OpenSessions started in the window and never ended (the replans
	// analyzer's open_sessions).
	OpenSessions int64 `json:"open_sessions"`
	// ReportedReplansMismatch: ended sessions of the window whose own replan
	// count differs from their agent.plan.updated events.
	ReportedReplansMismatch int64 `json:"reported_replans_mismatch"`
	// Notes are the analyzers' data-quality and method notes.
	Notes []string `json:"notes"`
}

// DeadLetterReason counts the dead letters of one reason code.
type DeadLetterReason struct {
	ReasonCode   string    `json:"reason_code"`
	DeadLetters  int64     `json:"dead_letters"`
	LatestAt     time.Time `json:"latest_at"`
	LatestReason string    `json:"latest_reason"` // the readable reason of the latest one
}

func dataQuality(ctx context.Context, src metrics.Source, cfg Config, replans *metrics.ReplansResult, effectNotes []string) (DataQuality, error) {
	q := DataQuality{DeadLettersByReason: []DeadLetterReason{}, Notes: []string{}}
	for _, r := range replans.Rows {
		q.OpenSessions += r.OpenSessions
		q.ReportedReplansMismatch += r.ReportedReplansMismatch
	}
	q.Notes = append(append(q.Notes, replans.Notes...), effectNotes...)
	t, err := src.Query(ctx, deadLettersSQL, sql.Named("since", cfg.Since.UTC()), sql.Named("until", cfg.Until.UTC()))
	if err != nil {
		return q, fmt.Errorf("query dead letters: %w", err)
	}
	for i, row := range t.Rows {
		var d DeadLetterReason
		var ok [4]bool
		for j, col := range t.Columns {
			switch v := row[j]; col {
			case "reason_code":
				d.ReasonCode, ok[0] = v.(string)
			case "dead_letters":
				d.DeadLetters, ok[1] = v.(int64)
			case "latest_at":
				d.LatestAt, ok[2] = v.(time.Time)
				d.LatestAt = d.LatestAt.UTC()
			case "latest_reason":
				d.LatestReason, ok[3] = v.(string)
			}
		}
		if ok != [4]bool{true, true, true, true} {
			return q, fmt.Errorf("read dead letters: row %d: unexpected columns %v or types %T", i+1, t.Columns, row)
		}
		q.DeadLetters += d.DeadLetters
		q.DeadLettersByReason = append(q.DeadLettersByReason, d)
	}
	return q, nil
}
