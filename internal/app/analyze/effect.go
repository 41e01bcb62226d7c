package analyze

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/render"
)

const effectSummary = "effect of each rule set version and rule on success and replans; retirement candidates"

func runEffect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags(ctx, "effect", `For each rule set version and each learned rule (agent.session.started ruleset
and rules): the ended sessions that applied it against comparable ones that
did not (same group, agent and task type, same window): success, first-try
success and replan rates with Wilson 95% intervals, and the difference with
Newcombe's 95% interval. A verdict on -metric: harmful (interval entirely on
the bad side), nil (both arms have -min-sessions and the interval is inside
±-nil-margin), helpful (entirely on the good side) or undecided. Harmful and
nil rules are marked retire.`, stderr)
	ec := metrics.DefaultEffectConfig()
	fs.Int64Var(&ec.MinSessions, "min-sessions", ec.MinSessions, "sessions each arm needs before an effect can be called nil")
	fs.Float64Var(&ec.NilMargin, "nil-margin", ec.NilMargin, "an effect whose difference interval lies inside ±this is nil")
	fs.StringVar(&ec.Metric, "metric", ec.Metric, "decide verdicts on: "+strings.Join(metrics.EffectMetrics, ", "))
	src, closeDB, err := c.start(ctx, fs, args, stdout, func() error { return ec.Validate() })
	if err != nil || src == nil {
		return err
	}
	defer closeDB()
	res, err := metrics.Effect(ctx, src, c.filter, ec)
	if err != nil {
		return fmt.Errorf("effect: %w", err)
	}
	filter := c.filterJSON()
	filter["min_sessions"] = ec.MinSessions
	filter["nil_margin"] = ec.NilMargin
	filter["metric"] = ec.Metric
	return render.Write(stdout, c.format, &render.Envelope{
		Analysis:    "effect",
		GeneratedAt: c.now().UTC(),
		Filter:      filter,
		Rows:        res.Rows,
		Notes:       res.Notes,
	})
}
