package store

import (
	"fmt"
	"testing"
)

// splitmix64 is a stream of well-mixed 64-bit values, standing in for
// FNV-1a key hashes.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// The set never forgets a key, through many rebuilds from a small table,
// stays under 10 bytes a key once it holds more than a few batches, and
// answers yes for a key it was not given about once in 10⁹ lookups.
func TestKeySet(t *testing.T) {
	const (
		keys    = 3_000_000
		batch   = 10_000
		lookups = 4_000_000
	)
	if testing.Short() {
		t.Skip("3M keys; run without -short")
	}
	var added []uint64
	ks, rebuilds := newKeySet(0), 0
	src := splitmix64(1)
	for len(added) < keys {
		if !ks.fits(batch) {
			// As reserveKeys does, from the events table.
			ks = newKeySet(len(added) + batch)
			for _, h := range added {
				ks.add(h)
			}
			rebuilds++
			if n := len(added); n >= 5*batch {
				if got := float64(ks.bytes()) / float64(n); got > 10 {
					t.Fatalf("after the rebuild at %d keys: %.2f bytes a key, want ≤ 10", n, got)
				}
			}
		}
		from := len(added)
		for range batch {
			h := src.next()
			ks.add(h)
			added = append(added, h)
		}
		for _, h := range added[from:] {
			if !ks.has(h) {
				t.Fatalf("has(%#x) = false after add, with %d keys", h, len(added))
			}
		}
		if n := len(added); n >= 5*batch {
			if got := float64(ks.bytes()) / float64(n); got > 10 {
				t.Fatalf("at %d keys: %.2f bytes a key, want ≤ 10", n, got)
			}
		}
	}
	if rebuilds < 10 {
		t.Fatalf("%d rebuilds, want ≥ 10 (the test must cross many)", rebuilds)
	}
	if ks.len() != keys {
		t.Fatalf("len() = %d, want %d", ks.len(), keys)
	}
	for _, h := range added {
		if !ks.has(h) {
			t.Fatalf("has(%#x) = false at the end", h)
		}
	}
	// Other keys: a false positive is possible, just rare.
	others := splitmix64(2)
	fp := 0
	for range lookups {
		if ks.has(others.next()) {
			fp++
		}
	}
	// The expected rate: a missing key compares with each full slot of the
	// run from its home to the next empty slot, and matches one with
	// probability 2⁻³².
	run, full := 0, 0
	for i := 2*len(ks.slots) - 1; i >= 0; i-- { // twice round: runs wrap
		if ks.slots[i%len(ks.slots)] == 0 {
			run = 0
		} else {
			run++
		}
		if i < len(ks.slots) {
			full += run
		}
	}
	meanRun := float64(full) / float64(len(ks.slots))
	t.Logf("%d keys, %d rebuilds, %.2f bytes a key, load %.2f; false positives: %d in %d lookups of other keys (expected %.2g a lookup: %.2f slots compared × 2⁻³²)",
		keys, rebuilds, float64(ks.bytes())/keys, float64(ks.n)/float64(len(ks.slots)), fp, lookups, meanRun/(1<<32), meanRun)
	if fp > 10 {
		t.Fatalf("%d false positives in %d lookups, want about 0.004", fp, lookups)
	}
}

// Keys whose fingerprint bits are 0, keys that share a home slot, and keys
// added when the table is full are all found.
func TestKeySetEdges(t *testing.T) {
	ks := newKeySet(0)
	var added []uint64
	add := func(h uint64) {
		ks.add(h)
		added = append(added, h)
	}
	add(0)
	add(1)                     // the same fingerprint as 0, the same home
	add(0xffff_ffff_0000_0000) // fingerprint bits 0, last home: wraps
	for i := range uint64(500) {
		add(0xffff_ffff_0000_0000 | i<<8) // the last home slot, many times
	}
	src := splitmix64(3)
	for ks.fits(1) {
		add(src.next())
	}
	if len(ks.extra) != 0 {
		t.Fatalf("extra holds %d keys before the table is full", len(ks.extra))
	}
	for range 100 {
		add(src.next()) // full: to extra
	}
	if len(ks.extra) != 100 || ks.fits(0) {
		t.Fatalf("after adds to a full table: extra %d, fits(0) %v; want 100, false", len(ks.extra), ks.fits(0))
	}
	for _, h := range added {
		if !ks.has(h) {
			t.Fatalf("has(%#x) = false", h)
		}
	}
	if ks.len() != len(added) {
		t.Fatalf("len() = %d, want %d", ks.len(), len(added))
	}
}

// Writing through many rebuilds of the set, then re-sending everything:
// every re-send is found (a duplicate), every new event stored, and the set
// stays compact.
func TestKeysGrowFromTheTable(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	const batches, per = 12, 1000
	var all []Item
	rebuilds := 0
	for b := range batches {
		items := make([]Item, per)
		for i := range items {
			items[i] = Item{Event: newEvent(t, "coder/h/w1", fmt.Sprintf("s%d", b), int64(i+1))}
		}
		slots := len(s.keys.slots)
		res, err := s.Write(ctx, Batch{Origin: FromFile, Items: items})
		if err != nil {
			t.Fatal(err)
		}
		if res.Accepted != per {
			t.Fatalf("batch %d: %+v, want %d accepted", b, res, per)
		}
		if len(s.keys.slots) != slots {
			rebuilds++
		}
		all = append(all, items...)
	}
	if got, want := s.Keys(), batches*per; got != want {
		t.Fatalf("Keys() = %d, want %d", got, want)
	}
	if rebuilds < 4 {
		t.Fatalf("the set was rebuilt %d times, want ≥ 4 (the test must cross rebuilds)", rebuilds)
	}
	for from := 0; from < len(all); from += 3 * per {
		res, err := s.Write(ctx, Batch{Origin: FromFile, Items: all[from : from+3*per]})
		if err != nil {
			t.Fatal(err)
		}
		if want := (Result{Duplicates: 3 * per}); res != want {
			t.Fatalf("re-send of events %d–%d = %+v, want %+v", from, from+3*per, res, want)
		}
	}
	if got := float64(s.KeyBytes()) / float64(s.Keys()); got > 10 {
		t.Fatalf("%.2f bytes a key, want ≤ 10", got)
	}
}

// BenchmarkKeySet measures a lookup of a missing key (every new event), of
// a present one, and an add, in a set of 1M keys at load 0.625.
func BenchmarkKeySet(b *testing.B) {
	const n = 1_000_000
	ks := newKeySet(n * 5 / 4) // load 1/2 after n·5/4 keys: 0.625 after n
	src := splitmix64(4)
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = src.next()
		ks.add(keys[i])
	}
	b.Run("has-missing", func(b *testing.B) {
		other := splitmix64(5)
		for b.Loop() {
			ks.has(other.next())
		}
	})
	b.Run("has-present", func(b *testing.B) {
		i := 0
		for b.Loop() {
			ks.has(keys[i%n])
			i++
		}
	})
	b.Run("add", func(b *testing.B) {
		other := splitmix64(6)
		for b.Loop() {
			if !ks.fits(1) {
				ks = newKeySet(n * 5 / 4)
			}
			ks.add(other.next())
		}
	})
}
