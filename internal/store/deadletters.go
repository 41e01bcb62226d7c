package store

import (
	"context"
	"fmt"
	"time"

	"github.com/evosignal/evosignal/queries"
)

// The bounds of the dead_letters table (docs/operations.md, "Limits").
const (
	// MaxDeadLetterRaw is the most bytes of a rejected message a dead
	// letter keeps in raw; raw_size and raw_sha256 describe the whole.
	// A dead letter cut short cannot be replayed (ReasonTruncated).
	MaxDeadLetterRaw = 64 << 10 // 64 KiB
	// PruneEvery is how often, at most, the store deletes the dead letters
	// past Options.DeadLetterRetention while it writes.
	PruneEvery = time.Hour
)

// ReasonTruncated is the reason code a replay gives a dead letter whose
// raw bytes were cut at MaxDeadLetterRaw: the event is not all there.
const ReasonTruncated = "truncated"

// pruneOnOpen deletes the dead letters past their retention when the store
// opens, in a transaction of its own.
func (s *Store) pruneOnOpen(ctx context.Context) error {
	if s.opts.DeadLetterRetention <= 0 {
		return nil
	}
	now := time.Now().UTC()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete old dead letters: %w", err)
	}
	defer tx.Rollback()
	before := now.Add(-s.opts.DeadLetterRetention)
	for _, f := range []string{"ingest/prune_dead_letter_replays.sql", "ingest/prune_dead_letters.sql"} {
		if _, err := tx.ExecContext(ctx, queries.MustRead(f), before); err != nil {
			return fmt.Errorf("delete dead letters received before %s: %w", before.Format(time.RFC3339), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete old dead letters: %w", err)
	}
	s.lastPrune = now
	return nil
}

// pruneDue deletes, in the batch's transaction on the writer, the dead
// letters past their retention when PruneEvery has passed since the last
// time; it reports whether it did.
func (s *Store) pruneDue(ctx context.Context, now time.Time) (bool, error) {
	if s.opts.DeadLetterRetention <= 0 || now.Sub(s.lastPrune) < PruneEvery {
		return false, nil
	}
	before := now.Add(-s.opts.DeadLetterRetention)
	for _, f := range []string{"ingest/prune_dead_letter_replays.sql", "ingest/prune_dead_letters.sql"} {
		if _, err := s.w.ExecContext(ctx, queries.MustRead(f), before); err != nil {
			return false, fmt.Errorf("delete dead letters received before %s: %w", before.Format(time.RFC3339), err)
		}
	}
	return true, nil
}
