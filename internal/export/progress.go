package export

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// TableStart is a table about to be written, as Config.Starting receives
// it.
type TableStart struct {
	Table     string
	Index, Of int   // its place among the tables, from 1
	Rows      int64 // the rows it will write
	// ETA is the time the run has left, this table included: the rows still
	// to write at the rate of the tables written so far (their rows per
	// second). 0 when not known: before any row was written.
	ETA time.Duration
}

// rowCounts counts the rows each table with something new will write, as
// the run's transaction sees them, so that the progress can say how many
// rows each table has and how long the rest will take. A table whose window
// is everything (no mark yet, no -since, no -until) writes all its rows:
// they are counted as such, without the export query's join with events,
// which at 10M events needs as much memory as the export itself and once
// ran out of it where the export would not have.
func rowCounts(ctx context.Context, tx *sql.Tx, m *Manifest, now, latest marks) (map[string]int64, error) {
	counts := map[string]int64{}
	for _, t := range Tables {
		after, upto, ok := m.window(t, now)
		if !ok {
			continue
		}
		var n int64
		var err error
		if whole(t, after, upto, latest) {
			err = tx.QueryRowContext(ctx, "SELECT count(*) FROM "+t.Name).Scan(&n)
		} else {
			err = tx.QueryRowContext(ctx, countStatement(tableQuery(t, false)),
				sql.Named("after", nullTime(after)), sql.Named("upto", upto)).Scan(&n)
		}
		if err != nil {
			return nil, fmt.Errorf("table %s: count rows: %w", t.Name, err)
		}
		counts[t.Name] = n
	}
	return counts, nil
}

// countStatement counts the rows of the SELECT of an export query (DuckDB
// reads only the columns the filters need).
func countStatement(query string) string {
	return "SELECT count(*) FROM (\n" + strings.TrimRight(strings.TrimSpace(query), ";") + "\n)"
}

// eta estimates the time left of a run from the rows written so far.
type eta struct {
	left    int64         // rows still to write
	written int64         // rows written
	took    time.Duration // writing them
}

// wrote records a table written.
func (e *eta) wrote(rows int64, took time.Duration) {
	e.left -= rows
	e.written += rows
	e.took += took
}

// estimate is the time the rows left take at the rate so far; 0 when no
// rate is known yet.
func (e *eta) estimate() time.Duration {
	if e.written <= 0 || e.took <= 0 || e.left <= 0 {
		return 0
	}
	return time.Duration(float64(e.took) / float64(e.written) * float64(e.left))
}
