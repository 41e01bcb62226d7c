package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/query"
	"github.com/evosignal/evosignal/internal/render"
	"github.com/evosignal/evosignal/internal/store"
)

// common are the flags every analysis command takes.
type common struct {
	db, since, until, by, format string
	filter                       metrics.Filter
	now                          func() time.Time
	nats                         string         // -nats: read through the ingester's query service
	conn                         bus.ConnConfig // how to reach NATS: -user, -creds, -tls-ca, …
}

// newFlags returns a flag set for command name with the common flags bound;
// extra flags are added by the caller before parse.
func newFlags(name, summary string, stderr io.Writer) (*flag.FlagSet, *common) {
	c := &common{now: time.Now}
	fs := flag.NewFlagSet("analyze "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: analyze %s [flags]\n\n%s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.db, "db", "evosignal.duckdb", "DuckDB `file` written by the ingester (opened read-only)")
	fs.StringVar(&c.since, "since", "", "only sessions started at or after this `time` (RFC 3339, date, or duration back: 24h, 7d)")
	fs.StringVar(&c.until, "until", "", "only sessions started before this `time` (same forms as -since)")
	fs.StringVar(&c.filter.Agent, "agent", "", "only this agent")
	fs.StringVar(&c.filter.Model, "model", "", "only this model")
	fs.StringVar(&c.filter.TaskType, "task-type", "", "only this task type")
	fs.StringVar(&c.by, "by", "", "group by these `dimensions`, comma-separated: "+strings.Join(metrics.Dimensions, ", "))
	fs.StringVar(&c.format, "format", "", "output: table, json or csv (default table on a terminal, json otherwise)")
	cli.ConnFlags(fs, &c.conn)
	return fs, c
}

// parse parses args and checks the common flags, reporting every problem.
func (c *common) parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	// -nats is bound here rather than in newFlags: a command with a -nats
	// of its own (rules -publish) keeps it and reads from -db.
	if fs.Lookup("nats") == nil {
		fs.StringVar(&c.nats, "nats", "", "read through the running ingester's query service at this NATS `URL` instead of -db (URL#subject for a subject other than "+query.DefaultSubject+")")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return flag.ErrHelp
		}
		return errUsage
	}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	now := c.now()
	var err error
	if c.filter.Since, err = metrics.ParseTime(c.since, now); err != nil {
		errs = append(errs, fmt.Errorf("-since: %w", err))
	}
	if c.filter.Until, err = metrics.ParseTime(c.until, now); err != nil {
		errs = append(errs, fmt.Errorf("-until: %w", err))
	}
	c.filter.By = splitList(c.by)
	errs = append(errs, c.filter.Validate())
	if c.format == "" {
		c.format = "json"
		if isTerminal(stdout) {
			c.format = "table"
		}
	}
	if !slices.Contains(render.Formats, c.format) {
		errs = append(errs, fmt.Errorf("-format %q: want one of %s", c.format, strings.Join(render.Formats, ", ")))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(fs.Output(), "analyze: %v\n", err)
		return errUsage
	}
	return nil
}

// open opens the database read-only (store.OpenReadOnly: a database an
// ingester holds is a *store.LockedError), or with -nats reads through the
// ingester's query service.
func (c *common) open(ctx context.Context) (metrics.Source, func() error, error) {
	if c.nats != "" {
		return openRemote(c.nats, c.conn)
	}
	db, err := store.OpenReadOnly(ctx, c.db)
	if err != nil {
		return nil, nil, err
	}
	return metrics.DB{DB: db}, db.Close, nil
}

// filterJSON is how the filter appears in JSON output.
func (c *common) filterJSON() map[string]any {
	m := map[string]any{"by": c.filter.By}
	if c.filter.By == nil {
		m["by"] = []string{}
	}
	put := func(k string, v string) {
		if v != "" {
			m[k] = v
		}
	}
	if !c.filter.Since.IsZero() {
		m["since"] = c.filter.Since.UTC().Format(time.RFC3339)
	}
	if !c.filter.Until.IsZero() {
		m["until"] = c.filter.Until.UTC().Format(time.RFC3339)
	}
	put("agent", c.filter.Agent)
	put("model", c.filter.Model)
	put("task_type", c.filter.TaskType)
	return m
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
