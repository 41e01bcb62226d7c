package bench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/queries"
)

// The raw stream: the same storage and limits as the EVO stream, on its own
// subjects, so nothing of the real pipeline reads it.
const (
	rawStream   = "BENCH"
	rawPrefix   = "bench"
	rawConsumer = "bench-raw"
	// asyncMaxPending is the JetStream client's async publish window: its
	// default, stated so the figure is reproducible.
	asyncMaxPending = 4000
	appendCommit    = 10000 // rows per transaction in the raw DuckDB append
)

func rawStreamConfig() jetstream.StreamConfig {
	d := bus.DefaultStream()
	return jetstream.StreamConfig{
		Name:       rawStream,
		Subjects:   []string{rawPrefix + ".>"},
		Storage:    jetstream.FileStorage,
		Retention:  jetstream.LimitsPolicy,
		Discard:    jetstream.DiscardOld,
		MaxAge:     d.MaxAge,
		MaxBytes:   -1,
		MaxMsgs:    -1,
		MaxMsgSize: -1,
		Duplicates: d.Duplicates,
		Replicas:   1,
	}
}

// phaseJSPublish async-publishes N pooled payloads (no Nats-Msg-Id) to the
// raw stream and waits for every acknowledgement.
func phaseJSPublish(ctx context.Context, e *env) ([]Result, error) {
	if err := e.fresh(scRaw); err != nil {
		return nil, err
	}
	var fails asyncFailures
	n, err := e.startNATS(ctx, scRaw, fails.opts()...)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	st, err := n.js.CreateOrUpdateStream(ctx, rawStreamConfig())
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", rawStream, err)
	}
	pool, err := genPool(ctx, e.seed, e.pool, rawPrefix)
	if err != nil {
		return nil, err
	}

	var sent atomic.Int64
	stop := ticker(ctx, e.progress, func() {
		e.log.Info("raw publish", append([]any{"sent", sent.Load(), "of", e.events}, memAttrs()...)...)
	})
	defer stop()
	sp := startSpan()
	payloadBytes, err := publishRaw(ctx, n.js, pool, e.events, &sent)
	if err != nil {
		return nil, err
	}
	r := sp.row("js-publish", "raw JetStream async publish (no Nats-Msg-Id)", int64(e.events), payloadBytes, time.Time{})
	stop()
	if err := fails.err(e.events); err != nil {
		return nil, err
	}
	info, err := checkRawStream(ctx, st, e.events)
	if err != nil {
		return nil, err
	}
	r.Extra = map[string]any{
		"payload_bytes": payloadBytes, "stream_bytes": info.State.Bytes,
		"avg_payload_bytes": payloadBytes / int64(e.events), "async_max_pending": asyncMaxPending,
		"pool": len(pool),
	}
	err = e.writeManifest(scRaw, manifest{Events: int64(e.events), LastSeq: info.State.LastSeq, StreamBytes: info.State.Bytes})
	return []Result{r}, err
}

// phaseJSConsume reads the raw stream back with a durable pull consumer
// (the ingester's consumer settings), acking each message, doing nothing
// else.
func phaseJSConsume(ctx context.Context, e *env) ([]Result, error) {
	m, err := e.readManifest(scRaw)
	if err != nil {
		return nil, err
	}
	n, err := e.startNATS(ctx, scRaw)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	st, err := n.js.Stream(ctx, rawStream)
	if err != nil {
		return nil, fmt.Errorf("open stream %s: %w", rawStream, err)
	}
	cons, err := newRawConsumer(ctx, st)
	if err != nil {
		return nil, err
	}
	var got atomic.Int64
	stop := ticker(ctx, e.progress, func() {
		e.log.Info("raw consume", append([]any{"acked", got.Load(), "of", m.Events}, memAttrs()...)...)
	})
	defer stop()
	sp := startSpan()
	payloadBytes, err := consumeRaw(ctx, cons, n.nc, m.Events, &got)
	if err != nil {
		return nil, err
	}
	r := sp.row("js-consume", "raw JetStream pull consume, explicit ack each", m.Events, payloadBytes, time.Time{})
	stop()
	floor, err := ackFloor(ctx, cons, uint64(m.Events))
	if err != nil {
		return nil, err
	}
	r.Extra = map[string]any{"payload_bytes": payloadBytes, "ack_floor": floor,
		"pull_max_messages": rawPullMax, "max_ack_pending": rawMaxAckPending}
	return []Result{r}, nil
}

