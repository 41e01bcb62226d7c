package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/evosignal/evosignal/queries"
)

// rollupDimensions are the dimensions the day rollups keep: every one an
// analysis groups by (metrics.Dimensions; a test holds the two equal).
var rollupDimensions = []string{"agent", "agent_version", "model", "task_type", "day", "week", "ruleset"}

// rollupChunk is how many days one statement of a rollup build reads.
const rollupChunk = 7

// rollups brings the day rollups (queries/migrations/0012_rollups.sql) in
// line with the stored facts, inside the caller's transaction on c, after
// a refresh and its classification: it builds again the days the refresh
// touched (rollup_touched, ingest/refresh_facts.sql), or every day when
// the rollups were built with another taxonomy than the store's, or not at
// all. A store without a taxonomy empties them: its facts are not
// classified, so every analysis computes from the facts.
func (s *Store) rollups(ctx context.Context, c *sql.Conn) error {
	if s.tax == nil {
		for _, q := range []string{"DELETE FROM rollups", "DELETE FROM hint_days", "DELETE FROM replace_days", "DROP TABLE IF EXISTS rollup_touched"} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("empty the day rollups: %w", err)
			}
		}
		return nil
	}
	var built string
	err := c.QueryRowContext(ctx, "SELECT classifier FROM rollups").Scan(&built)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read rollups: %w", err)
	}
	whole := built != s.tax.ID()
	var steps []string
	if whole {
		steps = []string{
			"CREATE OR REPLACE TEMP TABLE rollup_touched AS SELECT DISTINCT day FROM session_facts_stored WHERE day IS NOT NULL",
			"DELETE FROM rollups", "DELETE FROM hint_days", "DELETE FROM replace_days",
		}
	} else {
		steps = []string{
			"CREATE TEMP TABLE IF NOT EXISTS rollup_touched (day DATE)",
			"DELETE FROM hint_days WHERE day IN (SELECT day FROM rollup_touched)",
			"DELETE FROM replace_days WHERE day IN (SELECT day FROM rollup_touched)",
		}
	}
	for _, q := range steps {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("day rollups: %w", err)
		}
	}
	args := append([]any{
		sql.Named("since", nil), sql.Named("until", nil), sql.Named("agent", nil), sql.Named("model", nil),
		sql.Named("task_type", nil), sql.Named("by", rollupDimensions),
	}, s.tax.Args()...)
	// In chunks of days, so that the memory of the builds' joins follows
	// a chunk (a whole build, or a backlog's refresh, touches every day).
	if _, err := c.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE rollup_todo AS
		SELECT day, (row_number() OVER (ORDER BY day) - 1) // $1 AS chunk FROM (SELECT DISTINCT day FROM rollup_touched)`, rollupChunk); err != nil {
		return fmt.Errorf("day rollups: %w", err)
	}
	var chunks int
	if err := c.QueryRowContext(ctx, "SELECT coalesce(max(chunk) + 1, 0) FROM rollup_todo").Scan(&chunks); err != nil {
		return fmt.Errorf("day rollups: %w", err)
	}
	for k := range chunks {
		if _, err := c.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE rollup_touched AS SELECT day FROM rollup_todo WHERE chunk = $1", k); err != nil {
			return fmt.Errorf("day rollups: %w", err)
		}
		for _, f := range []string{"ingest/rollup_hints.sql", "ingest/rollup_replace.sql"} {
			if _, err := c.ExecContext(ctx, queries.MustExpand(f), args...); err != nil {
				return fmt.Errorf("day rollups: %s: %w", f, err)
			}
		}
	}
	if _, err := c.ExecContext(ctx, "DROP TABLE rollup_todo"); err != nil {
		return fmt.Errorf("day rollups: %w", err)
	}
	if whole {
		if _, err := c.ExecContext(ctx, "INSERT INTO rollups VALUES ($1)", s.tax.ID()); err != nil {
			return fmt.Errorf("day rollups: %w", err)
		}
	}
	_, err = c.ExecContext(ctx, "DROP TABLE rollup_touched")
	return err
}
