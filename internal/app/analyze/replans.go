package analyze

import (
	"context"
	"fmt"
	"io"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/render"
)

const replansSummary = "replan rates, first-try success, success by number of replans, triggers"

// replansExtra is the "extra" section of `analyze replans` JSON output.
type replansExtra struct {
	Comparison metrics.ReplanComparison `json:"comparison"`
}

func runReplans(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags(ctx, "replans", `Replan statistics per group of sessions: ended and open sessions, replan rate,
average replans, first-try success, success rate by number of valid replans
(0, 1, 2, 3+), over-cap rate, rejected replans, triggers, stripped hints per
session and the median time to the first replan, with Wilson 95% intervals.
Replans are counted from agent.plan.updated events; sessions whose own count
disagrees are reported. JSON output adds extra.comparison: sessions that
succeeded without a replan against those that succeeded after two or more.`, stderr)
	src, closeDB, err := c.start(ctx, fs, args, stdout, nil)
	if err != nil || src == nil {
		return err
	}
	defer closeDB()
	res, err := metrics.Replans(ctx, src, c.filter)
	if err != nil {
		return fmt.Errorf("replans: %w", err)
	}
	cmp, err := metrics.CompareReplans(ctx, src, c.filter)
	if err != nil {
		return fmt.Errorf("replans: %w", err)
	}
	env := &render.Envelope{
		Analysis:    "replans",
		GeneratedAt: c.now().UTC(),
		Filter:      c.filterJSON(),
		Rows:        res.Rows,
		Extra:       replansExtra{Comparison: cmp},
		Notes:       res.Notes,
	}
	if err := render.Write(stdout, c.format, env); err != nil {
		return err
	}
	if c.format != "table" {
		return nil
	}
	// The comparison is a second table, after the rows and their notes.
	fmt.Fprintf(stdout, "\nSucceeded without a valid replan (%d sessions) against after %d or more (%d sessions):\n",
		cmp.NoReplanSessions, cmp.SeveralMinReplans, cmp.SeveralSessions)
	return render.Write(stdout, "table", &render.Envelope{Rows: cmp.Features})
}
