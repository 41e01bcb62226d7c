package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/store"
)

// errReanchor asks Run to recreate the consumer at the committed position.
var errReanchor = errors.New("re-anchor consumer")

// Run consumes the stream until ctx is done; then it stops fetching, commits
// the batch in hand, acks it and returns nil. It returns an error when the
// stream cannot be read or a batch cannot be committed (after retries); what
// was not committed is not acked and is read again on the next start.
//
// Exactly once: the position (the last stream sequence committed) is stored
// in the same transaction as the batch's rows. The durable consumer is
// anchored at that position on start and whenever delivery leaves a gap
// (after a server restart, pending messages come back only after the ack
// wait, behind newer ones), and messages at or below what this run has
// already taken are never written again.
func (in *Ingester) Run(ctx context.Context, js jetstream.JetStream) error {
	st, err := js.Stream(ctx, in.cfg.Stream)
	if err != nil {
		return fmt.Errorf("open stream %s: %w", in.cfg.Stream, err)
	}
	committed, err := in.store.Position(ctx, in.cfg.Stream)
	if err != nil {
		return err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s info: %w", in.cfg.Stream, err)
	}
	if committed > info.State.LastSeq {
		in.log.Warn("the database is ahead of the stream (was the stream recreated?); reading the stream from its start, duplicates are skipped by (source, id)",
			"stream", in.cfg.Stream, "committed", committed, "stream_last_seq", info.State.LastSeq)
		committed = 0
	}
	in.log.Info("ingesting", "stream", in.cfg.Stream, "from_seq", committed+1,
		"stream_last_seq", info.State.LastSeq, "db", in.store.Path())
	r := &natsRun{in: in, st: st, committed: committed, lastLog: time.Now()}
	backoff := 100 * time.Millisecond
	for {
		err := r.consume(ctx)
		switch {
		case err != nil && r.fatal:
			return err
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errReanchor):
			in.stats.reanchor()
			backoff = 100 * time.Millisecond
		case err != nil:
			in.stats.failed(err)
			in.log.Warn("stream interrupted; re-anchoring", "err", err, "retry_in", backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

// natsRun is the state of one Run.
type natsRun struct {
	in        *Ingester
	st        jetstream.Stream
	committed uint64 // last stream sequence committed to the store
	fatal     bool   // the last error must end Run

	msgs    []jetstream.Msg
	items   []store.Item
	firstAt time.Time
	lastLog time.Time
}

// consume anchors the consumer at the committed position and processes
// messages until ctx is done, a gap is seen or the stream fails.
func (r *natsRun) consume(ctx context.Context) error {
	cfg := r.in.cfg
	cons, err := bus.AnchorConsumer(ctx, r.st, bus.ConsumerConfig{
		Durable:       cfg.Durable,
		Filter:        cfg.Prefix + ".>",
		AckWait:       cfg.AckWait,
		MaxAckPending: 4 * cfg.BatchSize,
	}, r.committed)
	if err != nil {
		return err
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(2*cfg.BatchSize), jetstream.PullExpiry(5*time.Second))
	if err != nil {
		return fmt.Errorf("pull from consumer %s: %w", cfg.Durable, err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()

	seen := r.committed // highest stream sequence taken into a batch
	based := false      // whether the first message after anchoring was seen
	for {
		var msg jetstream.Msg
		if len(r.items) == 0 {
			msg, err = it.Next()
		} else {
			wait := cfg.FlushInterval - time.Since(r.firstAt)
			if wait <= 0 {
				if err := r.flush(ctx, seen); err != nil {
					return err
				}
				continue
			}
			msg, err = it.Next(jetstream.NextMaxWait(wait))
		}
		if errors.Is(err, nats.ErrTimeout) {
			if err := r.flush(ctx, seen); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			// Stopped (ctx done), consumer deleted, connection closed: keep
			// what was taken, then let Run decide.
			return errors.Join(err, r.flush(ctx, seen))
		}
		meta, err := msg.Metadata()
		if err != nil {
			return errors.Join(fmt.Errorf("message metadata: %w", err), r.flush(ctx, seen))
		}
		s := meta.Sequence.Stream
		if s <= seen {
			// A redelivery of a message already taken. Committed ones are
			// acked again; one still in the batch in hand is acked with it.
			r.in.stats.redelivery()
			if s <= r.committed {
				msg.Ack()
			}
			continue
		}
		if based && s != seen+1 {
			// Messages between were delivered and lost (a server restart) or
			// deleted from the stream: commit what we have and start again
			// right after it. A deleted range is then simply skipped.
			r.in.log.Info("gap in delivery; re-anchoring", "expected", seen+1, "got", s)
			if err := r.flush(ctx, seen); err != nil {
				return err
			}
			return errReanchor
		}
		based = true
		seen = s
		if len(r.items) == 0 {
			r.firstAt = time.Now()
		}
		r.msgs = append(r.msgs, msg)
		r.items = append(r.items, withSeq(classify(msg.Data(), msg.Subject(), cfg.Prefix, cfg.MaxEventBytes), s))
		r.in.stats.position(s, meta.NumPending)
		if len(r.items) >= cfg.BatchSize {
			if err := r.flush(ctx, seen); err != nil {
				return err
			}
		}
	}
}

func withSeq(it store.Item, seq uint64) store.Item {
	it.StreamSeq = seq
	return it
}

// flush commits the batch in hand with the position reached, then acks its
// messages. A commit is retried a few times; if it still fails the error is
// fatal and nothing of the batch is acked.
func (r *natsRun) flush(ctx context.Context, pos uint64) error {
	if len(r.items) == 0 {
		return nil
	}
	// The batch in hand is committed even when ctx is done: that is the
	// orderly shutdown.
	wctx := context.WithoutCancel(ctx)
	b := store.Batch{Origin: store.FromNATS, Stream: r.in.cfg.Stream, Position: pos, Items: r.items}
	var res store.Result
	var err error
	for attempt, wait := 1, 200*time.Millisecond; ; attempt, wait = attempt+1, wait*2 {
		t0 := time.Now()
		res, err = r.in.store.Write(wctx, b)
		r.in.stats.commitTook(time.Since(t0))
		if err == nil {
			break
		}
		r.in.stats.failed(err)
		if attempt == 3 {
			r.fatal = true
			return fmt.Errorf("commit batch of %d messages up to seq %d: %w", len(r.items), pos, err)
		}
		r.in.log.Warn("commit failed; retrying", "attempt", attempt, "err", err)
		time.Sleep(wait)
	}
	r.committed = pos
	for _, m := range r.msgs {
		m.Ack() // best effort: the position is in the store; a lost ack only means a redelivery
	}
	r.in.stats.add(res, len(r.items))
	if time.Since(r.lastLog) >= r.in.cfg.Progress {
		r.lastLog = time.Now()
		r.in.logProgress()
	}
	clear(r.msgs)
	clear(r.items)
	r.msgs, r.items = r.msgs[:0], r.items[:0]
	return nil
}

// logProgress logs rates and lag since start.
func (in *Ingester) logProgress() {
	s := in.stats.Snapshot()
	el := time.Since(s.Started).Seconds()
	in.log.Info("progress",
		"messages", s.Messages, "accepted", s.Accepted, "duplicates", s.Duplicates,
		"dead_letters", s.DeadLetters, "events_per_s", int64(float64(s.Messages)/el),
		"last_seq", s.LastSeq, "lag", s.Pending)
}
