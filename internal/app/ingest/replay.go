package ingest

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/store"
)

// replayDeadLetters runs ingest -replay-dead-letters: a mode of the ingest
// command, like -file and -rebuild, because a replay needs what they need:
// the only writer of the database, and this ingester's validation (-prefix,
// -max-event-bytes, -max-plan-tasks). It prints each dead letter's outcome,
// then the totals.
func replayDeadLetters(ctx context.Context, cfg pipeline.Config, dryRun bool, stdout io.Writer) error {
	t0 := time.Now()
	res, err := pipeline.ReplayDeadLetters(ctx, cfg, dryRun, func(r ingest.Replayed) {
		fmt.Fprintf(stdout, "dead letter %d (%s, %s): %s\n", r.DeadLetter.ID, provenance(r.DeadLetter), r.DeadLetter.Code, outcome(r, dryRun))
	})
	if dryRun {
		fmt.Fprintf(stdout, "dry run, nothing written: of %d dead letters, %d would be stored, %d are duplicates, %d would stay dead\n",
			res.DeadLetters, res.Stored, res.Duplicates, res.StillDead)
	} else {
		fmt.Fprintf(stdout, "replayed %d dead letters: stored %d, duplicates %d, still dead %d (%s)\n",
			res.DeadLetters, res.Stored, res.Duplicates, res.StillDead, time.Since(t0).Round(time.Millisecond))
	}
	return err
}

// provenance says where a dead letter came from.
func provenance(d store.DeadLetter) string {
	switch {
	case d.File != "":
		return fmt.Sprintf("file %s line %d", d.File, d.Line)
	case d.StreamSeq != 0:
		return fmt.Sprintf("stream %s seq %d on %s", d.Stream, d.StreamSeq, d.Subject)
	}
	return string(d.Origin)
}

func outcome(r ingest.Replayed, dryRun bool) string {
	switch {
	case r.Result == store.ReplayStored && dryRun:
		return "would be stored"
	case r.Result == store.ReplayStored:
		return "stored"
	case r.Result == store.ReplayDuplicate && dryRun:
		return "a duplicate of a stored event: would be marked so"
	case r.Result == store.ReplayDuplicate:
		return "a duplicate of a stored event"
	case dryRun:
		return "would stay dead (" + r.Code + "): " + r.Reason
	}
	return "still dead (" + r.Code + "): " + r.Reason
}