// phaseJSBoth runs js-publish's publisher and js-consume's consumer at the
// same time on a fresh raw stream of its own: what JetStream itself does
// when publishing and consuming together on these cores, the limit of the
// concurrent phase. The consumer has its own connection, as the ingester
// has in the concurrent phase. Its store is removed afterwards: no phase
// reads it.
func phaseJSBoth(ctx context.Context, e *env) (_ []Result, err error) {
	if err := e.fresh(scRawBoth); err != nil {
		return nil, err
	}
	var fails asyncFailures
	n, err := e.startNATS(ctx, scRawBoth, fails.opts()...)
	if err != nil {
		return nil, err
	}
	defer func() {
		n.Close()
		err = errors.Join(err, os.RemoveAll(filepath.Join(e.dir, scRawBoth)))
	}()
	st, err := n.js.CreateOrUpdateStream(ctx, rawStreamConfig())
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", rawStream, err)
	}
	pool, err := genPool(ctx, e.seed, e.pool, rawPrefix)
	if err != nil {
		return nil, err
	}
	cnc, _, err := n.connect("bench-consume")
	if err != nil {
		return nil, err
	}
	defer cnc.Close()
	cjs, err := jetstream.New(cnc)
	if err != nil {
		return nil, fmt.Errorf("jetstream on connection bench-consume: %w", err)
	}
	cst, err := cjs.Stream(ctx, rawStream)
	if err != nil {
		return nil, fmt.Errorf("open stream %s: %w", rawStream, err)
	}
	cons, err := newRawConsumer(ctx, cst)
	if err != nil {
		return nil, err
	}

	var sent, got atomic.Int64
	stop := ticker(ctx, e.progress, func() {
		e.log.Info("raw publish and consume", append([]any{"sent", sent.Load(), "acked", got.Load(), "of", e.events},
			memAttrs()...)...)
	})
	defer stop()
	// Either side failing stops the other.
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type consumed struct {
		bytes int64
		err   error
	}
	done := make(chan consumed, 1)
	sp := startSpan()
	go func() {
		b, err := consumeRaw(bctx, cons, cnc, int64(e.events), &got)
		if err != nil {
			cancel()
		}
		done <- consumed{b, err}
	}()
	pubBytes, perr := publishRaw(bctx, n.js, pool, e.events, &sent)
	pubSecs := time.Since(sp.wall).Seconds()
	if perr == nil {
		// The consumer would wait for ever for a message not stored.
		perr = fails.err(e.events)
	}
	if perr != nil {
		cancel()
	}
	c := <-done
	if err := errors.Join(c.err, perr); err != nil {
		return nil, err
	}
	r := sp.row("js-both", "raw publish and pull-consume together (the concurrent phase's limit)",
		int64(e.events), c.bytes, time.Time{})
	stop()
	if c.bytes != pubBytes {
		return nil, fmt.Errorf("raw publish and consume: consumed %d payload bytes, published %d", c.bytes, pubBytes)
	}
	if _, err := checkRawStream(ctx, st, e.events); err != nil {
		return nil, err
	}
	floor, err := ackFloor(ctx, cons, uint64(e.events))
	if err != nil {
		return nil, err
	}
	r.Extra = map[string]any{"payload_bytes": c.bytes, "ack_floor": floor,
		"publish_seconds": pubSecs, "drain_after_publish_seconds": r.Seconds - pubSecs,
		"async_max_pending": asyncMaxPending, "pull_max_messages": rawPullMax, "max_ack_pending": rawMaxAckPending}
	return []Result{r}, nil
}

