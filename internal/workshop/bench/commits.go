package bench

import (
	"slices"
	"sync"
	"time"

	"github.com/evosignal/evosignal/internal/store"
)

// commitTimes collects the store's "commit" step (the COMMIT statement of a
// batch) and each Write's statements together, from its StepTimer, for the
// latency figures of the ingest and concurrent phases (issue 24: the longest
// commit, and whether a checkpoint lands in one).
type commitTimes struct {
	mu      sync.Mutex
	commits []time.Duration
	writes  []time.Duration // "dedupe" to "commit": a batch's statements
	cur     time.Duration
}

func (c *commitTimes) step(name string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name == "dedupe" {
		c.cur = 0
	}
	c.cur += d
	if name == "commit" {
		c.commits = append(c.commits, d)
		c.writes = append(c.writes, c.cur)
	}
}

// extra adds the figures to a phase's notes, with the store's checkpoints.
func (c *commitTimes) extra(x map[string]any, st *store.Store) {
	c.mu.Lock()
	commits, writes := slices.Clone(c.commits), slices.Clone(c.writes)
	c.mu.Unlock()
	slices.Sort(commits)
	slices.Sort(writes)
	x["commit_max_ms"] = ms(quantile(commits, 1))
	x["commit_p99_ms"] = ms(quantile(commits, 0.99))
	x["commit_p50_ms"] = ms(quantile(commits, 0.5))
	x["write_max_ms"] = ms(quantile(writes, 1))
	x["write_p99_ms"] = ms(quantile(writes, 0.99))
	if st == nil {
		return
	}
	ck := st.CheckpointStats()
	x["checkpoints"] = ck.Checkpoints
	x["checkpoint_seconds"] = ck.Total.Seconds()
	x["checkpoint_max_ms"] = ms(ck.Longest)
	x["checkpoint_failures"] = ck.Failures
	x["checkpoint_busy"] = ck.Busy
	x["wal_limit_waits"] = ck.Waits
}

// quantile of sorted ds (q=1: the largest); 0 when empty.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
