package ingest

import (
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/evosignal/evosignal/internal/store"
)

// Stats are the ingester's counters since it started. Safe for concurrent
// use: the loop writes, the HTTP handlers read.
type Stats struct {
	mu          sync.Mutex
	started     time.Time
	messages    int64
	accepted    int64
	duplicates  int64
	deadLetters int64
	redelivered int64
	batches     int64
	reanchors   int64
	skippedMsgs uint64 // stream messages removed before they were read
	lastSeq     uint64
	pending     uint64 // messages in the stream not yet delivered, as of the last message
	lastCommit  time.Time
	commitSecs  float64 // total time spent in store.Write
	lastErr     error
	stalledAt   time.Time // when the current run of failed commits began; zero when not stalled
	retries     int64     // failed commits retried

	factsRefreshes int64   // facts refreshes that stored something
	factsSessions  int64   // sessions whose facts were stored
	factsSecs      float64 // time spent storing facts
	factsFailures  int64

	deadByReason map[string]int64 // dead letters committed, by code
	// commits observes the duration of each successful commit of a batch
	// (store.Store.WriteIsolatingPart); registered by Handler.
	commits prometheus.Histogram
}

// Snapshot is a copy of the counters at one moment.
type Snapshot struct {
	Started     time.Time
	Messages    int64
	Accepted    int64
	Duplicates  int64
	DeadLetters int64
	Redelivered int64
	Batches     int64
	Reanchors   int64
	Skipped     uint64
	LastSeq     uint64
	Pending     uint64
	LastCommit  time.Time
	CommitSecs  float64
	LastErr     error
	// StalledSince is when the commits began to fail for a reason of the
	// environment (disk full, out of memory…), zero while they succeed.
	StalledSince time.Time
	Retries      int64

	FactsRefreshes int64
	FactsSessions  int64
	FactsSecs      float64
	FactsFailures  int64

	// DeadLettersByReason counts the dead letters committed by their
	// code (store.Dead.Code).
	DeadLettersByReason map[string]int64
}

func newStats() *Stats {
	return &Stats{
		started:      time.Now(),
		deadByReason: map[string]int64{},
		commits: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "evosignal_ingest_commit_duration_seconds",
			Help: "Time to commit one batch (events, derived rows, dead letters and the stream position in one transaction).",
			// 1ms to about 33s: a small batch on an idle disk to a 10,000-message batch under load.
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
	}
}

func (s *Stats) deadLetter(code string) {
	s.mu.Lock()
	s.deadByReason[code]++
	s.mu.Unlock()
}

func (s *Stats) add(r store.Result, messages int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages += int64(messages)
	s.accepted += int64(r.Accepted)
	s.duplicates += int64(r.Duplicates)
	s.deadLetters += int64(r.DeadLetters)
	s.batches++
	s.lastCommit = time.Now()
	s.lastErr = nil
}

// stall records a failed commit; first says it begins a stall.
func (s *Stats) stall(err error) (first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
	if s.stalledAt.IsZero() {
		s.stalledAt = time.Now()
		return true
	}
	s.retries++
	return false
}

// resume ends a stall: ok says there was one, since when and after how many
// retries.
func (s *Stats) resume() (since time.Time, retries int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalledAt.IsZero() {
		return time.Time{}, 0, false
	}
	since, ok = s.stalledAt, true
	s.stalledAt = time.Time{}
	s.lastErr = nil
	return since, s.retries, ok
}

// commitTook records the time of one commit attempt; ok says it
// committed (a failed attempt is not a commit latency).
func (s *Stats) commitTook(d time.Duration, ok bool) {
	s.mu.Lock()
	s.commitSecs += d.Seconds()
	s.mu.Unlock()
	if ok {
		s.commits.Observe(d.Seconds())
	}
}

func (s *Stats) position(seq, pending uint64) {
	s.mu.Lock()
	s.lastSeq, s.pending = seq, pending
	s.mu.Unlock()
}

func (s *Stats) redelivery() {
	s.mu.Lock()
	s.redelivered++
	s.mu.Unlock()
}

func (s *Stats) reanchor() {
	s.mu.Lock()
	s.reanchors++
	s.mu.Unlock()
}

func (s *Stats) skipped(n uint64) {
	s.mu.Lock()
	s.skippedMsgs += n
	s.mu.Unlock()
}

func (s *Stats) factsStored(sessions int, took time.Duration) {
	s.mu.Lock()
	s.factsRefreshes++
	s.factsSessions += int64(sessions)
	s.factsSecs += took.Seconds()
	s.mu.Unlock()
}

func (s *Stats) factsFailed() {
	s.mu.Lock()
	s.factsFailures++
	s.mu.Unlock()
}

func (s *Stats) failed(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{
		Started: s.started, Messages: s.messages, Accepted: s.accepted, Duplicates: s.duplicates,
		DeadLetters: s.deadLetters, Redelivered: s.redelivered, Batches: s.batches, Reanchors: s.reanchors, Skipped: s.skippedMsgs,
		LastSeq: s.lastSeq, Pending: s.pending, LastCommit: s.lastCommit, CommitSecs: s.commitSecs, LastErr: s.lastErr,
		StalledSince: s.stalledAt, Retries: s.retries,
		FactsRefreshes: s.factsRefreshes, FactsSessions: s.factsSessions, FactsSecs: s.factsSecs, FactsFailures: s.factsFailures,
		DeadLettersByReason: maps.Clone(s.deadByReason),
	}
}
