package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/output"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/synth"
)

// stallAfter ends a wait for the ingester when it has committed nothing for
// this long.
const stallAfter = 10 * time.Minute

// phasePublish publishes N synth events through agent.Publisher (defaults)
// to the EVO stream, for the backlog ingest phase.
func phasePublish(ctx context.Context, e *env) ([]Result, error) {
	if err := e.fresh(scBacklog); err != nil {
		return nil, err
	}
	n, err := e.startNATS(ctx, scBacklog)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	st, err := bus.EnsureStream(ctx, n.js, bus.DefaultStream())
	if err != nil {
		return nil, err
	}
	sp := startSpan()
	if err := publishSynth(ctx, e, n.js, e.seed, e.events); err != nil {
		return nil, err
	}
	end := time.Now()
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream info: %w", err)
	}
	if info.State.Msgs != uint64(e.events) {
		return nil, fmt.Errorf("publish: stream %s holds %d messages, want %d", info.Config.Name, info.State.Msgs, e.events)
	}
	r := sp.row("publish", "synth sessions → agent.Publisher → EVO (generation inline)",
		int64(e.events), int64(info.State.Bytes), end)
	r.Extra = map[string]any{"stream_bytes": info.State.Bytes, "mb_per_s_of": "JetStream stream bytes"}
	err = e.writeManifest(scBacklog, manifest{Events: int64(e.events), LastSeq: info.State.LastSeq, StreamBytes: info.State.Bytes})
	return []Result{r}, err
}

// publishSynth sends count synth events from a generator seeded with seed
// through a default agent.Publisher on js, and waits for every
// acknowledgement.
func publishSynth(ctx context.Context, e *env, js jetstream.JetStream, seed uint64, count int) error {
	out, err := output.Publish(js, nil, agent.PublisherConfig{}, "")
	if err != nil {
		return err
	}
	sink := &counted{next: out}
	stop := ticker(ctx, e.progress, func() {
		e.log.Info("publish", append([]any{"sent", sink.n.Load(), "of", count}, memAttrs()...)...)
	})
	defer stop()
	g := synth.New(seed, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	err = sessions(ctx, g, &limit{next: sink, n: count})
	if err := errors.Join(err, out.Close(ctx)); err != nil {
		return fmt.Errorf("publish %d synth events: %w", count, err)
	}
	return nil
}

// counted counts what goes through it, for progress lines from another
// goroutine.
type counted struct {
	next agent.Sink
	n    atomic.Int64
}

func (c *counted) Send(ctx context.Context, ev *agent.Event) error {
	c.n.Add(1)
	return c.next.Send(ctx, ev)
}

// phaseIngest runs the real ingester with its default configuration on the
// backlog the publish phase left, from an empty database, until the
// committed position is the stream's last sequence.
func phaseIngest(ctx context.Context, e *env) ([]Result, error) {
	m, err := e.readManifest(scBacklog)
	if err != nil {
		return nil, err
	}
	if err := removeDB(e.dbPath(scBacklog)); err != nil {
		return nil, err
	}
	p, err := e.startPipeline(ctx, scBacklog)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	st := p.Store()
	info, err := p.Stream().Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream info: %w", err)
	}
	if info.State.LastSeq != m.LastSeq || info.State.Msgs != uint64(m.Events) {
		return nil, fmt.Errorf("ingest: stream %s changed since the publish phase (last seq %d, want %d): run publish again",
			info.Config.Name, info.State.LastSeq, m.LastSeq)
	}
	if pos, err := st.Position(ctx, info.Config.Name); err != nil || pos != 0 {
		return nil, errors.Join(err, fmt.Errorf("ingest: database %s is not empty (position %d)", st.Path(), pos))
	}
	// A run before this one (-keep, -only ingest) left its durable
	// consumer, which names the database it removed: start without it.
	durable := pipeline.DefaultConfig().Ingest.Durable
	if err := p.Stream().DeleteConsumer(ctx, durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("ingest: delete the consumer %s of an earlier run: %w", durable, err)
	}
	stopProfile, err := e.startProfile()
	if err != nil {
		return nil, err
	}
	defer stopProfile()

	sp := startSpan()
	run, err := startIngest(ctx, e, p)
	if err != nil {
		return nil, err
	}
	end, werr := run.wait(ctx, info.Config.Name, info.State.LastSeq, int64(info.State.LastSeq))
	r := sp.row("ingest", "real ingester (default config), backlog from an empty db",
		int64(info.State.LastSeq), int64(info.State.Bytes), end)
	prof := stopProfile()
	snap, serr := run.stop()
	if err := errors.Join(werr, serr); err != nil {
		return nil, err
	}
	if err := checkEvents(ctx, st, m.Events, snap); err != nil {
		return nil, err
	}
	r.Extra = ingestExtra(snap, r.Seconds)
	e.addBreakdown(&r, prof)
	rpe, err := rowsPerEvent(ctx, st, m.Events)
	if err != nil {
		return nil, err
	}
	r.Extra["rows_per_event"] = rpe
	e.commits.extra(r.Extra, st)
	t0 := time.Now()
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("close store: %w", err)
	}
	r.Extra["store_close_seconds"] = time.Since(t0).Seconds()
	m.Ingested = true
	return []Result{r}, e.writeManifest(scBacklog, m)
}

