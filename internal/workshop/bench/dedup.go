package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/store"
)

// ingestedScenario is the scenario whose database the de-duplication phases
// use: backlog's if it ran, else concurrent's.
func (e *env) ingestedScenario() (string, manifest, error) {
	for _, sc := range []string{scBacklog, scConcurrent} {
		if m, err := e.readManifest(sc); err == nil && m.Ingested {
			return sc, m, nil
		}
	}
	return "", manifest{}, errors.New("no ingested database: run the ingest or concurrent phase first")
}

// phaseDedupOpen opens (in a fresh process: the store was closed by the
// ingest phase) the database of N events and measures what loading the
// de-duplication keys costs in time and Go heap.
func phaseDedupOpen(ctx context.Context, e *env) ([]Result, error) {
	sc, m, err := e.ingestedScenario()
	if err != nil {
		return nil, err
	}
	before := heapLive()
	sp := startSpan()
	st, err := store.OpenWith(ctx, e.dbPath(sc), pipeline.DefaultConfig().Store)
	if err != nil {
		return nil, err
	}
	keys := int64(st.Keys())
	r := sp.row("dedup-open", "store.Open of a db of N events (loads the key set)", keys, 0, time.Time{})
	after := heapLive()
	set := int64(st.KeyBytes())
	runtime.KeepAlive(st)
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("close store: %w", err)
	}
	if keys != m.Events {
		return nil, fmt.Errorf("dedup: store loaded %d keys, want %d", keys, m.Events)
	}
	t0 := time.Now()
	st, err = store.OpenWith(ctx, e.dbPath(sc), pipeline.DefaultConfig().Store)
	if err != nil {
		return nil, err
	}
	reopen := time.Since(t0).Seconds()
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("close store: %w", err)
	}
	delta := int64(after) - int64(before)
	// Two measures of the key set: the Go heap the open left in use (after
	// a GC) per key, which also counts whatever else the store keeps on the
	// heap, and the set's own size per key (store.Store.KeyBytes).
	r.Extra = map[string]any{
		"db": sc, "keys": keys, "heap_delta_bytes": delta,
		"heap_bytes_per_key": float64(delta) / float64(keys),
		"set_bytes_per_key":  float64(set) / float64(keys), "reopen_seconds": reopen,
	}
	return []Result{r}, nil
}

// phaseDedup measures, on the database of N events, a clean pass of
// dupFrac·N new events and then a pass re-sending dupFrac·N of the stored
// events without Nats-Msg-Id, which JetStream keeps and the ingester must
// skip.
func phaseDedup(ctx context.Context, e *env) ([]Result, error) {
	sc, m, err := e.ingestedScenario()
	if err != nil {
		return nil, err
	}
	count := max(1, int(float64(m.Events)*e.dupFrac))
	p, pjs, stop, err := e.startWithAgents(ctx, sc)
	if err != nil {
		return nil, err
	}
	defer stop()
	stream := p.Stream()
	pct := fmt.Sprintf("%g%%", 100*e.dupFrac)

	// Clean pass: new events into a database that already holds N.
	if err := publishSynth(ctx, e, pjs, e.seed+1, count); err != nil {
		return nil, err
	}
	clean, _, err := ingestPass(ctx, e, p, "dedup-clean",
		fmt.Sprintf("ingest %s new events into the db of N (reference)", pct))
	if err != nil {
		return nil, err
	}
	if d := clean.Extra["duplicates"].(int64); d != 0 {
		return nil, fmt.Errorf("dedup: clean pass saw %d duplicates, want 0", d)
	}

	// Re-sent pass: the first count events of the stream, published again
	// as they are but without Nats-Msg-Id.
	if err := resend(ctx, e, stream, pjs, count); err != nil {
		return nil, err
	}
	if e.cpuprofile != "" {
		stopProfile, err := e.startProfile()
		if err != nil {
			return nil, err
		}
		defer stopProfile()
	}
	dup, _, err := ingestPass(ctx, e, p, "dedup-resent",
		fmt.Sprintf("ingest %s re-sent events w/o Nats-Msg-Id (all skipped)", pct))
	if err != nil {
		return nil, err
	}
	if d := dup.Extra["duplicates"].(int64); d != int64(count) {
		return nil, fmt.Errorf("dedup: re-sent pass skipped %d duplicates, want %d", d, count)
	}
	if clean.PerSec > 0 {
		dup.Extra["rate_vs_clean"] = dup.PerSec / clean.PerSec
	}
	return []Result{clean, dup}, nil
}

// ingestPass runs the ingester from the store's position to the stream's
// last sequence.
func ingestPass(ctx context.Context, e *env, p *pipeline.Pipeline, phase, what string) (Result, uint64, error) {
	st := p.Store()
	info, err := p.Stream().Info(ctx)
	if err != nil {
		return Result{}, 0, fmt.Errorf("stream info: %w", err)
	}
	from, err := st.Position(ctx, info.Config.Name)
	if err != nil {
		return Result{}, 0, err
	}
	want := int64(info.State.LastSeq - from)
	sp := startSpan()
	run, err := startIngest(ctx, e, p)
	if err != nil {
		return Result{}, 0, err
	}
	end, werr := run.wait(ctx, info.Config.Name, info.State.LastSeq, want)
	r := sp.row(phase, what, want, 0, end)
	snap, serr := run.stop()
	if err := errors.Join(werr, serr); err != nil {
		return Result{}, 0, err
	}
	r.Extra = ingestExtra(snap, r.Seconds)
	delete(r.Extra, "mb_per_s_of")
	r.Extra["keys_after"] = st.Keys()
	return r, info.State.LastSeq, nil
}

// resend reads the first count messages of the stream and publishes their
// subjects and bodies again without Nats-Msg-Id.
func resend(ctx context.Context, e *env, stream jetstream.Stream, js jetstream.JetStream, count int) error {
	before, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream info: %w", err)
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("ordered consumer: %w", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("ordered consumer: %w", err)
	}
	msgs := make([]*nats.Msg, 0, count)
	for len(msgs) < count {
		m, err := it.Next()
		if err != nil {
			it.Stop()
			return fmt.Errorf("read message %d to re-send: %w", len(msgs)+1, err)
		}
		msgs = append(msgs, &nats.Msg{Subject: m.Subject(), Data: m.Data()})
	}
	it.Stop()
	futs := make([]jetstream.PubAckFuture, 0, count)
	for i, m := range msgs {
		f, err := js.PublishMsgAsync(m)
		for errors.Is(err, jetstream.ErrTooManyStalledMsgs) && ctx.Err() == nil {
			f, err = js.PublishMsgAsync(m)
		}
		if err != nil {
			return fmt.Errorf("re-send message %d: %w", i+1, err)
		}
		futs = append(futs, f)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return ctx.Err()
	}
	failed := 0
	for _, f := range futs {
		select {
		case <-f.Ok():
		case <-f.Err():
			failed++
		}
	}
	after, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream info: %w", err)
	}
	if got := after.State.LastSeq - before.State.LastSeq; got != uint64(count) || failed > 0 {
		return fmt.Errorf("re-send: stream grew by %d messages (%d failed), want %d", got, failed, count)
	}
	e.log.Info("re-sent without Nats-Msg-Id", "messages", count, "stream_last_seq", after.State.LastSeq)
	return nil
}
