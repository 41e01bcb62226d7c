package analyze

import (
	"context"
	"errors"
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
nil rules are marked retire. That effect is observational: who loaded a rule
is not random.

The randomised effect comes first: for each rule set version that held out
a share of its sessions (agent.session.started assignment, v1.4), its rules
arm against its holdout arm, on success, first-try success, replans and
tokens per session: the difference of the arms' means with an always-valid
95% interval (a confidence sequence: reading it every night keeps its error
rate), and a sample-ratio check (the holdout's share against the rule set's,
chi-square, p < 0.001 calls a mismatch) that withholds the effect when the
assignment does not check out. Its verdict on -metric: helpful, harmful,
undecided or withheld. Each rule with a holdout of its own (analyze rules
-rule-holdout) gets a row of its own after its set's (rule set): within the
set's rules arm, the sessions that applied it against those that held it
out.

JSON: rows are the observational effects, extra.randomised the randomised
ones; a table shows the randomised ones first; CSV and ndjson show -view
(observational by default, or randomised).`, stderr)
	ec := metrics.DefaultEffectConfig()
	fs.Int64Var(&ec.MinSessions, "min-sessions", ec.MinSessions, "sessions each arm needs before an effect can be called nil")
	fs.Float64Var(&ec.NilMargin, "nil-margin", ec.NilMargin, "an effect whose difference interval lies inside ±this is nil")
	fs.StringVar(&ec.Metric, "metric", ec.Metric, "decide verdicts on: "+strings.Join(metrics.EffectMetrics, ", "))
	view := fs.String("view", "observational", "CSV and ndjson: the rows to write, observational or randomised")
	src, closeDB, err := c.start(ctx, fs, args, stdout, func() error {
		if *view != "observational" && *view != "randomised" {
			return errors.Join(ec.Validate(), fmt.Errorf("-view %q: want observational or randomised", *view))
		}
		return ec.Validate()
	})
	if err != nil || src == nil {
		return err
	}
	defer closeDB()
	res, err := metrics.Effect(ctx, src, c.filter, ec)
	if err != nil {
		return fmt.Errorf("effect: %w", err)
	}
	rnd, err := metrics.Randomised(ctx, src, c.filter, ec.Metric)
	if err != nil {
		return fmt.Errorf("effect: %w", err)
	}
	filter := c.filterJSON()
	filter["min_sessions"] = ec.MinSessions
	filter["nil_margin"] = ec.NilMargin
	filter["metric"] = ec.Metric
	env := &render.Envelope{
		Analysis:    "effect",
		GeneratedAt: c.now().UTC(),
		Filter:      filter,
		Rows:        res.Rows,
		Extra:       effectExtra{Randomised: rnd},
		Notes:       res.Notes,
	}
	for _, r := range rnd {
		if !r.AssignmentOK {
			what := "rule set " + r.Ruleset
			if r.Rule != "" {
				what = "rule " + r.Rule + " in " + what
			}
			env.Notes = append(env.Notes, fmt.Sprintf("%s: randomised effect withheld: %s", what, r.Problem))
		}
	}
	switch c.format {
	case "table":
		if len(rnd) > 0 {
			fmt.Fprintln(stdout, "Randomised (rules arm against holdout arm, always-valid 95% intervals):")
			if err := render.Write(stdout, c.format, &render.Envelope{Analysis: "effect", Rows: rnd}); err != nil {
				return err
			}
			fmt.Fprintln(stdout, "\nObservational (sessions that loaded a rule against comparable ones that did not):")
		}
	case "csv", "ndjson":
		if *view == "randomised" {
			env.Rows = rnd
		}
	}
	return render.Write(stdout, c.format, env)
}

// effectExtra is the "extra" section of `analyze effect` JSON output.
type effectExtra struct {
	// Randomised are the randomised effects, one per rule set version
	// with a holdout and one per rule with a holdout of its own
	// (metrics.RandomisedRow).
	Randomised []metrics.RandomisedRow `json:"randomised"`
}
