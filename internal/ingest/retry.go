package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/evosignal/evosignal/internal/store"
)

// firstRetry is the wait after the first failed commit; it doubles up to
// Config.RetryMax.
const firstRetry = 200 * time.Millisecond

// commitRetrying commits b, retrying while the database fails for a reason
// of the environment (store.FaultOf: disk full, out of memory, I/O, an
// invalidated database). Events the database refuses for their content are
// dead-lettered by store.WriteIsolatingPart; nothing is dead-lettered
// because of the environment. While the failure lasts the ingester is
// stalled: /healthz answers 503 with the error, the log says so once when
// it starts and once when it ends, and the caller holds everything it read
// (nothing is acked, no more is read). The batch is written even after ctx
// is done (an orderly stop keeps what was read), but commitRetrying stops
// retrying then and returns the error: the caller acks nothing of b, and
// the messages (or the file's lines) are read again on the next start.
//
// The parts of b committed before a failure are not written again: the
// retry starts after them.
func (in *Ingester) commitRetrying(ctx context.Context, b store.Batch) (store.Result, error) {
	wctx := context.WithoutCancel(ctx)
	var total store.Result
	wait := firstRetry
	if b.OnDeadLetter == nil {
		b.OnDeadLetter = in.deadLetter
	}
	for {
		t0 := time.Now()
		res, done, err := in.store.WriteIsolatingPart(wctx, b)
		in.stats.commitTook(time.Since(t0), err == nil)
		total.Add(res)
		if err == nil {
			in.resumed()
			return total, nil
		}
		b.Items = b.Items[done:]
		in.stalled(err, wait)
		select {
		case <-ctx.Done():
			return total, fmt.Errorf("stopped while the database failed; %d messages not stored, not acked (read again on the next start): %w", len(b.Items), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, in.cfg.RetryMax)
	}
}

// stalled records a failed commit; the first of a run of failures is
// logged.
func (in *Ingester) stalled(err error, retryIn time.Duration) {
	if in.stats.stall(err) {
		in.log.Error("cannot write to the database; holding the batch: nothing is acked, read further or dead-lettered until a commit succeeds",
			"err", err, "fault", store.FaultOf(err).String(), "retry_max", in.cfg.RetryMax)
		return
	}
	in.log.Debug("commit failed again; retrying", "err", err, "retry_in", retryIn)
}

// resumed ends a stall, if there was one, and logs it.
func (in *Ingester) resumed() {
	if since, retries, ok := in.stats.resume(); ok {
		in.log.Info("writing to the database again; resuming",
			"stalled_for", time.Since(since).Round(time.Millisecond), "retries", retries,
			"db_reopens", in.store.Reopens())
	}
}
