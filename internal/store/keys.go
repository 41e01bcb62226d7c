package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"io"

	"github.com/evosignal/evosignal/queries"
)

// keySet is the in-memory index behind "a row exists at most once per
// (source, id)": a compact set of the key hashes (KeyHash) of the stored
// events. It may answer yes for a key it never saw (a false positive), never
// no for one it was given: a hash found in it is only a candidate duplicate,
// which dedupe confirms against the events table before skipping anything.
//
// It is an open-addressing table of 32-bit fingerprints with linear probing.
// A key's home slot comes from the high 32 bits of its hash (scaled to the
// table's size, which need not be a power of two); its fingerprint is the
// low 32 bits (0 marks an empty slot, so a hash whose low bits are 0 is
// stored as 1). Two keys only look alike if they share the fingerprint and
// one lies in the probe run of the other: for a key not in the set that is
// about run length × 2⁻³², under 10⁻⁸ a lookup at any size (TestKeySet).
//
// A slot is 4 bytes. The table is built at load factor 1/2 (8 bytes a key)
// and filled up to 4/5 (5 bytes a key); then it is rebuilt from the
// key_hash column of the events table, which holds every key added (keys
// are added only after their batch committed), again at load 1/2: the
// fingerprints alone do not say where a key goes in a larger table. So it
// stays between 5 and 8 bytes a key, plus, between a rebuild becoming due
// and happening, the keys of one batch in a map (extra).
type keySet struct {
	slots []uint32            // fingerprints; 0 is empty
	n     int                 // keys in slots
	extra map[uint64]struct{} // keys added while slots were full, until the next rebuild
}

const (
	// The home slot's arithmetic (home) holds up to 2³² slots: 2³¹ keys.
	minSlots = 1 << 10
	// A table holds at most maxLoadNum/maxLoadDen keys a slot: at 4/5, a
	// lookup of a missing key reads about 13 slots (52 bytes), a found key 3.
	maxLoadNum, maxLoadDen = 4, 5
	// slotsPerKey is the size of a table built for n keys: 2n slots.
	slotsPerKey = 2
)

// KeyHash is the de-duplication hash of an event's (source, id): FNV-1a of
// source NUL id, as the events table's key_hash column holds it.
func KeyHash(source, id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(source))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return h.Sum64()
}

// newKeySet returns an empty set with room for n keys at load 1/2.
func newKeySet(n int) *keySet {
	return &keySet{slots: make([]uint32, max(minSlots, slotsPerKey*n))}
}

// fingerprint and home are where h lives: its fingerprint and the slot its
// probe run starts at.
func (k *keySet) fingerprint(h uint64) uint32 { return max(uint32(h), 1) }
func (k *keySet) home(h uint64) int {
	return int((h >> 32) * uint64(len(k.slots)) >> 32)
}

// has reports whether h may be in the set: true for every key added, and
// for a few others.
func (k *keySet) has(h uint64) bool {
	f, i := k.fingerprint(h), k.home(h)
	for {
		switch k.slots[i] {
		case f:
			return true
		case 0:
			if len(k.extra) > 0 {
				_, ok := k.extra[h]
				return ok
			}
			return false
		}
		if i++; i == len(k.slots) {
			i = 0
		}
	}
}

// add puts h in the set. A key added twice takes two slots (Write adds
// each stored event once). When the table is full (load 4/5) the key goes
// to extra, and full reports true until the set is rebuilt.
func (k *keySet) add(h uint64) {
	if (k.n+1)*maxLoadDen > len(k.slots)*maxLoadNum {
		if k.extra == nil {
			k.extra = make(map[uint64]struct{})
		}
		k.extra[h] = struct{}{}
		return
	}
	f, i := k.fingerprint(h), k.home(h)
	for k.slots[i] != 0 {
		if i++; i == len(k.slots) {
			i = 0
		}
	}
	k.slots[i] = f
	k.n++
}

// fits reports whether the table takes more keys without growing.
func (k *keySet) fits(more int) bool {
	return len(k.extra) == 0 && (k.n+more)*maxLoadDen <= len(k.slots)*maxLoadNum
}

func (k *keySet) len() int { return k.n + len(k.extra) }

// bytes is the memory the set holds: its slots, and about 40 bytes a key
// of extra (a Go map of uint64).
func (k *keySet) bytes() int { return 4*len(k.slots) + 40*len(k.extra) }

// loadKeys builds the set of the keys of every stored event (load_keys.sql).
func loadKeys(ctx context.Context, db *sql.DB) (*keySet, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("load event keys: %w", err)
	}
	ks, err := buildKeys(ctx, conn, 0)
	return ks, errors.Join(err, conn.Close())
}

// buildKeys builds the set of the keys of every stored event with room for
// more keys beyond them at load 1/2. It reads the key_hash column through
// the driver's rows, not database/sql's Scan, which is several times slower:
// the set is rebuilt while ingesting (each key is read again about 2.7 times
// over the set's growth from empty, as it grows 1.6 times at each rebuild;
// what a rebuild takes: BENCHMARKS.md, "Figures behind the defaults").
func buildKeys(ctx context.Context, conn *sql.Conn, more int) (*keySet, error) {
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil {
		return nil, fmt.Errorf("count events: %w", err)
	}
	ks := newKeySet(n + more)
	err := conn.Raw(func(dc any) (err error) {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		rows, err := q.QueryContext(ctx, queries.MustRead("ingest/load_keys.sql"), nil)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, rows.Close()) }()
		v := make([]driver.Value, 1)
		for {
			switch err := rows.Next(v); {
			case err == io.EOF:
				return nil
			case err != nil:
				return err
			}
			h, ok := v[0].(uint64)
			if !ok {
				return fmt.Errorf("key_hash of type %T, want uint64", v[0])
			}
			ks.add(h)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("load event keys: %w", err)
	}
	return ks, nil
}

// reserveKeys makes room in the set for a batch of n events before dedupe
// looks them up, rebuilding it from the events table when it is full. Call
// it with s.mu held.
func (s *Store) reserveKeys(ctx context.Context, n int) error {
	if s.keys.fits(n) {
		return nil
	}
	ks, err := buildKeys(ctx, s.w, n)
	if err != nil {
		return fmt.Errorf("grow the de-duplication keys: %w", err)
	}
	s.keys = ks
	return nil
}

// KeyBytes reports the memory the de-duplication set holds (its own size,
// not the Go heap around it).
func (s *Store) KeyBytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys.bytes()
}
