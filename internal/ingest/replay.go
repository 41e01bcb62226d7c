package ingest

import (
	"context"
	"fmt"

	"github.com/evosignal/evosignal/internal/store"
)

// Replayed is the outcome of one dead letter in a replay.
type Replayed struct {
	DeadLetter store.DeadLetter // as it was before the replay
	// Result is store.ReplayStored, store.ReplayDuplicate or
	// store.ReplayStillDead (what a dry run says would happen).
	Result string
	Code   string // still dead: the reason code and reason now
	Reason string
}

// ReplayResult counts the outcomes of a replay.
type ReplayResult struct {
	DeadLetters int // dead letters run again
	Stored      int
	Duplicates  int
	StillDead   int
}

func (r *ReplayResult) add(result string) {
	r.DeadLetters++
	switch result {
	case store.ReplayStored:
		r.Stored++
	case store.ReplayDuplicate:
		r.Duplicates++
	default:
		r.StillDead++
	}
}

// ReplayDeadLetters runs the dead letters not resolved yet (never replayed,
// or still dead at their last replay) again, in the order they were
// received, through the current validation (the ingester's limits, and the
// subject check for those that came through NATS) and the store, a batch at
// a time, each batch in one transaction. The ones now valid are stored
// exactly once, with their original subject, stream sequence or file line,
// and their dead letter is marked stored (or duplicate, when the event is
// already stored): a second replay finds nothing new to store. The others
// stay dead letters, with the replay's reason. Replaying after a fix or a
// schema change is the way back for events dead-lettered by a limit, an
// older contract or a database that refused them.
//
// With dryRun nothing is written: each outcome is what a replay would do
// now (store.Preview; the database's own checks are not tried). report, if
// not nil, gets each outcome in order.
func (in *Ingester) ReplayDeadLetters(ctx context.Context, dryRun bool, report func(Replayed)) (ReplayResult, error) {
	var total ReplayResult
	var after int64
	stored := false
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		dls, err := in.store.DeadLetters(ctx, after, in.cfg.BatchSize)
		if err != nil {
			return total, err
		}
		if len(dls) == 0 {
			break
		}
		after = dls[len(dls)-1].ID
		b := store.Batch{Origin: store.FromReplay, Items: make([]store.Item, len(dls))}
		for i, d := range dls {
			it := d.Item()
			if d.Truncated() {
				// Its event is not all there: it stays dead, saying why.
				it.Dead = &store.Dead{Code: store.ReasonTruncated, Reason: fmt.Sprintf(
					"cannot be replayed: only the first %d of its %d bytes were kept (sha256 %s); it was dead-lettered as %s: %s",
					len(d.Raw), d.Size, d.SHA256, d.Code, d.Reason)}
				if d.Code == store.ReasonTruncated {
					it.Dead.Reason = d.Reason // replayed before: the reason says it all
				}
			} else {
				c := classify(d.Raw, d.Subject, in.cfg)
				it.Event, it.Dead = c.Event, c.Dead
			}
			b.Items[i] = it
		}
		outcomes, err := in.replayBatch(ctx, b, dryRun)
		if err != nil {
			return total, fmt.Errorf("replay dead letters %d to %d: %w", dls[0].ID, after, err)
		}
		for _, d := range dls {
			o, ok := outcomes[d.ID]
			if !ok {
				return total, fmt.Errorf("replay dead letters: no outcome recorded for dead letter %d", d.ID)
			}
			total.add(o.Result)
			stored = stored || o.Result == store.ReplayStored
			if report != nil {
				r := Replayed{DeadLetter: d, Result: o.Result}
				if o.Result == store.ReplayStillDead {
					r.Code, r.Reason = o.Code, o.Reason
				}
				report(r)
			}
		}
	}
	if stored {
		in.refreshFacts(ctx)
	}
	return total, nil
}

// replayBatch writes (or, with dryRun, previews) one batch of replayed dead
// letters and returns the outcome of each, by dead letter.
func (in *Ingester) replayBatch(ctx context.Context, b store.Batch, dryRun bool) (map[int64]store.ReplayOutcome, error) {
	if dryRun {
		pre, err := in.store.Preview(ctx, b)
		if err != nil {
			return nil, err
		}
		out := make(map[int64]store.ReplayOutcome, len(pre))
		for i, p := range pre {
			o := store.ReplayOutcome{Result: store.ReplayStored}
			switch {
			case p.Duplicate:
				o.Result = store.ReplayDuplicate
			case p.Dead != nil:
				o = store.ReplayOutcome{Result: store.ReplayStillDead, Code: p.Dead.Code, Reason: p.Dead.Reason}
			}
			out[b.Items[i].DeadLetter] = o
		}
		return out, nil
	}
	// Committed even when ctx is done: a stop keeps what was replayed.
	if _, err := in.store.WriteIsolating(context.WithoutCancel(ctx), b); err != nil {
		return nil, err
	}
	ids := make([]int64, len(b.Items))
	for i, it := range b.Items {
		ids[i] = it.DeadLetter
	}
	return in.store.ReplayOutcomes(context.WithoutCancel(ctx), ids)
}