// phaseConcurrent publishes N synth events while the ingester runs, from an
// empty stream and database; the figure is N over the time from the first
// publish to the last commit.
func phaseConcurrent(ctx context.Context, e *env) ([]Result, error) {
	if err := e.fresh(scConcurrent); err != nil {
		return nil, err
	}
	p, pjs, stop, err := e.startWithAgents(ctx, scConcurrent)
	if err != nil {
		return nil, err
	}
	defer stop()
	stream, st := p.Stream(), p.Store()
	stopProfile, err := e.startProfile()
	if err != nil {
		return nil, err
	}
	defer stopProfile()

	run, err := startIngest(ctx, e, p)
	if err != nil {
		return nil, err
	}
	sp := startSpan()
	perr := publishSynth(ctx, e, pjs, e.seed+2, e.events)
	pubEnd := time.Now()
	if perr != nil {
		_, serr := run.stop()
		return nil, errors.Join(perr, serr)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		_, serr := run.stop()
		return nil, errors.Join(fmt.Errorf("stream info: %w", err), serr)
	}
	end, werr := run.wait(ctx, info.Config.Name, info.State.LastSeq, int64(info.State.LastSeq))
	r := sp.row("concurrent", "publish and ingest overlapping: N / (first publish → last commit)",
		int64(e.events), int64(info.State.Bytes), end)
	prof := stopProfile()
	snap, serr := run.stop()
	if err := errors.Join(werr, serr); err != nil {
		return nil, err
	}
	if err := checkEvents(ctx, st, int64(e.events), snap); err != nil {
		return nil, err
	}
	pub := sp.row("concurrent-pub", "  its publishing side alone (agent.Publisher, while ingesting)",
		int64(e.events), int64(info.State.Bytes), pubEnd)
	pub.CPUSeconds = 0 // the process's CPU is shared with the ingester; see the concurrent row
	r.Extra = ingestExtra(snap, r.Seconds)
	e.addBreakdown(&r, prof)
	r.Extra["publish_seconds"] = pub.Seconds
	r.Extra["drain_after_publish_seconds"] = end.Sub(pubEnd).Seconds()
	e.commits.extra(r.Extra, st)
	m := manifest{Events: int64(e.events), LastSeq: info.State.LastSeq, StreamBytes: info.State.Bytes, Ingested: true}
	return []Result{r, pub}, e.writeManifest(scConcurrent, m)
}

// ingestRun is the pipeline's ingester running, with progress lines.
type ingestRun struct {
	p       *pipeline.Pipeline
	stopLog func()
}

// startIngest starts a fresh ingester (default configuration) on p.
func startIngest(ctx context.Context, e *env, p *pipeline.Pipeline) (*ingestRun, error) {
	if err := p.Ingest(); err != nil {
		return nil, err
	}
	in := p.Ingester()
	r := &ingestRun{p: p}
	r.stopLog = ticker(ctx, e.progress, func() {
		s := in.Stats().Snapshot()
		el := time.Since(s.Started).Seconds()
		e.log.Info("ingest", append([]any{"committed", s.Messages, "events_per_s", int(float64(s.Messages) / el),
			"batches", s.Batches, "last_seq", s.LastSeq, "pending", s.Pending,
			"commit_share", fmt.Sprintf("%.0f%%", 100*s.CommitSecs/el)}, append(memAttrs(), duckMem(ctx, p.Store())...)...)...)
	})
	return r, nil
}