// ackFloor is the consumer's ack floor once it reaches want, or as it
// stands after ackSettle: the server applies acks after it has read them
// (the flush in consumeRaw), so on a loaded machine the floor lags the last
// ack for a moment. The rows' figures are timed before it; this only reads
// the floor they report.
func ackFloor(ctx context.Context, cons jetstream.Consumer, want uint64) (uint64, error) {
	deadline := time.Now().Add(ackSettle)
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			return 0, fmt.Errorf("consumer %s info: %w", rawConsumer, err)
		}
		if info.AckFloor.Stream >= want || time.Now().After(deadline) {
			return info.AckFloor.Stream, nil
		}
		select {
		case <-ctx.Done():
			return info.AckFloor.Stream, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// ackSettle bounds how long ackFloor waits for the floor to reach the acks.
const ackSettle = 10 * time.Second

// asyncFailures counts the async publishes JetStream did not acknowledge.
type asyncFailures struct {
	n     atomic.Int64
	first atomic.Value
}

// opts are the JetStream options of the raw publisher: its async window,
// and f counting what fails.
func (f *asyncFailures) opts() []jetstream.JetStreamOpt {
	return []jetstream.JetStreamOpt{
		jetstream.WithPublishAsyncMaxPending(asyncMaxPending),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			f.n.Add(1)
			f.first.CompareAndSwap(nil, err)
		}),
	}
}

// err reports the failed publishes of total, if any.
func (f *asyncFailures) err(total int) error {
	if n := f.n.Load(); n > 0 {
		return fmt.Errorf("raw publish: %d of %d messages not acknowledged, first: %v", n, total, f.first.Load())
	}
	return nil
}

// publishRaw async-publishes n payloads cycling through pool, counting them
// in sent, and waits for every acknowledgement. It returns the payload
// bytes sent.
func publishRaw(ctx context.Context, js jetstream.JetStream, pool []payload, n int, sent *atomic.Int64) (int64, error) {
	var payloadBytes int64
	for i := range n {
		p := &pool[i%len(pool)]
		for {
			_, err := js.PublishAsync(p.subject, p.body)
			if err == nil {
				break
			}
			if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				return 0, fmt.Errorf("publish message %d: %w", i, err)
			}
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
		}
		payloadBytes += int64(len(p.body))
		sent.Add(1)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return payloadBytes, nil
}

// checkRawStream confirms the raw stream holds n messages and returns its
// info.
func checkRawStream(ctx context.Context, st jetstream.Stream, n int) (*jetstream.StreamInfo, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream %s info: %w", rawStream, err)
	}
	if info.State.Msgs != uint64(n) {
		return nil, fmt.Errorf("raw publish: stream %s holds %d messages, want %d", rawStream, info.State.Msgs, n)
	}
	return info, nil
}

// The raw consumer's settings: the ingester's (ingest.DefaultConfig():
// batches of 10,000).
const (
	rawBatch         = 10000
	rawPullMax       = 2 * rawBatch
	rawMaxAckPending = 4 * rawBatch
)

// newRawConsumer creates the durable pull consumer of the raw stream from
// its start, deleting any earlier one (should a phase run a second time).
func newRawConsumer(ctx context.Context, st jetstream.Stream) (jetstream.Consumer, error) {
	if err := st.DeleteConsumer(ctx, rawConsumer); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("delete consumer %s: %w", rawConsumer, err)
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       rawConsumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       2 * time.Minute,
		MaxAckPending: rawMaxAckPending,
		MaxDeliver:    -1,
		FilterSubject: rawPrefix + ".>",
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("create consumer %s: %w", rawConsumer, err)
	}
	return cons, nil
}

