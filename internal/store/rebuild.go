package store

import (
	"context"
	"database/sql"
	"fmt"
	"path"
	"strings"

	"github.com/evosignal/evosignal/queries"
)

// Rebuild empties the typed tables and derives them again from the event
// log with the SQL derivation (queries/derive, the reference the ingester's
// Go write path is tested against), and stores every session's facts anew,
// in one transaction. It proves (and restores) "everything derived can be
// rebuilt from the raw events".
func (s *Store) Rebuild(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, queries.MustRead("ingest/rebuild_view.sql")); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	pr := s.newProgress("rebuild", len(s.derive))
	for _, d := range s.derive {
		table := strings.TrimSuffix(path.Base(d.File), ".sql")
		if _, err := c.ExecContext(ctx, "DELETE FROM "+table); err != nil {
			c.ExecContext(ctx, "ROLLBACK")
			return fmt.Errorf("rebuild: empty %s: %w", table, err)
		}
		res, err := c.ExecContext(ctx, d.SQL)
		if err != nil {
			c.ExecContext(ctx, "ROLLBACK")
			return fmt.Errorf("rebuild: %s: %w", d.File, err)
		}
		rows, err := res.RowsAffected()
		if err != nil {
			rows = -1
		}
		pr.step("derive "+table, rows)
	}
	// Every session is pending now: store all their facts anew.
	if err := s.rebuildFacts(ctx, c, pr); err != nil {
		c.ExecContext(ctx, "ROLLBACK")
		return fmt.Errorf("rebuild: store facts: %w", err)
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("rebuild: commit: %w", err)
	}
	return nil
}

// rebuildFacts stores every session's facts anew. The typed tables were
// refilled, so the row counts facts_generations kept say nothing of where
// a session's rows are now: it starts over, as if no refresh had run.
func (s *Store) rebuildFacts(ctx context.Context, c *sql.Conn, pr *progress) error {
	// The day rollups go too: the refresh below builds them whole.
	for _, t := range []string{"session_facts_stored", "task_facts_stored", "facts_sessions", "facts_generations", "rollups", "hint_days", "replace_days"} {
		if _, err := c.ExecContext(ctx, "DELETE FROM "+t); err != nil {
			return err
		}
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM facts_pending").Scan(&n); err != nil {
		return err
	}
	return s.refreshPending(ctx, c, n, pr)
}
