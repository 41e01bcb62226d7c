package hooks

import "github.com/evosignal/evosignal/internal/adapter"

// Memory of a hook translation is bounded by the number of sessions it
// holds (docs/operations.md, "Limits"): at most Config.MaxOpen open
// (adapter.DefaultMaxOpen by default), and the keys of at most doneFactor
// times as many ended or dropped ones, remembered so that a late record of
// one is ignored rather than starting it again.
const doneFactor = 10

// maxOpen is cfg's bound of open sessions.
func (c Config) maxOpen() int {
	if c.MaxOpen > 0 {
		return c.MaxOpen
	}
	return adapter.DefaultMaxOpen
}

// Done is a bounded set of the keys of sessions ended or dropped: past its
// bound the key added first is forgotten (and handed to OnForget). Add and
// Has are O(1).
type Done struct {
	set   map[string]struct{}
	ring  []string // the keys, oldest at next once full
	next  int
	limit int
	// OnForget, when not nil, is called with each key forgotten.
	OnForget func(key string)
}

// NewDone returns a Done that remembers max keys.
func NewDone(max int) *Done {
	return &Done{set: map[string]struct{}{}, limit: max}
}

// Add remembers key.
func (d *Done) Add(key string) {
	if _, ok := d.set[key]; ok {
		return
	}
	d.set[key] = struct{}{}
	if len(d.ring) < d.limit {
		d.ring = append(d.ring, key)
		return
	}
	old := d.ring[d.next]
	delete(d.set, old)
	if d.OnForget != nil {
		d.OnForget(old)
	}
	d.ring[d.next] = key
	d.next = (d.next + 1) % len(d.ring)
}

// Has reports whether key is remembered.
func (d *Done) Has(key string) bool {
	_, ok := d.set[key]
	return ok
}
