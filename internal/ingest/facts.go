package ingest

import (
	"context"
	"time"
)

// refreshFactsIfDue stores the facts of the sessions written since the last
// refresh when FactsEvery has passed since then. Called by the goroutine
// that writes the store, after a commit and on idle ticks.
func (in *Ingester) refreshFactsIfDue(ctx context.Context) {
	if time.Since(in.lastFacts) >= in.cfg.FactsEvery {
		in.refreshFacts(ctx)
	}
}

// refreshFacts stores the facts of every pending session now. A failure is
// logged and counted, not fatal: the views compute the pending sessions on
// the fly, so queries stay exact, only slower, until a refresh succeeds.
func (in *Ingester) refreshFacts(ctx context.Context) {
	in.lastFacts = time.Now()
	r, err := in.store.RefreshFacts(context.WithoutCancel(ctx))
	if err != nil {
		in.stats.factsFailed()
		in.log.Warn("storing analysis facts failed; queries compute them on the fly until the next refresh", "err", err)
		return
	}
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
