package ingest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/evosignal/evosignal/internal/store"
)

// Dead letters are logged where a person looks: each one in full (code,
// reason, where it came from, its id), at most deadLogBurst in a
// deadLogWindow; past that they are counted and the count logged when the
// window ends (at the next dead letter after it, a progress line, or the
// end of a file).
const (
	deadLogBurst  = 20
	deadLogWindow = time.Minute
)

// deadLog rate-limits the dead-letter log lines.
type deadLog struct {
	mu         sync.Mutex
	start      time.Time // the current window's start
	logged     int       // dead letters logged in full in this window
	suppressed int       // dead letters counted but not logged in this window
}

// deadLetter records a dead letter the store committed: counted by reason,
// and logged (rate-limited) or handed to the hook set with OnDeadLetter.
func (in *Ingester) deadLetter(it store.Item) {
	in.stats.deadLetter(it.Dead.Code)
	if in.onDead != nil {
		in.onDead(it)
		return
	}
	in.logDeadLetter(it)
}

// OnDeadLetter sets f to be called with each dead letter after the batch
// holding it committed (file loads and the stream alike), in place of the
// log line the ingester writes otherwise: the caller shows them (ingest
// -file prints them with their line numbers). Set it before Run or
// LoadFile; f runs on the writing goroutine.
func (in *Ingester) OnDeadLetter(f func(store.Item)) { in.onDead = f }

func (in *Ingester) logDeadLetter(it store.Item) {
	l := &in.deadLog
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.start) >= deadLogWindow {
		in.flushDeadLogLocked()
		l.start = now
	}
	if l.logged >= deadLogBurst {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	l.logged++
	l.mu.Unlock()
	d := it.Dead
	args := []any{"code", d.Code, "reason", d.Reason}
	switch {
	case it.File != "":
		args = append(args, "file", it.File, "line", it.Line)
	case it.Subject != "":
		args = append(args, "subject", it.Subject, "stream_seq", it.StreamSeq)
	}
	if d.Source != "" {
		args = append(args, "source", d.Source)
	}
	if d.ID != "" {
		args = append(args, "id", d.ID)
	}
	if d.Type != "" {
		args = append(args, "type", d.Type)
	}
	in.log.Warn("dead letter", args...)
}

// flushDeadLog logs how many dead letters were counted without being
// logged since the last time, if any.
func (in *Ingester) flushDeadLog() {
	in.deadLog.mu.Lock()
	defer in.deadLog.mu.Unlock()
	in.flushDeadLogLocked()
}

func (in *Ingester) flushDeadLogLocked() {
	l := &in.deadLog
	if l.suppressed > 0 {
		in.log.Warn("more dead letters, not logged one by one (see the dead_letters table)",
			"count", l.suppressed, "since", l.start.UTC().Format(time.RFC3339))
	}
	l.logged, l.suppressed = 0, 0
}

// DeadLetter stores raw, an event that could not reach the stream (e.g.
// larger than the NATS max payload), as a dead letter with code and reason,
// as if it had been read from a file named from (e.g. "otlp"); subject is
// where it was to be published. It is counted and logged like any dead
// letter. Safe to call while Run runs: the store serializes writes.
func (in *Ingester) DeadLetter(ctx context.Context, raw []byte, from, subject, code, reason string) error {
	it := store.Item{Raw: raw, Subject: subject, File: from, Dead: &store.Dead{Code: code, Reason: reason}}
	peekEnvelope(raw, it.Dead)
	if _, err := in.commitRetrying(ctx, store.Batch{Origin: store.FromFile, Items: []store.Item{it}}); err != nil {
		return fmt.Errorf("dead-letter %s event %s: %w", code, it.Dead.ID, err)
	}
	return nil
}
