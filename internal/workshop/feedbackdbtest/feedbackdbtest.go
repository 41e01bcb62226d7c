// Package feedbackdbtest builds SkillLite feedback.sqlite files for tests,
// with the tables as SkillLite creates them (schema.sql).
package feedbackdbtest

import (
	"database/sql"
	_ "embed"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

var (
	//go:embed schema.sql
	upstreamSchema string
	//go:embed insert_decision.sql
	insertDecision string
	//go:embed insert_rule.sql
	insertRule string
)

// Row is a decisions row for a test database: the columns SkillLite's
// insert_decision writes (skilllite-evolution/src/feedback.rs:228-256), ts
// as datetime('now') formats it ("" for the column's default).
type Row struct {
	TS                               string
	SessionID                        string
	TotalTools, FailedTools, Replans int64
	TaskCompleted                    bool
	CompletionType, Reported         string
	Rules                            []string
}

// Write writes a feedback.sqlite with SkillLite's schema and rows into
// a temporary directory of tb, and returns its path.
func Write(tb testing.TB, rows []Row) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "feedback.sqlite")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(upstreamSchema); err != nil {
		tb.Fatalf("create SkillLite's tables: %v", err)
	}
	for _, r := range rows {
		res, err := db.Exec(insertDecision,
			r.TS, r.SessionID, r.TotalTools, r.FailedTools, r.Replans, r.TaskCompleted, r.CompletionType, r.Reported)
		if err != nil {
			tb.Fatalf("insert decision: %v", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			tb.Fatal(err)
		}
		for _, rule := range r.Rules {
			if _, err := db.Exec(insertRule, id, rule); err != nil {
				tb.Fatalf("insert decision rule: %v", err)
			}
		}
	}
	if _, err := os.Stat(path); err != nil {
		tb.Fatal(err)
	}
	return path
}