// wait returns the time of the commit that made the store's position
// lastSeq, having committed want messages. It fails when the ingester
// returns, ctx is done or nothing is committed for stallAfter.
func (r *ingestRun) wait(ctx context.Context, stream string, lastSeq uint64, want int64) (time.Time, error) {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	var seen int64
	lastMove := time.Now()
	for {
		s := r.p.Ingester().Stats().Snapshot()
		if s.Messages != seen {
			seen, lastMove = s.Messages, time.Now()
		}
		if s.Messages >= want {
			pos, err := r.p.Store().Position(ctx, stream)
			if err != nil {
				return time.Time{}, err
			}
			if pos == lastSeq {
				return s.LastCommit, nil
			}
		}
		if time.Since(lastMove) > stallAfter {
			return time.Time{}, fmt.Errorf("ingester stalled: nothing committed for %s at %d of %d messages (last seq %d, pending %d, last error: %v)",
				stallAfter, s.Messages, want, s.LastSeq, s.Pending, s.LastErr)
		}
		select {
		case <-r.p.Done():
			return time.Time{}, fmt.Errorf("ingester returned before reaching seq %d (at %d)", lastSeq, s.LastSeq)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-t.C:
		}
	}
}

// stop ends the ingester (an orderly shutdown) and returns its final
// counters.
func (r *ingestRun) stop() (ingest.Snapshot, error) {
	err := r.p.StopIngest()
	r.stopLog()
	return r.p.Ingester().Stats().Snapshot(), err
}

// checkEvents confirms the database holds want events and that the
// ingester accepted exactly those.
func checkEvents(ctx context.Context, st *store.Store, want int64, s ingest.Snapshot) error {
	var rows int64
	if err := st.DB().QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&rows); err != nil {
		return fmt.Errorf("count events: %w", err)
	}
	if rows != want || s.Accepted != want || s.DeadLetters != 0 {
		return fmt.Errorf("check: events table holds %d rows, ingester accepted %d and dead-lettered %d; want %d accepted",
			rows, s.Accepted, s.DeadLetters, want)
	}
	return nil
}

// rowsPerEvent is the rows the store wrote an event (events and the typed
// tables), for the bound of the raw parts (writeTargets).
func rowsPerEvent(ctx context.Context, st *store.Store, events int64) (float64, error) {
	n, err := st.WrittenRows(ctx)
	if err != nil || events == 0 {
		return 0, err
	}
	return float64(n) / float64(events), nil
}

func ingestExtra(s ingest.Snapshot, secs float64) map[string]any {
	return map[string]any{
		"accepted": s.Accepted, "duplicates": s.Duplicates, "dead_letters": s.DeadLetters,
		"redelivered": s.Redelivered, "reanchors": s.Reanchors, "batches": s.Batches,
		"store_write_seconds": s.CommitSecs, "store_write_share": s.CommitSecs / secs,
		// Facts refreshes (store.RefreshFacts) while the phase ran and at
		// the ingester's stop; the stop's is not in the phase's time.
		"facts_refreshes": s.FactsRefreshes, "facts_sessions": s.FactsSessions, "facts_seconds": s.FactsSecs,
		"mb_per_s_of": "JetStream stream bytes",
	}
}

// startProfile starts the phase's CPU profile, kept in memory for its
// breakdown (cpu.go) and written to -cpuprofile's file when this phase is
// the one to profile. The returned stop ends it and returns the profile;
// it is safe to call more than once.
func (e *env) startProfile() (func() []byte, error) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	var once sync.Once
	var prof []byte
	var werr error
	stop := func() []byte {
		once.Do(func() {
			pprof.StopCPUProfile()
			prof = buf.Bytes()
			if e.cpuprofile != "" {
				werr = os.WriteFile(e.cpuprofile, prof, 0o644)
			}
		})
		if werr != nil {
			e.log.Warn("cpu profile not written", "file", e.cpuprofile, "err", werr)
		}
		return prof
	}
	return stop, nil
}

// addBreakdown records in r's notes where its CPU went, an event at a time.
func (e *env) addBreakdown(r *Result, prof []byte) {
	b, err := cpuBreakdown(prof, r.CPUSeconds, r.Events)
	if err != nil {
		e.log.Warn("no CPU breakdown", "phase", r.Phase, "err", err)
		return
	}
	r.Extra["cpu"] = b
}
