// Package demo is the closed loop of agentsim demo, in one process, over
// several generations: a simulated fleet publishes its sessions, the
// pipeline ingests them, the analyzers learn rules from every session so
// far, the rules go into the key-value bucket, and the next generation's
// agents run with them. It returns the evolution curve, read through the
// analyzers, and writes the report of the last generation. Simulate is the
// fleet run once (agentsim without a subcommand), to NATS or a file.
package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

// Config is one demo run.
type Config struct {
	Scenario    *sim.Scenario
	Generations int
	Sessions    int // per generation; 0: the scenario's
	Concurrency int // 0: the scenario's
	Seed        uint64
	// Dir holds the JetStream store and, unless DB is set, the database;
	// empty picks a fresh ./evosignal-demo, ./evosignal-demo-2, …
	Dir string
	// DB is the DuckDB file to write; it must not exist.
	DB    string
	Rules metrics.RulesConfig
	// Holdout is the share of sessions each learned rule set holds out as
	// a randomised control (analyze rules -holdout); 0: none.
	Holdout float64
	// RuleHoldout is each rule's own holdout share within the rules arm
	// (analyze rules -rule-holdout); 0: none.
	RuleHoldout float64
	// PlantHarmful, when > 1, is the generation that runs with harmful
	// rules planted among the learned ones (an avoid rule against each
	// task type's best tool); the guard (metrics.Guard) should catch them
	// by their randomised effect and roll the set back after it.
	PlantHarmful int
	Progress     io.Writer // progress lines
	Log          *slog.Logger
}

// Result is what a run made: the curve and where it wrote.
type Result struct {
	Curve    []Generation
	Dir      string
	StoreDir string // the JetStream store
	DB       string
	Report   string // the report's HTML page
	// Effects are the rule sets' effects on first-try success over the
	// whole run, randomised (rules arm against holdout arm) and
	// observational, as the report has them.
	Effects []Effect
}

// Effect is one rule set's effect on first-try success, both ways.
type Effect struct {
	Ruleset string `json:"ruleset"`
	// Rule is set for a rule's own effect (its per-rule holdout).
	Rule          string                   `json:"rule,omitempty"`
	Randomised    metrics.RandomisedMetric `json:"randomised"`
	Verdict       string                   `json:"randomised_verdict"`
	Assignment    string                   `json:"assignment"` // ok, or the problem
	Observational *metrics.EffectMetric    `json:"observational"`
}

// Run resolves the paths (Paths), runs the loop and writes the report of
// the last generation into <dir>/report.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	dir, storeDir, db, err := Paths(cfg.Dir, cfg.DB)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Progress, "agentsim demo: %d generations in %s\n", cfg.Generations, dir)
	res := &Result{Dir: dir, StoreDir: storeDir, DB: db}
	if res.Curve, err = runLoop(ctx, cfg, storeDir, db); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	rep, page, err := writeReport(ctx, db, filepath.Join(dir, "report"), res.Curve, cfg.Rules)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	res.Report = page
	for _, x := range rep.RandomisedEffects {
		e := Effect{Ruleset: x.Ruleset, Rule: x.Rule, Verdict: x.Verdict, Assignment: "ok"}
		if !x.AssignmentOK {
			e.Assignment = x.Problem
		}
		for _, m := range x.Metrics {
			if m.Metric == metrics.EffectOnFirstTry {
				e.Randomised = m
			}
		}
		for _, o := range rep.Effects {
			if x.Rule == "" && o.Kind == "ruleset" && o.ID == x.Ruleset || x.Rule != "" && o.Kind == "rule" && o.ID == x.Rule {
				e.Observational = &o.FirstTrySuccess
			}
		}
		res.Effects = append(res.Effects, e)
	}
	return res, nil
}

// Paths picks the directory, store and database of a demo: all new.
func Paths(dir, db string) (dirOut, storeDir, dbOut string, err error) {
	if dir == "" {
		dir = "evosignal-demo"
		for i := 2; exists(dir); i++ {
			dir = fmt.Sprintf("evosignal-demo-%d", i)
		}
	}
	storeDir = filepath.Join(dir, "jetstream")
	if db == "" {
		db = filepath.Join(dir, "evosignal.duckdb")
	}
	if exists(storeDir) {
		return "", "", "", fmt.Errorf("%s holds a previous demo's JetStream store; remove it or choose another -dir", dir)
	}
	if exists(db) {
		return "", "", "", fmt.Errorf("database %s exists; remove it or choose another -db or -dir", db)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", "", err
	}
	return dir, storeDir, db, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
