package store

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"

	"github.com/evosignal/evosignal/queries"
)

// keySet is the in-memory index behind "a row exists at most once per
// (source, id)": a set of 64-bit FNV-1a hashes of source NUL id, one per
// stored event (about 38 bytes an event in a Go map, as measured by cmd/bench:
// 16-byte slots, sized to a power of two). A hash found in the set
// is only a candidate duplicate; Write confirms it against the events table
// before skipping, so a hash collision never drops an event.
type keySet struct{ m map[uint64]struct{} }

// KeyHash is the de-duplication hash of an event's (source, id): FNV-1a of
// source NUL id, as the events table's key_hash column holds it.
func KeyHash(source, id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(source))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return h.Sum64()
}

func loadKeys(ctx context.Context, db *sql.DB) (*keySet, error) {
	var n int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil {
		return nil, fmt.Errorf("count events: %w", err)
	}
	ks := &keySet{m: make(map[uint64]struct{}, n)}
	rows, err := db.QueryContext(ctx, queries.MustRead("ingest/load_keys.sql"))
	if err != nil {
		return nil, fmt.Errorf("load event keys: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h uint64
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("load event keys: %w", err)
		}
		ks.m[h] = struct{}{}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load event keys: %w", err)
	}
	return ks, nil
}

func (k *keySet) has(h uint64) bool { _, ok := k.m[h]; return ok }
func (k *keySet) add(h uint64)      { k.m[h] = struct{}{} }
func (k *keySet) len() int          { return len(k.m) }
