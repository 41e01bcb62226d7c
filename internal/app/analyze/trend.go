package analyze

import (
	"context"
	"fmt"
	"io"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/render"
)

const trendSummary = "the evolution curve per day or week: success, first-try success, replans, tool failures, rule sets"

func runTrend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags(ctx, "trend", `The evolution curve, one row per period (and group), sorted by time: ended and
open sessions, success and first-try success rates, replan rate, average
replans, the failure rate of real tool calls (control calls excluded),
stripped hints per session, and the rule set versions loaded by the sessions
started in the period. Periods without sessions inside a group's range are
shown empty.`, stderr)
	every := fs.String("every", metrics.EveryDay, "period: day or week (UTC; a week starts on Monday)")
	src, closeDB, err := c.start(ctx, fs, args, stdout, func() error {
		if *every != metrics.EveryDay && *every != metrics.EveryWeek {
			return fmt.Errorf("-every %q: want day or week", *every)
		}
		return nil
	})
	if err != nil || src == nil {
		return err
	}
	defer closeDB()
	rows, outOfRange, err := metrics.TrendChecked(ctx, src, c.filter, *every)
	if err != nil {
		return fmt.Errorf("trend: %w", err)
	}
	filter := c.filterJSON()
	filter["every"] = *every
	var notes []string
	if outOfRange > 0 {
		notes = append(notes, fmt.Sprintf("%d sessions left out: their start is outside years 0001-9999 UTC", outOfRange))
	}
	var unknown int64
	for _, r := range rows {
		unknown += r.UnknownOutcome
	}
	if unknown > 0 {
		notes = append(notes, metrics.UnknownOutcomeNote(unknown))
	}
	return render.Write(stdout, c.format, &render.Envelope{
		Analysis:    "trend",
		GeneratedAt: c.now().UTC(),
		Filter:      filter,
		Rows:        rows,
		Notes:       notes,
	})
}
