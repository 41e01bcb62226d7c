package report

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// Overview assembles the part of the report a live page shows: the window,
// the settings of the curve, the headline and the evolution curve, computed
// as Build computes them (the other sections stay empty). cfg is validated
// as for Build.
func Overview(ctx context.Context, src metrics.Source, cfg Config, generatedAt time.Time) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Taxonomy == nil {
		cfg.Taxonomy = taxonomy.Default()
	}
	r := newReport(cfg, generatedAt)
	if _, _, err := r.headlineAndTrend(ctx, src, cfg); err != nil {
		return nil, err
	}
	return r, nil
}

// headlineAndTrend computes the replans of both windows, the evolution
// curve and the headline into r, and returns the windows' replans rows.
func (r *Report) headlineAndTrend(ctx context.Context, src metrics.Source, cfg Config) (now, before *metrics.ReplansResult, err error) {
	cur, prev := cfg.filter(cfg.Since, cfg.Until), cfg.filter(r.Window.PreviousSince, r.Window.PreviousUntil)
	if now, err = metrics.Replans(ctx, src, cur); err != nil {
		return nil, nil, fmt.Errorf("replans of the window: %w", err)
	}
	if before, err = metrics.Replans(ctx, src, prev); err != nil {
		return nil, nil, fmt.Errorf("replans of the previous window: %w", err)
	}
	if r.Trend, err = metrics.Trend(ctx, src, cfg.filter(r.Settings.TrendSince, cfg.Until), cfg.Every); err != nil {
		return nil, nil, fmt.Errorf("trend: %w", err)
	}
	r.Headline = newHeadline(now.Rows[0], before.Rows[0], r.Window.Length, rangeStart(r.Trend, cfg.Every, cfg.Since))
	return now, before, nil
}

// WriteLive writes the headline figures (with their sparklines) and the
// evolution curve section of r as an HTML fragment, the markup of the same
// parts of the report page; CSS returns the stylesheet they need.
func WriteLive(w io.Writer, r *Report) error {
	v := view{r, r.toolColours()}
	if err := page.ExecuteTemplate(w, "kpis", v); err != nil {
		return err
	}
	return page.ExecuteTemplate(w, "trend", v)
}

// CSS is the report page's stylesheet (light and dark themes, print, the
// charts' colours).
func CSS() string { return pageCSS }