// consumeRaw pulls want messages from cons through Consume (as the
// ingester reads), acking each and counting them in got, then flushes the
// acks on nc, the consumer's connection. It returns the payload bytes read.
func consumeRaw(ctx context.Context, cons jetstream.Consumer, nc *nats.Conn, want int64, got *atomic.Int64) (int64, error) {
	var payloadBytes int64 // the handler's alone until done
	done := make(chan struct{})
	fail := make(chan error, 1)
	failed := func(err error) {
		select {
		case fail <- err:
		default: // the first is enough
		}
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		n := got.Load()
		if n >= want {
			return
		}
		payloadBytes += int64(len(msg.Data()))
		if err := msg.Ack(); err != nil {
			failed(fmt.Errorf("ack message %d: %w", n+1, err))
			return
		}
		if got.Add(1) == want {
			close(done)
		}
	}, jetstream.PullMaxMessages(rawPullMax), jetstream.PullExpiry(5*time.Second),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if ingest.EndsConsume(err) {
				failed(err)
			}
		}))
	if err != nil {
		return 0, fmt.Errorf("pull from consumer %s: %w", rawConsumer, err)
	}
	defer cc.Stop()
	select {
	case <-done:
	case err := <-fail:
		return 0, fmt.Errorf("raw consume after %d messages: %w", got.Load(), err)
	case <-ctx.Done():
		return 0, fmt.Errorf("raw consume after %d messages: %w", got.Load(), ctx.Err())
	}
	if err := nc.FlushTimeout(30 * time.Second); err != nil {
		return 0, fmt.Errorf("flush acks: %w", err)
	}
	return payloadBytes, nil
}

// phaseDuckDBAppend appends N rows with the columns of events into a fresh
// database with the duckdb Appender, committing every appendCommit rows.
func phaseDuckDBAppend(ctx context.Context, e *env) ([]Result, error) {
	pool, err := genPool(ctx, e.seed, e.pool, "evo")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(e.dir, scRaw, "append.duckdb")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := removeDB(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("duckdb", path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	ms, err := queries.Migrations()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if _, err := db.ExecContext(ctx, m.SQL); err != nil {
			return nil, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var app *duckdb.Appender
	if err := c.Raw(func(dc any) error {
		d, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		app, err = duckdb.NewAppender(d, "", "", "events")
		return err
	}); err != nil {
		return nil, fmt.Errorf("appender for events: %w", err)
	}
	defer app.Close()

	var done atomic.Int64
	stop := ticker(ctx, e.progress, func() {
		e.log.Info("raw append", append([]any{"rows", done.Load(), "of", e.events}, memAttrs()...)...)
	})
	defer stop()
	var payloadBytes int64
	sp := startSpan()
	for i := 0; i < e.events; {
		if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		now := time.Now().UTC()
		end := min(i+appendCommit, e.events)
		for ; i < end; i++ {
			p := &pool[i%len(pool)]
			ev := p.ev
			if err := app.AppendRow(ev.Source, ev.ID, string(ev.Type), ev.Time.UTC(), ev.Subject, ev.Seq,
				string(ev.Data), events.AgentOf(ev.Source), nil, p.subject, uint64(i+1), now,
				store.KeyHash(ev.Source, ev.ID)); err != nil {
				return nil, fmt.Errorf("append row %d: %w", i, err)
			}
			payloadBytes += int64(len(p.body))
		}
		if err := app.Flush(); err != nil {
			return nil, fmt.Errorf("flush rows up to %d: %w", i, err)
		}
		if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
			return nil, fmt.Errorf("commit rows up to %d: %w", i, err)
		}
		done.Store(int64(i))
	}
	r := sp.row("duckdb-append", fmt.Sprintf("raw DuckDB Appender into events, commit every %d", appendCommit),
		int64(e.events), payloadBytes, time.Time{})
	stop()
	var rows int64
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&rows); err != nil {
		return nil, fmt.Errorf("count rows: %w", err)
	}
	if rows != int64(e.events) {
		return nil, fmt.Errorf("raw append: events holds %d rows, want %d", rows, e.events)
	}
	r.Extra = map[string]any{"payload_bytes": payloadBytes, "mb_per_s_of": "JSON payload bytes the rows came from"}
	return []Result{r}, nil
}
