package demo

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/report"
	"github.com/evosignal/evosignal/internal/store"
)

// writeDemoReport writes the evolution report of the last generation into
// dir: the last generation's simulated days against the generation before,
// rules learned with the demo's thresholds, rule effects over the whole run
// judged on first-try success (what the rules improve; nearly every session
// succeeds in the end).
// It returns the path of the HTML page.
func writeReport(ctx context.Context, dbPath, dir string, curve []Generation, rules metrics.RulesConfig) (*report.Report, string, error) {
	if len(curve) == 0 {
		return nil, "", errors.New("report: no generation")
	}
	db, err := store.OpenReadOnly(ctx, dbPath)
	if err != nil {
		return nil, "", fmt.Errorf("report: %w", err)
	}
	defer db.Close()
	last := curve[len(curve)-1]
	cfg := report.DefaultConfig()
	cfg.Since, cfg.Until = last.Since, last.Until
	cfg.Rules = rules
	cfg.Hints.MinCalls = rules.MinCalls
	cfg.EffectSince = curve[0].Since
	cfg.Effect.Metric = metrics.EffectOnFirstTry
	r, err := report.Build(ctx, metrics.DB{DB: db}, cfg, time.Now())
	if err != nil {
		return nil, "", fmt.Errorf("report: %w", err)
	}
	if err := report.WriteDir(dir, r); err != nil {
		return nil, "", err
	}
	return r, filepath.Join(dir, report.HTMLFile), nil
}
