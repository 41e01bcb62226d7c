package agentsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/evosignal/evosignal/agent/ruleset"
	"io"
	"path/filepath"
	"time"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/workshop/demo"
)

// demoHead is the help of agentsim demo, naming the commands as the user
// runs them under ctx.
func demoHead(ctx context.Context) string {
	return fmt.Sprintf(demoHeadFormat, cli.Cmd(ctx, "agentsim demo"), cli.Cmd(ctx, "analyze trend -every day"))
}

// demoHeadFormat is demoHead with the command lines as %[1]s (the demo) and
// %[2]s (the trend).
const demoHeadFormat = `Usage: %[1]s [flags]

The closed loop, in one process, over several generations:

  1. simulate: the fleet runs -sessions sessions; each agent loads the rule set
     the key-value bucket evosignal_rules holds for it (its own key, else
     "global") when a session starts, and its planner applies the rules to
     the model's hints
  2. ingest: an in-process ingester moves the events from the embedded
     JetStream into the DuckDB file; the demo waits until the stream is fully
     ingested
  3. analyze rules: learns avoid/prefer/replace hint rules from every session
     so far (the analyzer's default thresholds)
  4. publish: puts the rule set into the bucket, one key per agent and
     "global"; the agents' watchers pick it up, and the next generation runs
     with it

It prints the evolution curve, one row per generation: sessions, first-try
success rate (success without any replan), average replans per session,
failure rate of real tool calls, the model calls' tokens per session and the
part of them spent after a session's first replan (what replanning costs:
analyze cost -view segments), the rule set the generation ran with, and
what was learned after it. With the default scenario the model hints the
wrong tool for four task types about half of the time; the learned rules fix
that, and the curve improves from generation 2 on. Generations are one
simulated day apart (starting 2026-01-05), so
'%[2]s' on the database shows the same curve.

Everything goes into a fresh directory (-dir): the DuckDB file and the
JetStream store. Progress goes to stderr; the paths are printed at the end.
`

type demoOptions struct {
	fleetOptions
	dir, db     string
	generations int
	holdout     float64
	ruleHoldout float64
	plant       int
	json        bool
}

func parseDemo(ctx context.Context, args []string, stderr io.Writer) (*demoOptions, error) {
	o := &demoOptions{}
	fs := newFlagSet("agentsim demo", demoHead(ctx), stderr)
	fs.IntVar(&o.generations, "generations", 4, "generations to run")
	fs.Float64Var(&o.holdout, "holdout", metrics.DefaultHoldout, "share of sessions each learned rule set holds out as a randomised control (0 to 0.5)")
	fs.Float64Var(&o.ruleHoldout, "rule-holdout", 0, "share of the rules arm's sessions each learned rule is held out of on its own, for its own randomised effect (0 to 0.5; needs -holdout > 0)")
	fs.IntVar(&o.plant, "plant-harmful", 0, "the `generation` (2 or later) that runs with harmful rules planted among the learned ones, for the guard to catch by their randomised effect and roll back (0: none)")
	fs.IntVar(&o.sessions, "sessions", 0, "sessions per generation (default: the scenario's fleet.sessions, 400 in the default scenario)")
	fs.Uint64Var(&o.seed, "seed", 1, "random `seed`: the same seed gives the same curve")
	fs.StringVar(&o.scenario, "scenario", "", scenarioHelp(ctx))
	fs.IntVar(&o.concurrency, "concurrency", 0, "sessions at once (default: the scenario's fleet.concurrency)")
	fs.StringVar(&o.dir, "dir", "", "`directory` for the JetStream store and, unless -db, the database; it must not hold a previous demo (default: a fresh ./evosignal-demo, ./evosignal-demo-2, …)")
	fs.StringVar(&o.db, "db", "", "DuckDB `file` to write; it must not exist (default: <dir>/evosignal.duckdb)")
	fs.BoolVar(&o.json, "json", false, "print the curve as a JSON array, one object per generation (paths go to stderr)")
	fs.StringVar(&o.logLevel, "log-level", "warn", "log level of the server and the ingester: debug, info, warn, error")
	if err := parseFlags(ctx, fs, args); err != nil {
		return nil, err
	}
	var errs []error
	if o.generations < 1 {
		errs = append(errs, fmt.Errorf("-generations %d: want at least 1", o.generations))
	}
	if o.plant == 1 || o.plant < 0 || o.plant > o.generations {
		errs = append(errs, fmt.Errorf("-plant-harmful %d: want a generation from 2 to %d, or 0", o.plant, o.generations))
	}
	if o.plant > 0 && o.holdout == 0 {
		errs = append(errs, errors.New("-plant-harmful needs a holdout (-holdout > 0): the guard judges a rule set by its randomised effect"))
	}
	if !(o.holdout >= 0 && o.holdout <= ruleset.MaxHoldout) {
		errs = append(errs, fmt.Errorf("-holdout %v: want a share in [0, %v]", o.holdout, ruleset.MaxHoldout))
	}
	switch {
	case !(o.ruleHoldout >= 0 && o.ruleHoldout <= ruleset.MaxHoldout):
		errs = append(errs, fmt.Errorf("-rule-holdout %v: want a share in [0, %v]", o.ruleHoldout, ruleset.MaxHoldout))
	case o.ruleHoldout > 0 && o.holdout == 0:
		errs = append(errs, errors.New("-rule-holdout needs -holdout > 0: a rule's own arm is drawn within the set's rules arm"))
	}
	errs = append(errs, o.problems()...)
	if err := errors.Join(errs...); err != nil {
		return nil, usageError(fs, err)
	}
	return o, nil
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseDemo(ctx, args, stderr)
	if err != nil {
		return helpOK(err)
	}
	log, sc, err := o.load(stderr)
	if err != nil {
		return err
	}
	t0 := time.Now()
	res, err := demo.Run(ctx, demo.Config{
		Scenario:     sc,
		Generations:  o.generations,
		Sessions:     o.sessions,
		Concurrency:  o.concurrency,
		Seed:         o.seed,
		Dir:          o.dir,
		DB:           o.db,
		Rules:        metrics.DefaultRulesConfig(),
		Holdout:      o.holdout,
		RuleHoldout:  o.ruleHoldout,
		PlantHarmful: o.plant,
		Progress:     stderr,
		Log:          log,
	})
	if err != nil {
		return err
	}
	paths := stdout
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res.Curve); err != nil {
			return err
		}
		paths = stderr
	} else {
		if err := demo.WriteCurve(stdout, res.Curve); err != nil {
			return err
		}
		if err := demo.WriteEffects(stdout, res.Effects); err != nil {
			return err
		}
	}
	absDB, _ := filepath.Abs(res.DB)
	absStore, _ := filepath.Abs(res.StoreDir)
	absPage, _ := filepath.Abs(res.Report)
	fmt.Fprintf(stderr, "agentsim demo: done in %s\n", time.Since(t0).Round(time.Millisecond))
	fmt.Fprintf(paths, "database:  %s\njetstream: %s\nreport:    %s\n", absDB, absStore, absPage)
	fmt.Fprintf(paths, "explore:   %s\n", cli.Cmd(ctx, "analyze trend -db "+absDB+" -every day"))
	return nil
}
