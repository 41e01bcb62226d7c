package web

import (
	"sync"
	"time"
)

// cache keeps what the pages computed for a version of the data
// (dataVersion): the analysis pages, which run the analyzers over the
// whole window, and the filter's choices. An entry serves while the data
// has not changed and for at most ttl (the default window ends at now, so
// an old entry's window has moved on); one computation runs per key at a
// time, and requests that arrive meanwhile wait for it. Errors are not
// kept.
type cache struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	version string
	at      time.Time
	done    chan struct{}
	val     any
	err     error
}

func newCache(ttl time.Duration, max int) *cache {
	return &cache{ttl: ttl, max: max, now: time.Now, m: map[string]*entry{}}
}

// get returns the value of key at version, computing it with build when
// the cache has none.
func (c *cache) get(key, version string, build func() (any, error)) (any, error) {
	if c == nil || c.ttl <= 0 {
		return build()
	}
	now := c.now()
	c.mu.Lock()
	if e := c.m[key]; e != nil && e.version == version && now.Sub(e.at) < c.ttl {
		c.mu.Unlock()
		<-e.done
		return e.val, e.err
	}
	e := &entry{version: version, at: now, done: make(chan struct{})}
	c.m[key] = e
	for k, old := range c.m { // over the bound: drop entries of other versions or expired, then any
		if len(c.m) <= c.max {
			break
		}
		if k != key && (old.version != version || now.Sub(old.at) >= c.ttl) {
			delete(c.m, k)
		}
	}
	for k := range c.m {
		if len(c.m) <= c.max {
			break
		}
		if k != key {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
	e.val, e.err = build()
	close(e.done)
	if e.err != nil {
		c.mu.Lock()
		if c.m[key] == e {
			delete(c.m, key)
		}
		c.mu.Unlock()
	}
	return e.val, e.err
}
