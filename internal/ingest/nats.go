package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
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
//
// Opening the stream and anchoring the consumer wait out a JetStream
// cluster that is electing a leader or missing a node (retried with
// backoff, /healthz failing meanwhile); Run then ends only when ctx does or
// on a permanent error (bus.Permanent): a missing stream, a consumer of
// another database.
func (in *Ingester) Run(ctx context.Context, js jetstream.JetStream) error {
	var st jetstream.Stream
	var info *jetstream.StreamInfo
	retry := in.SetupRetry("open stream " + in.cfg.Stream)
	err := retry.Do(ctx, func(ctx context.Context) (err error) {
		if st, err = js.Stream(ctx, in.cfg.Stream); err != nil {
			return fmt.Errorf("open stream %s: %w", in.cfg.Stream, err)
		}
		if info, err = st.Info(ctx); err != nil {
			return fmt.Errorf("stream %s info: %w", in.cfg.Stream, err)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before anything was taken
		}
		return err
	}
	in.Healthy()
	committed, created, err := in.store.PositionOf(ctx, in.cfg.Stream)
	if err != nil {
		return err
	}
	database, err := in.store.Identity(ctx)
	if err != nil {
		return err
	}
	if committed > 0 && !created.IsZero() && !created.Equal(info.Created.UTC().Truncate(time.Microsecond)) {
		in.log.Warn("the stream was recreated since the last commit; reading it from its start, duplicates are skipped by (source, id)",
			"stream", in.cfg.Stream, "committed", committed, "committed_stream_created", created, "stream_created", info.Created)
		committed = 0
	} else if committed > info.State.LastSeq {
		in.log.Warn("the database is ahead of the stream (was the stream recreated?); reading the stream from its start, duplicates are skipped by (source, id)",
			"stream", in.cfg.Stream, "committed", committed, "stream_last_seq", info.State.LastSeq)
		committed = 0
	}
	in.log.Info("ingesting", "stream", in.cfg.Stream, "from_seq", committed+1,
		"stream_last_seq", info.State.LastSeq, "db", in.store.Path())
	r := &natsRun{in: in, st: st, database: database, created: info.Created.UTC().Truncate(time.Microsecond), lastLog: time.Now()}
	r.committed.Store(committed)
	backoff := 100 * time.Millisecond
	for {
		err := r.consume(ctx)
		switch {
		case err != nil && r.fatal.Load():
			return err
		case errors.Is(err, bus.ErrConsumerTaken):
			return err // another database's ingester: never take its consumer
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errReanchor):
			in.stats.reanchor()
			backoff = 100 * time.Millisecond
		case err != nil:
			in.stats.failed(err)
			r.setupFailed.Store(true)
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

// Unhealthy makes /healthz report err (503) until Healthy or the next
// commit: the hook for set-up done outside Run, such as creating the stream
// (see SetupRetry).
func (in *Ingester) Unhealthy(err error) { in.stats.failed(err) }

// Healthy clears what Unhealthy reported.
func (in *Ingester) Healthy() { in.stats.failed(nil) }

// SetupRetry is the bus.Retry for JetStream set-up (what names it): it
// logs each failed attempt and reports the ingester unhealthy meanwhile.
func (in *Ingester) SetupRetry(what string) bus.Retry {
	return bus.Retry{OnRetry: func(err error, wait time.Duration) {
		in.Unhealthy(err)
		in.log.Warn(what+" failed; retrying (is the NATS cluster electing a leader or missing a node?)", "err", err, "retry_in", wait)
	}}
}

// natsRun is the state of one Run.
type natsRun struct {
	in        *Ingester
	st        jetstream.Stream
	database  string        // the store's identity, recorded on the consumer
	created   time.Time     // the stream's creation time, stored with the position
	committed atomic.Uint64 // last stream sequence committed to the store
	fatal     atomic.Bool   // the last error must end Run
	// setupFailed: /healthz reports a failed consumer set-up (or stream
	// interruption) until the consumer is anchored again.
	setupFailed atomic.Bool

	// The batch being built.
	last    jetstream.Msg // its last message, which acks it
	items   []store.Item
	bytes   int // of its messages, payload and headers
	firstAt time.Time
	lastLog time.Time
	// limit is the most messages the batch being built takes: BatchSize
	// while the ingester keeps up, up to MaxBatchSize while it is behind
	// (nextLimit). pending is what waits in the stream after the last
	// message taken (its NumPending).
	limit   int
	pending uint64

	// The batch being committed: the loop builds the next batch while the
	// committer goroutine writes the previous one (at most one in flight),
	// so decoding overlaps the DuckDB transaction.
	toCommit chan *batch
	results  chan error
	inflight bool
	seen     uint64 // highest stream sequence taken into a batch
}

// batch is a full batch handed to the committer.
type batch struct {
	last  jetstream.Msg // acks the batch once committed (the consumer acks all up to it)
	items []store.Item
	pos   uint64
}

// consume anchors the consumer at the committed position and processes
// messages until ctx is done, a gap is seen or the stream fails. It returns
// only after the batches it took are committed (or failed).
func (r *natsRun) consume(ctx context.Context) (err error) {
	cfg := r.in.cfg
	cons, err := bus.AnchorConsumer(ctx, r.st, bus.ConsumerConfig{
		Durable:       cfg.Durable,
		Filter:        cfg.filter(),
		AckWait:       cfg.AckWait,
		MaxAckPending: maxAckPending(cfg),
		Database:      r.database,
	}, r.committed.Load())
	if err != nil {
		return err
	}
	if r.setupFailed.Swap(false) {
		r.in.Healthy()
	}
	it, err := pull(cons, pullMessages(cfg))
	if err != nil {
		return fmt.Errorf("pull from consumer %s: %w", cfg.Durable, err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()

	r.toCommit, r.results = make(chan *batch), make(chan error)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.commitLoop(ctx) }()
	defer func() {
		// Keep what was taken: hand over the batch in hand, wait for the
		// commits, stop the committer.
		err = errors.Join(err, r.handOff(r.seen), r.wait())
		close(r.toCommit)
		wg.Wait()
	}()

	r.seen = r.committed.Load()
	r.limit = cfg.BatchSize
	based := false                                    // whether the first message after anchoring was seen
	var delivered uint64                              // the consumer sequence of the last message delivered
	whole := cfg.Partitions == 0 || cfg.Partition < 0 // the consumer reads every subject of the stream
	for {
		var msg jetstream.Msg
		if len(r.items) == 0 && r.inflight {
			// Nothing in hand but a batch committing: look at its result
			// soon, so a failure ends the run even when the stream is idle.
			msg, err = it.next(cfg.FlushInterval)
		} else if len(r.items) == 0 {
			msg, err = it.next(0)
		} else if r.filling() {
			// Behind: the batch fills from what waits in the stream, so
			// its age does not matter; if delivery stalls for a flush
			// interval, what is in hand is committed.
			msg, err = it.next(cfg.FlushInterval)
		} else {
			wait := cfg.FlushInterval - time.Since(r.firstAt)
			if wait <= 0 {
				if err := r.handOff(r.seen); err != nil {
					return err
				}
				continue
			}
			msg, err = it.next(wait)
		}
		if errors.Is(err, nats.ErrTimeout) {
			if len(r.items) == 0 {
				if err := r.wait(); err != nil {
					return err
				}
				continue
			}
			if err := r.handOff(r.seen); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			// Stopped (ctx done), consumer deleted, connection closed: the
			// deferred hand-over keeps what was taken; Run decides.
			return err
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("message metadata: %w", err)
		}
		// The consumer numbers its deliveries 1, 2, … (a redelivery takes
		// the next number too): a number skipped is a delivery lost (a
		// server restart, a leader change), a number repeated a consumer
		// whose state went back. Either way: commit what we have and start
		// again right after it. Stream sequences cannot tell: on a
		// partition's filtered consumer they skip by design.
		d := meta.Sequence.Consumer
		if delivered > 0 && d != delivered+1 {
			r.in.log.Info("gap in delivery; re-anchoring", "consumer_seq_expected", delivered+1, "consumer_seq_got", d, "stream_seq", meta.Sequence.Stream)
			return errReanchor
		}
		delivered = d
		s := meta.Sequence.Stream
		if s <= r.seen {
			// A redelivery of a message already taken. Committed ones are
			// acked again; one still in a batch is acked with it.
			r.in.stats.redelivery()
			if s <= r.committed.Load() {
				msg.Ack()
			}
			continue
		}
		if !based && s > r.seen+1 && whole {
			// The stream no longer holds seen+1 … s-1 (retention removed
			// them, or they were deleted) before they were read: say so.
			// (A partition's consumer sees only its own sequences.)
			r.in.stats.skipped(s - r.seen - 1)
			r.in.log.Warn("messages removed from the stream before they were ingested",
				"first", r.seen+1, "last", s-1, "count", s-r.seen-1)
		}
		based = true
		r.seen = s
		if len(r.items) == 0 {
			r.firstAt = time.Now()
		}
		r.last = msg
		r.bytes += msgBytes(msg)
		r.pending = meta.NumPending
		// A CloudEvent in binary content mode (attributes in ce-* headers)
		// is turned into the structured form first, so it is validated
		// and stored like any other.
		raw := events.Structured(msg.Headers(), msg.Data())
		r.items = append(r.items, withSeq(classify(raw, msg.Subject(), cfg), s))
		r.in.stats.position(s, meta.NumPending)
		if len(r.items) >= r.limit || r.bytes >= cfg.MaxBatchBytes {
			if err := r.handOff(r.seen); err != nil {
				return err
			}
		}
	}
}

func withSeq(it store.Item, seq uint64) store.Item {
	it.StreamSeq = seq
	return it
}

// handOff gives the batch in hand, reaching stream position pos, to the
// committer, after the previous batch's commit finished.
func (r *natsRun) handOff(pos uint64) error {
	if len(r.items) == 0 {
		return nil
	}
	if err := r.wait(); err != nil {
		return err
	}
	r.toCommit <- &batch{last: r.last, items: r.items, pos: pos}
	r.inflight = true
	r.limit = nextLimit(r.in.cfg, r.limit, r.pending)
	// Room for as many as the batch just handed over, which the byte
	// budget may have ended well below the limit.
	n := min(r.limit, max(r.in.cfg.BatchSize, len(r.items)))
	r.last, r.items, r.bytes = nil, make([]store.Item, 0, n), 0
	return nil
}

// nextLimit is the most messages the next batch takes, after a batch
// taken with limit that left pending messages in the stream. Behind
// (more than that batch waits), the limit doubles up to MaxBatchSize: a
// larger transaction costs less per event. Caught up (less than
// BatchSize waits), it is BatchSize again, so that a batch is committed
// as soon as it is full. In between it stays.
func nextLimit(cfg Config, limit int, pending uint64) int {
	switch {
	case pending > uint64(limit):
		return min(2*limit, cfg.MaxBatchSize)
	case pending < uint64(cfg.BatchSize):
		return cfg.BatchSize
	}
	return limit
}

// filling says whether the batch in hand fills from what already waits
// in the stream, as of the last message taken.
func (r *natsRun) filling() bool {
	return r.pending >= uint64(r.limit-len(r.items))
}

// maxAckPending is the consumer's limit of messages delivered and not
// acked: the batch committing and the one being built, each up to
// MaxBatchSize, and the pull buffer (pullMessages); so that the server
// never holds back messages the ingester has room for.
func maxAckPending(cfg Config) int {
	return 2*cfg.MaxBatchSize + pullMessages(cfg)
}

// pullMessages is how many messages the consumer's pull requests ask for
// ahead of the loop.
func pullMessages(cfg Config) int { return 2 * cfg.BatchSize }

// msgBytes is what m holds: its payload and headers.
func msgBytes(m jetstream.Msg) int {
	n := len(m.Data())
	for k, vs := range m.Headers() {
		for _, v := range vs {
			n += len(k) + len(v) + 4 // "k: v\r\n"
		}
	}
	return n
}

// wait waits for the batch in flight, if any, to be committed.
func (r *natsRun) wait() error {
	if !r.inflight {
		return nil
	}
	r.inflight = false
	return <-r.results
}

// commitLoop commits the batches handed to it, in order, and acks their
// messages after each commit. A commit is retried a few times; if it still
// fails the error is fatal and nothing of the batch is acked.
//
// Between commits, and on idle ticks, it also stores the analysis facts of
// the sessions written (refreshFactsIfDue): this goroutine is the store's
// only writer. When the ingester stops it stores what is pending, if that
// is not too much (refreshFactsOnStop).
func (r *natsRun) commitLoop(ctx context.Context) {
	tick := time.NewTicker(r.in.cfg.FactsEvery)
	defer tick.Stop()
	defer func() {
		if ctx.Err() != nil {
			r.in.refreshFactsOnStop(ctx)
		} else { // re-anchoring: the usual schedule
			r.in.refreshFactsIfDue(ctx, false)
		}
	}()
	committed := false // a batch was committed since the last tick
	for {
		select {
		case b, ok := <-r.toCommit:
			if !ok {
				return
			}
			r.results <- r.commit(ctx, b)
			committed = true
			// A full batch, or more than a batch still in the stream: a
			// backlog. A partial batch: the ingester has caught up.
			r.in.refreshFactsIfDue(ctx, len(b.items) >= r.in.cfg.BatchSize || r.behind())
		case <-tick.C:
			if !committed { // idle
				r.in.refreshFactsIfDue(ctx, false)
			}
			committed = false
		}
	}
}

func (r *natsRun) commit(ctx context.Context, b *batch) error {
	if r.fatal.Load() {
		// A batch before this one failed: committing this one would move
		// the position past messages that are not stored.
		return fmt.Errorf("batch up to seq %d not committed after an earlier failure", b.pos)
	}
	// The batch is committed even when ctx is done: that is the orderly
	// shutdown. While the database fails for a reason of the environment,
	// commitRetrying retries and this goroutine holds the batch: the loop
	// waits for it (handOff), so no more is read and nothing is acked.
	// JetStream redelivers the unacked messages after the ack wait; the
	// loop takes those as redeliveries of what it already holds.
	sb := store.Batch{Origin: store.FromNATS, Stream: r.in.cfg.Stream, Position: b.pos, StreamCreated: r.created, Items: b.items}
	res, err := r.in.commitRetrying(ctx, sb)
	if err != nil {
		r.fatal.Store(true)
		return fmt.Errorf("commit batch of %d messages up to seq %d: %w", len(b.items), b.pos, err)
	}
	r.committed.Store(b.pos)
	// One ack for the batch: the consumer's acks are cumulative
	// (bus.AnchorConsumer). Best effort: the position is in the store; a
	// lost ack only means a redelivery.
	b.last.Ack()
	r.in.stats.add(res, len(b.items))
	if time.Since(r.lastLog) >= r.in.cfg.Progress {
		r.lastLog = time.Now()
		r.in.logProgress()
	}
	return nil
}

// behind says whether more than a batch waits in the stream, as of the
// last message read.
func (r *natsRun) behind() bool {
	return r.in.stats.Snapshot().Pending > uint64(r.in.cfg.BatchSize)
}

// logProgress logs rates and lag since start.
func (in *Ingester) logProgress() {
	in.flushDeadLog()
	s := in.stats.Snapshot()
	el := time.Since(s.Started).Seconds()
	in.log.Info("progress",
		"messages", s.Messages, "accepted", s.Accepted, "duplicates", s.Duplicates,
		"dead_letters", s.DeadLetters, "events_per_s", int64(float64(s.Messages)/el),
		"last_seq", s.LastSeq, "lag", s.Pending)
}
