package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/evosignal/evosignal/queries"
)

// FactsRefresh says what one RefreshFacts did.
type FactsRefresh struct {
	Sessions int           // pending sessions whose facts were stored
	Took     time.Duration // 0 when nothing was pending
}

// RefreshFacts stores the facts (session_facts, task_facts) of the sessions
// the batches since the last refresh touched, in one transaction. Reading
// is exact without it, since the views compute pending sessions on the fly;
// it keeps that on-the-fly part small, which is what makes the analyzers
// fast. The ingester calls it every few seconds while it writes and when it
// goes idle. See queries/migrations/0003_stored_facts.sql.
func (s *Store) RefreshFacts(ctx context.Context) (FactsRefresh, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return FactsRefresh{}, errors.New("refresh facts: store is closed")
	}
	if s.broken != nil {
		return FactsRefresh{}, s.broken
	}
	t0 := time.Now()
	var n int
	if err := s.w.QueryRowContext(ctx, "SELECT count(*) FROM facts_pending").Scan(&n); err != nil {
		return FactsRefresh{}, fmt.Errorf("refresh facts: %w", err)
	}
	if n == 0 {
		return FactsRefresh{}, nil
	}
	if err := inTx(ctx, s.w, queries.MustRead("ingest/refresh_facts.sql")); err != nil {
		return FactsRefresh{}, fmt.Errorf("refresh facts of %d sessions: %w", n, err)
	}
	return FactsRefresh{Sessions: n, Took: time.Since(t0)}, nil
}

// PendingFacts counts the sessions whose facts are not stored yet.
func (s *Store) PendingFacts(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM facts_pending").Scan(&n)
	return n, err
}

// inTx runs the statements of script on c in one transaction.
func inTx(ctx context.Context, c *sql.Conn, script string) (err error) {
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if _, err := c.ExecContext(ctx, script); err != nil {
		return err
	}
	_, err = c.ExecContext(ctx, "COMMIT")
	return err
}
