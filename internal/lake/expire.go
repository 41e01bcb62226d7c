package lake

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// retainLast is the fewest snapshots Expire leaves a table, however old.
const retainLast = 10

// Expire removes from each table of the lake the snapshots older than
// keep (but the last retainLast of each table) and the files only they
// referenced: the data files a seal replaced (a shard's earlier facts),
// and the manifests and manifest lists of old commits. Without it every
// commit keeps its snapshot forever: the table's metadata, rewritten and
// read on every commit, grows by one snapshot a commit, and every seal's
// replaced facts file stays in the warehouse. The current snapshot, which
// holds every shard's watermarks, is never expired; a reader attached to a
// snapshot older than keep may find its replaced files gone.
//
// It returns how many snapshots it removed. A commit another process made
// meanwhile is retried like a seal's.
func (l *Lake) Expire(ctx context.Context, keep time.Duration) (int, error) {
	if keep <= 0 {
		return 0, fmt.Errorf("lake %s: expire: keep must be positive, got %s", l.name, keep)
	}
	mu := l.mutex()
	mu.Lock()
	defer mu.Unlock()
	var removed int
	for _, t := range tables {
		n, err := l.expire(ctx, t.name, keep)
		removed += n
		if err != nil {
			return removed, fmt.Errorf("lake %s: expire %s: %w", l.name, t.name, err)
		}
	}
	return removed, nil
}

// expire expires the snapshots of one table.
func (l *Lake) expire(ctx context.Context, name string, keep time.Duration) (int, error) {
	for try := 1; ; try++ {
		tbl, err := l.cat.LoadTable(ctx, ident(name))
		if errors.Is(err, catalog.ErrNoSuchTable) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		before := len(tbl.Metadata().Snapshots())
		if before <= retainLast {
			return 0, nil
		}
		cutoff, old := time.Now().Add(-keep).UnixMilli(), false
		for _, s := range tbl.Metadata().Snapshots() {
			old = old || s.TimestampMs < cutoff
		}
		if !old {
			return 0, nil // nothing old enough: no commit
		}
		tx := tbl.NewTransaction()
		if err := tx.ExpireSnapshots(table.WithOlderThan(keep), table.WithRetainLast(retainLast)); err != nil {
			return 0, err
		}
		after, err := tx.Commit(ctx)
		if err == nil {
			return before - len(after.Metadata().Snapshots()), nil
		}
		if !conflict(err) || try == maxCommitTries {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Duration(1+rand.IntN(20*try)) * time.Millisecond):
		}
	}
}
