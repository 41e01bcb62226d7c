package sqlservice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// DefaultMaxRSS is the process's resident memory past which the service
// stops the queries running (Config.MaxRSS): above the ingester's own
// budget (1.15-1.65 GiB with the default memory limits,
// docs/operations.md), so ingestion alone never reaches it.
const DefaultMaxRSS = 2 << 30

// watchEvery is how often the watchdog reads the process's memory while a
// query runs.
const watchEvery = 50 * time.Millisecond

// errMemory is the cause of a query stopped by the watchdog.
var errMemory = errors.New("memory budget")

// watchdog stops every running query when the process's resident memory
// passes a bound: DuckDB's memory limit does not cover every allocation (a
// value built by an expression counts only once it is stored), so the
// process itself is watched.
type watchdog struct {
	max     int64
	mu      sync.Mutex
	running map[*context.CancelCauseFunc]struct{}
	stopped int64 // queries stopped, for the stats
	rss     func() (int64, error)
}

func newWatchdog(max int64) *watchdog {
	return &watchdog{max: max, running: map[*context.CancelCauseFunc]struct{}{}, rss: residentBytes}
}

// watch registers a query's context for the watchdog; done deregisters it.
func (w *watchdog) watch(ctx context.Context) (context.Context, func()) {
	if w == nil || w.max <= 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w.mu.Lock()
	w.running[&cancel] = struct{}{}
	w.mu.Unlock()
	return ctx, func() {
		w.mu.Lock()
		delete(w.running, &cancel)
		w.mu.Unlock()
		cancel(nil)
	}
}

// run checks the memory while queries run, until ctx ends.
func (w *watchdog) run(ctx context.Context, log interface{ Warn(string, ...any) }) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		n := len(w.running)
		w.mu.Unlock()
		if n == 0 {
			continue
		}
		rss, err := w.rss()
		if err != nil || rss <= w.max {
			continue
		}
		cause := fmt.Errorf("%w: the process holds %d MiB, past the query service's bound of %d MiB (ingest -query-max-rss)", errMemory, rss>>20, w.max>>20)
		w.mu.Lock()
		for cancel := range w.running {
			(*cancel)(cause)
			delete(w.running, cancel)
			w.stopped++
		}
		w.mu.Unlock()
		log.Warn("queries stopped: the process passed the query service's memory bound", "queries", n, "rss_mib", rss>>20, "max_mib", w.max>>20)
	}
}

// Stopped is how many queries the watchdog stopped.
func (w *watchdog) Stopped() int64 {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

// residentBytes is the process's resident set size (Linux: /proc/self/statm).
func residentBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, errors.New("statm: unexpected format")
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, err
	}
	return pages * int64(os.Getpagesize()), nil
}
