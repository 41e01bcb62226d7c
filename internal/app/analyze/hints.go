package analyze

import (
	"context"
	"fmt"
	"io"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/render"
)

const hintsSummary = "tool-hint failure rates, lift and p-values; followed, planned, dropped and hallucinated hints"

// runHints is `analyze hints`.
func runHints(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags(ctx, "hints", hintsSummary+`.

Per tool hint (with -by task_type, per task type × hint), over real tool
calls (control calls excluded): calls, failures, the failure rate with its
95% Wilson interval, its lift over the calls under every other hint with a
p-value (Fisher's exact test, or chi-square with Yates' correction for large
counts; the test is named), how often the hinted tool was used, and how
often the hint was planned, dropped by a replan and stripped as
hallucinated. Calls without a hint are one more row (hint null). Rows with
at least -min-calls calls come first, worst lift first. A task's type is
its own task_type, else its session's, else the taxonomy's classification
of its description (-taxonomy); -task-type filters on that type.`, stderr)
	cfg := metrics.DefaultHintsConfig()
	fs.Int64Var(&cfg.MinCalls, "min-calls", cfg.MinCalls, "calls a hint needs to be ranked by its lift")
	c.withTaxonomy(fs)
	src, closeDB, err := c.start(ctx, fs, args, stdout, func() error { return cfg.Validate() })
	if err != nil || src == nil {
		return err
	}
	defer closeDB()
	rows, err := metrics.Hints(ctx, src, c.filter, c.tax, cfg)
	if err != nil {
		return fmt.Errorf("hints: %w", err)
	}
	filter := c.filterJSON()
	filter["min_calls"] = cfg.MinCalls
	env := &render.Envelope{
		Analysis:    "hints",
		GeneratedAt: c.now().UTC(),
		Filter:      filter,
		Classifier:  c.tax.ID(),
		Rows:        rows,
	}
	env.Omit = metrics.UngroupedDims(c.filter.By)
	return render.Write(stdout, c.format, env)
}
