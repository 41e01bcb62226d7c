package report

import (
	"context"
	"fmt"

	"github.com/evosignal/evosignal/internal/metrics"
)

// worstHints are the first cfg.WorstHints rows of the hints analyzer (per
// task type, over the window) that it ranks by their evidence — supported,
// worst lift first — and that fail more often than their baseline. The
// analyzer's order is kept.
func worstHints(ctx context.Context, src metrics.Source, cfg Config, f metrics.Filter) ([]metrics.HintRow, error) {
	f.By = []string{"task_type"}
	rows, err := metrics.Hints(ctx, src, f, cfg.Taxonomy, cfg.Hints)
	if err != nil {
		return nil, fmt.Errorf("hints: %w", err)
	}
	out := []metrics.HintRow{}
	for _, h := range rows {
		if len(out) == cfg.WorstHints {
			break
		}
		if h.Supported && h.Hint != nil && failsMore(h) {
			out = append(out, h)
		}
	}
	return out, nil
}

// failsMore reports whether a hint's calls fail more often than the other
// calls of its group (or fail at all when those never do).
func failsMore(h metrics.HintRow) bool {
	if h.FailureRate == nil {
		return false
	}
	if h.OtherFailureRate == nil {
		return *h.FailureRate > 0
	}
	return *h.FailureRate > *h.OtherFailureRate
}
