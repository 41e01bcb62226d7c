package analyze

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/report"
	"github.com/evosignal/evosignal/internal/store"
)

const reportSummary = "the evolution report: one HTML page, Markdown and JSON for a window against the one before"

const reportHelp = `The evolution report: one HTML page, Markdown and JSON for a window against
the one before.

Writes into -out three files with the same numbers: report.html (one
self-contained page: inline CSS and SVG charts, nothing fetched from the
network), report.md and report.json (the stable shape, docs/analyze.md).
It reads -db, or with -nats a running ingester's query service, or with
-lake the shards' Iceberg lake.
The window is [-since, -until): -since is a time, or a duration counted back
from -until (default 24h); -until defaults to now. It is set against the
window of the same length right before it: first-try success, replan and
success rates with the change and whether it is beyond noise (Newcombe's 95%
interval of the difference excludes 0). Then the evolution curve (-every,
-periods), the worst hints (-top, -min-calls), the task-type → tool map
(stable over -windows windows of the window's length), the rules learned up
to the window's end that were not learned up to its start, the rules to
retire (no longer learned, or judged harmful or nil by the effect analyzer
over the sessions since -effect-since, default the window), the rule
effects, and data quality (dead letters by reason, open sessions, sessions
whose reported replan count differs from their events).

With -serve ADDR it writes nothing: it serves the live pages over the same
database (the overview, the sessions, each session's plans side by side, the
analyzers' tables; docs/page.md) at http://ADDR/ until interrupted. Through
-nats they update as the ingester commits events.`

