// Package feedbackdb reads SkillLite's feedback.sqlite
// (~/.skilllite/chat/feedback.sqlite, skilllite-evolution/src/feedback.rs:101-110):
// the decisions it records per turn, for the bridge's cross-check
// (skilllite.CrossCheck). It opens the file read-only, with a pure-Go SQLite
// (modernc.org/sqlite), so it builds beside DuckDB's cgo driver.
package feedbackdb

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/evosignal/evosignal/internal/adapter/skilllite"
)

var (
	//go:embed decisions.sql
	decisionsSQL string
	//go:embed decision_rules.sql
	rulesSQL string
)

// tsLayout is SQLite's datetime('now'): UTC, whole seconds.
const tsLayout = "2006-01-02 15:04:05"

// ReadDecisions returns every decisions row of the feedback.sqlite at path,
// oldest first, with the rule ids of its decision_rules rows. A ts that does
// not parse is left zero: the cross-check then pairs the row by its counts
// alone.
func ReadDecisions(ctx context.Context, path string) ([]skilllite.Decision, error) {
	// mode=ro: never create or change SkillLite's file; a missing file is
	// an error, not an empty database.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open feedback.sqlite %s: %w", path, err)
	}
	defer db.Close()
	ds, err := readDecisions(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("read decisions of %s: %w", path, err)
	}
	if err := readRules(ctx, db, ds); err != nil {
		return nil, fmt.Errorf("read decision_rules of %s: %w", path, err)
	}
	return ds, nil
}

func readDecisions(ctx context.Context, db *sql.DB) ([]skilllite.Decision, error) {
	rows, err := db.QueryContext(ctx, decisionsSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ds []skilllite.Decision
	for rows.Next() {
		var d skilllite.Decision
		var ts string
		var completed int64
		if err := rows.Scan(&d.ID, &ts, &d.SessionID, &d.TotalTools, &d.FailedTools, &d.Replans,
			&completed, &d.CompletionType, &d.CompletionTypeReported); err != nil {
			return nil, err
		}
		d.TaskCompleted = completed != 0
		if t, err := time.Parse(tsLayout, ts); err == nil {
			d.TS = t
		}
		ds = append(ds, d)
	}
	return ds, rows.Err()
}

func readRules(ctx context.Context, db *sql.DB, ds []skilllite.Decision) error {
	at := make(map[int64]int, len(ds))
	for i, d := range ds {
		at[d.ID] = i
	}
	rows, err := db.QueryContext(ctx, rulesSQL)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var rule string
		if err := rows.Scan(&id, &rule); err != nil {
			return err
		}
		if i, ok := at[id]; ok {
			ds[i].Rules = append(ds[i].Rules, rule)
		}
	}
	return rows.Err()
}
