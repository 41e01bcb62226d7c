package analyze

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/render"
)

const mappingsSummary = "task type → tool mappings: tool shares, success, entropy and stability"

// runMappings is `analyze mappings`.
func runMappings(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags(ctx, "mappings", mappingsSummary+`.

Per task type (always grouped by it; -by adds more dimensions), over real
tool calls: each tool's calls, successes, success rate and share of the
type's calls; the top tool and its share; the entropy of the distribution
(bits); and whether the mapping is stable: the same top tool with at least
-stable-share of the calls in each of the last -windows windows of length
-window. Windows end at -until, or just after the latest session start
selected. A call belongs to the task with its task_id in the plan version in
force at the call.`, stderr)
	cfg := metrics.DefaultMappingsConfig()
	fs.Float64Var(&cfg.StableShare, "stable-share", cfg.StableShare, "share of a window's calls the top tool needs")
	fs.IntVar(&cfg.Windows, "windows", cfg.Windows, "number of recent windows that must agree")
	window := fs.String("window", "7d", "window `length` (Go duration, or days/weeks: 7d, 2w)")
	c.withTaxonomy(fs)
	src, closeDB, err := c.start(ctx, fs, args, stdout, func() error {
		var err error
		if cfg.Window, err = metrics.ParseDuration(*window); err != nil {
			return fmt.Errorf("-window: %w", err)
		}
		return cfg.Validate()
	})
	if err != nil || src == nil {
		return err
	}
	defer closeDB()
	res, err := metrics.Mappings(ctx, src, c.filter, c.tax, cfg)
	if err != nil {
		return fmt.Errorf("mappings: %w", err)
	}
	filter := c.filterJSON()
	filter["stable_share"] = cfg.StableShare
	filter["windows"] = cfg.Windows
	filter["window"] = *window
	extra := map[string]any{"window_end": nil}
	if !res.WindowEnd.IsZero() {
		extra["window_end"] = res.WindowEnd.Format(time.RFC3339Nano)
	}
	env := &render.Envelope{
		Analysis:    "mappings",
		GeneratedAt: c.now().UTC(),
		Filter:      filter,
		Classifier:  c.tax.ID(),
		Rows:        res.Rows,
		Extra:       extra,
	}
	if res.Rows == nil {
		env.Rows = []metrics.MappingRow{}
	}
	env.Omit = metrics.UngroupedDims(append([]string{"task_type"}, c.filter.By...))
	return render.Write(stdout, c.format, env)
}