// reportFlags are the flags of analyze report.
type reportFlags struct {
	db, nats, since, until, out, taxonomy, rulesSince, effectSince string
	serve                                                          string // -serve: the live pages' address
	cfg                                                            report.Config
	conn                                                           bus.ConnConfig
	read                                                           store.ReadOptions
	lake                                                           lakeFlags
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	now := time.Now()
	f, err := parseReport(ctx, args, now, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if f.cfg.Taxonomy, err = loadTaxonomy(f.taxonomy); err != nil {
		return err
	}
	if f.serve != "" {
		return serveReport(ctx, f, stdout)
	}
	c := &common{db: f.db, nats: f.nats, conn: f.conn, read: f.read, lake: f.lake}
	src, closeDB, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	r, err := report.Build(ctx, src, f.cfg, now)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := report.WriteDir(f.out, r); err != nil {
		return err
	}
	fmt.Fprintln(stdout, r.Headline.Text)
	for _, name := range []string{report.HTMLFile, report.MarkdownFile, report.JSONFile} {
		p, err := filepath.Abs(filepath.Join(f.out, name))
		if err != nil {
			p = filepath.Join(f.out, name)
		}
		fmt.Fprintln(stdout, p)
	}
	return nil
}

// parseReport reads the flags and checks them, reporting every problem at
// once.
func parseReport(ctx context.Context, args []string, now time.Time, stderr io.Writer) (*reportFlags, error) {
	f := &reportFlags{cfg: report.DefaultConfig()}
	cfg := &f.cfg
	fs := flag.NewFlagSet("analyze report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s -out DIR | -serve ADDR [flags]\n\n%s\n\nFlags:\n", cli.Cmd(ctx, "analyze report"), reportHelp)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.out, "out", "", "write report.html, report.md and report.json into this `directory` (created if missing)")
	fs.StringVar(&f.serve, "serve", "", "instead of -out, serve the live pages (docs/page.md) over -db, -nats or -lake on this `address` (e.g. :8080) until interrupted; -until ends their default window, the pages' form sets window and filter")
	fs.StringVar(&f.db, "db", "evosignal.duckdb", "DuckDB `file` written by the ingester (opened read-only)")
	f.lake.register(fs)
	readFlags(fs, &f.read)
	cli.ConnFlags(fs, &f.conn)
	fs.StringVar(&f.nats, "nats", "", "read through the running ingester's query service at this NATS `URL` instead of -db (URL#subject for another subject)")
	fs.StringVar(&f.since, "since", "24h", "start of the window: a `time` (RFC 3339, date) or a duration back from -until (24h, 7d)")
	fs.StringVar(&f.until, "until", "", "end of the window, exclusive: a `time` (RFC 3339, date, or a duration back from now); default now")
	fs.StringVar(&cfg.Agent, "agent", "", "only this agent")
	fs.StringVar(&cfg.Model, "model", "", "only this model")
	fs.StringVar(&cfg.TaskType, "task-type", "", "only this task type")
	fs.StringVar(&cfg.Every, "every", cfg.Every, "trend period: day or week (UTC; a week starts on Monday)")
	fs.IntVar(&cfg.Periods, "periods", cfg.Periods, "trend periods shown, the last one holding -until")
	fs.IntVar(&cfg.WorstHints, "top", cfg.WorstHints, "worst hints listed")
	fs.Int64Var(&cfg.Hints.MinCalls, "min-calls", cfg.Hints.MinCalls, "calls a hint needs to be ranked, and that prefer and avoid rules need")
	fs.IntVar(&cfg.MappingWindows, "windows", cfg.MappingWindows, "windows of the window's length in which a task type's top tool must hold to be stable")
	fs.Float64Var(&cfg.StableShare, "stable-share", cfg.StableShare, "share of a window's calls the top tool needs")
	taxonomyFlag(fs, &f.taxonomy)
	fs.StringVar(&f.rulesSince, "rules-since", "", "learn the rule sets from the sessions started at or after this `time` (default: all)")
	ruleFlags(fs, &cfg.Rules, "rules: ")
	fs.StringVar(&f.effectSince, "effect-since", "", "judge rule effects over the sessions started at or after this `time` (default: the window's start)")
	fs.Int64Var(&cfg.Effect.MinSessions, "min-sessions", cfg.Effect.MinSessions, "effect: sessions each arm needs before an effect can be called nil")
	fs.Float64Var(&cfg.Effect.NilMargin, "nil-margin", cfg.Effect.NilMargin, "effect: an effect whose difference interval lies inside ±this is nil")
	fs.StringVar(&cfg.Effect.Metric, "metric", cfg.Effect.Metric, "effect: decide verdicts on "+strings.Join(metrics.EffectMetrics, ", "))
	if err := cli.Parse(ctx, fs, args, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, flag.ErrHelp
		}
		return nil, errUsage
	}
	cfg.Rules.MinCalls = cfg.Hints.MinCalls

	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	switch {
	case f.out == "" && f.serve == "":
		errs = append(errs, errors.New("-out is required (or -serve to serve the pages)"))
	case f.out != "" && f.serve != "":
		errs = append(errs, errors.New("-out and -serve exclude each other"))
	}
	if f.lake.uri != "" && f.nats != "" {
		errs = append(errs, errors.New("-lake and -nats exclude each other"))
	}
	var err error
	if cfg.Until, err = metrics.ParseTime(f.until, now); err != nil {
		errs = append(errs, fmt.Errorf("-until: %w", err))
	}
	if cfg.Until.IsZero() {
		cfg.Until = now
	}
	// A duration counts back from -until, so that -since 24h -until D is
	// the day before D.
	if d, derr := metrics.ParseDuration(f.since); derr == nil {
		cfg.Since = cfg.Until.Add(-d)
	} else if cfg.Since, err = metrics.ParseTime(f.since, now); err != nil || cfg.Since.IsZero() {
		errs = append(errs, fmt.Errorf("-since %q: want an RFC 3339 time, a date or a duration like 24h or 7d", f.since))
	}
	if cfg.RulesSince, err = metrics.ParseTime(f.rulesSince, now); err != nil {
		errs = append(errs, fmt.Errorf("-rules-since: %w", err))
	}
	if cfg.EffectSince, err = metrics.ParseTime(f.effectSince, now); err != nil {
		errs = append(errs, fmt.Errorf("-effect-since: %w", err))
	}
	if len(errs) == 0 {
		errs = append(errs, cfg.Validate())
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(stderr, "analyze report: %v\n", err)
		return nil, errUsage
	}
	return f, nil
}
