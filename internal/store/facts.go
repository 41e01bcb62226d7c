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
	Took     time.Duration // 0 when nothing was pending; set on failure too
}

// RefreshFacts stores the facts (session_facts, task_facts) of the sessions
// the batches since the last refresh touched, in one transaction. Reading
// is exact without it, since the views compute pending sessions on the fly;
// it keeps that on-the-fly part small, which is what makes the analyzers
// fast. The ingester decides when (internal/ingest/facts.go). See
// queries/migrations/0003_stored_facts.sql.
func (s *Store) RefreshFacts(ctx context.Context) (FactsRefresh, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(ctx, "refresh facts"); err != nil {
		return FactsRefresh{}, err
	}
	t0 := time.Now()
	var n int
	if err := s.w.QueryRowContext(ctx, "SELECT count(*) FROM facts_pending").Scan(&n); err != nil {
		return FactsRefresh{}, fmt.Errorf("refresh facts: %w", err)
	}
	if n == 0 {
		return FactsRefresh{}, nil
	}
	var pr *progress
	if n > factsPass {
		pr = s.newProgress("facts", 0)
	}
	if err := inTx(ctx, s.w, func() error { return s.refreshPending(ctx, s.w, n, pr) }); err != nil {
		if invalidated(err) {
			s.broken = fmt.Errorf("database invalidated: %w", err)
		}
		return FactsRefresh{Took: time.Since(t0)}, fmt.Errorf("refresh facts of %d sessions: %w", n, err)
	}
	return FactsRefresh{Sessions: n, Took: time.Since(t0)}, nil
}

// factsPass bounds the sessions one pass of a refresh computes. A larger
// backlog (a database migrated to stored facts, or rebuilt) is stored in
// passes within the same transaction, so the memory of its joins follows
// the pass, not the backlog; each pass costs a scan of the typed tables.
var factsPass = 50_000 // a variable for tests

// refreshPending stores the facts of the n pending sessions, inside the
// caller's transaction on c, and classifies them; pr (nil: none) hears of
// each pass.
func (s *Store) refreshPending(ctx context.Context, c *sql.Conn, n int, pr *progress) error {
	if err := refreshPasses(ctx, c, n, pr); err != nil {
		return err
	}
	if err := s.classify(ctx, c); err != nil {
		return err
	}
	return s.rollups(ctx, c)
}

func refreshPasses(ctx context.Context, c *sql.Conn, n int, pr *progress) error {
	refresh := queries.MustExpand("ingest/refresh_facts.sql")
	pr.addSteps((n + factsPass - 1) / factsPass)
	if n <= factsPass {
		if _, err := c.ExecContext(ctx, refresh); err != nil {
			return err
		}
		pr.pass()
		return recordGeneration(ctx, c)
	}
	if _, err := c.ExecContext(ctx, queries.MustRead("ingest/facts_backlog.sql")); err != nil {
		return fmt.Errorf("set the backlog aside: %w", err)
	}
	for lo := 0; lo < n; lo += factsPass {
		if _, err := c.ExecContext(ctx, queries.MustRead("ingest/facts_backlog_pass.sql"), lo, lo+factsPass); err != nil {
			return fmt.Errorf("backlog pass from %d: %w", lo, err)
		}
		if _, err := c.ExecContext(ctx, refresh); err != nil {
			return fmt.Errorf("backlog pass from %d: %w", lo, err)
		}
		pr.pass()
	}
	if _, err := c.ExecContext(ctx, "DROP TABLE facts_backlog"); err != nil {
		return err
	}
	return recordGeneration(ctx, c)
}

// recordGeneration records a refresh whose passes are all done: only then
// is every session of its snapshot stored, which the row counts it records
// promise to later refreshes (ingest/facts_generation.sql).
func recordGeneration(ctx context.Context, c *sql.Conn) error {
	if _, err := c.ExecContext(ctx, queries.MustRead("ingest/facts_generation.sql")); err != nil {
		return fmt.Errorf("record the refresh's generation: %w", err)
	}
	return nil
}

// PendingFacts counts the sessions whose facts are not stored yet.
func (s *Store) PendingFacts(ctx context.Context) (int, error) {
	var n int
	err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM facts_pending").Scan(&n)
	return n, err
}

// inTx runs f in one transaction on c.
func inTx(ctx context.Context, c *sql.Conn, f func() error) (err error) {
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err := f(); err != nil {
		return err
	}
	_, err = c.ExecContext(ctx, "COMMIT")
	return err
}

// classify classifies the stored facts not classified yet with the store's
// taxonomy (ingest/classify_facts.sql), inside the caller's transaction.
func (s *Store) classify(ctx context.Context, c *sql.Conn) error {
	if s.tax == nil {
		return nil
	}
	if _, err := c.ExecContext(ctx, queries.MustExpand("ingest/classify_facts.sql"), s.tax.ClassifyArgs()...); err != nil {
		return fmt.Errorf("classify facts with %s: %w", s.tax.ID(), err)
	}
	return nil
}

// useTaxonomy makes the store's taxonomy, if any, the one the stored facts
// are classified with: when the database records another (or none), it
// classifies every stored fact again, in one transaction. Without one,
// facts stored from now on stay unclassified (classified = false), which
// analyses see per row.
func (s *Store) useTaxonomy(ctx context.Context) error {
	if s.tax == nil {
		return nil
	}
	var stored string
	err := s.w.QueryRowContext(ctx, "SELECT classifier FROM facts_classifier").Scan(&stored)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read facts_classifier: %w", err)
	}
	if stored == s.tax.ID() {
		// A database the rollups are new to (or that a store without a
		// taxonomy wrote last) gets them whole.
		var built string
		err := s.w.QueryRowContext(ctx, "SELECT classifier FROM rollups").Scan(&built)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read rollups: %w", err)
		}
		if built == stored {
			return nil
		}
		if err := inTx(ctx, s.w, func() error { return s.rollups(ctx, s.w) }); err != nil {
			return fmt.Errorf("build the day rollups: %w", err)
		}
		return nil
	}
	err = inTx(ctx, s.w, func() error {
		if _, err := s.w.ExecContext(ctx, queries.MustRead("ingest/set_classifier.sql")); err != nil {
			return err
		}
		if _, err := s.w.ExecContext(ctx, queries.MustRead("ingest/record_classifier.sql"), s.tax.ID()); err != nil {
			return err
		}
		if err := s.classify(ctx, s.w); err != nil {
			return err
		}
		return s.rollups(ctx, s.w)
	})
	if err != nil {
		return fmt.Errorf("classify the stored facts with %s (was %q): %w", s.tax.ID(), stored, err)
	}
	return nil
}
