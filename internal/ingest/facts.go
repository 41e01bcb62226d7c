package ingest

import (
	"context"
	"time"
)

// When facts are stored. Storing a session's facts costs a good part of
// what writing its events does (BENCHMARKS.md, "Figures behind the
// defaults"), and a session refreshed while its events still arrive is
// stored again later. So the ingester stores facts every FactsEvery while
// it keeps up with the stream, but only every FactsEvery × factsBusy while
// it works through a backlog (a file load, or more than a batch waiting in
// the stream), and the whole pending set once it has caught up. Queries
// stay exact meanwhile: the views compute the pending sessions on the fly.
//
// factsShare bounds the writer's time spent storing facts: after a
// refresh that took d, the next waits at least d × factsShare. A refresh
// reads the typed tables from where its oldest pending session started
// (ingest/refresh_facts.sql), so it follows the sessions it stores, except
// when a long-lived session's late event makes it read the rows since that
// session started; the bound keeps even that to about a tenth of the
// writer's time.
const (
	factsBusy  = 12
	factsShare = 9
	bigRefresh = 100_000 // sessions: a refresh this large is announced before it starts
	// factsOnStop: the most pending sessions stored when the ingester
	// stops, so that a stop takes seconds (BENCHMARKS.md, "Figures behind
	// the defaults"); with more pending it leaves them all to the next
	// start.
	factsOnStop     = 50_000
	maxFactsBackoff = 10 * time.Minute
)

// refreshFactsIfDue stores the facts of the sessions written since the last
// refresh when it is due; busy says the ingester has a backlog. Called by
// the goroutine that writes the store, after a commit and on idle ticks.
func (in *Ingester) refreshFactsIfDue(ctx context.Context, busy bool) {
	every := in.cfg.FactsEvery
	if busy {
		every *= factsBusy
	}
	if time.Since(in.lastFacts) >= max(every, factsShare*in.lastFactsTook, in.factsBackoff) {
		in.refreshFacts(ctx)
	}
}

// refreshFactsOnStop stores the pending facts when the ingester stops,
// unless there are so many that it would hold up the stop (a supervisor's
// stop timeout): they are then left for the next start. Queries are exact
// either way.
func (in *Ingester) refreshFactsOnStop(ctx context.Context) {
	n, err := in.store.PendingFacts(context.WithoutCancel(ctx))
	if err != nil || n == 0 {
		return
	}
	if n > factsOnStop {
		in.log.Info("leaving the analysis facts of many sessions to the next start; queries compute them on the fly meanwhile", "sessions", n)
		return
	}
	in.refreshFacts(ctx)
}

// refreshFacts stores the facts of every pending session now. A failure is
// logged and counted, not fatal: the views compute the pending sessions on
// the fly, so queries stay exact, only slower, until a refresh succeeds.
// After failures the next attempt waits longer each time (up to
// maxFactsBackoff).
func (in *Ingester) refreshFacts(ctx context.Context) {
	ctx = context.WithoutCancel(ctx) // a refresh is one transaction: let it end
	if n, err := in.store.PendingFacts(ctx); err == nil && n >= bigRefresh {
		in.log.Info("storing the analysis facts of a backlog of sessions; queries stay exact meanwhile; commits wait for it", "sessions", n)
	}
	r, err := in.store.RefreshFacts(ctx)
	in.lastFacts, in.lastFactsTook = time.Now(), r.Took
	if err != nil {
		in.factsBackoff = min(max(2*in.factsBackoff, in.cfg.FactsEvery), maxFactsBackoff)
		in.stats.factsFailed()
		in.log.Warn("storing analysis facts failed; queries compute them on the fly until a refresh succeeds",
			"err", err, "retry_in", in.factsBackoff)
		return
	}
	in.factsBackoff = 0
	if r.Sessions == 0 {
		return
	}
	in.stats.factsStored(r.Sessions, r.Took)
	lvl := in.log.Debug
	if r.Took >= time.Second {
		lvl = in.log.Info
	}
	lvl("stored analysis facts", "sessions", r.Sessions, "took", r.Took.Round(time.Millisecond))
}
