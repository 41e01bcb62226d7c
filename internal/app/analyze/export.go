package analyze

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/export"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/store"
)

const exportSummary = "write every table as Parquet files partitioned by day; re-runs add only what is new"

const exportHelp = `Writes the event log, the typed tables and the dead letters as Parquet files
that DuckDB, pandas/pyarrow, polars, Spark or Trino read directly: one folder
per table, hive-partitioned by the UTC day of each row's event time
(received_at for dead letters):

  DIR/events/day=2025-06-12/part-000001-<uuid>.parquet
  DIR/session_starts/…  session_ends/  plans/  plan_tasks/  replans/
  DIR/replan_dropped/  hints_stripped/  tool_calls/  task_completions/
  DIR/depth_limits/  model_calls/  tool_call_args/  session_usage/  session_assignments/
  DIR/session_rule_assignments/
  DIR/dead_letters/
  DIR/_evosignal_export.json   the manifest: per table, the commit time exported up to

Run it again to add only what was committed since (new files, never a
rewrite). A run writes into DIR/_evosignal_staging/ and moves its files
into the table folders when it commits, so readers never see a partial run;
an interrupted export commits nothing, and the next run removes its files
and does it again. The database is opened read-only, so the export
cannot run while an ingester holds the file: stop it, export a copy, or read
live data through the query service. -since/-until bound the commit times
exported (RFC 3339, a date, or a duration back such as 24h or 7d); -since only
starts a new directory. docs/analyze.md shows how to read the files.`

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("analyze export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s -out DIR [flags]\n\n%s\n\nFlags:\n", cli.Cmd(ctx, "analyze export"), exportHelp)
		fs.PrintDefaults()
	}
	db := fs.String("db", "evosignal.duckdb", "DuckDB `file` written by the ingester (opened read-only)")
	out := fs.String("out", "", "output `directory`: empty, new, or an earlier export's (required)")
	since := fs.String("since", "", "start a new export after this commit `time` (RFC 3339, date, or duration back: 24h, 7d)")
	until := fs.String("until", "", "export only rows committed up to this `time` (same forms as -since)")
	var read store.ReadOptions
	readFlags(fs, &read)
	fs.Lookup("memory-limit").Usage = "DuckDB memory limit of the export, such as 2GiB (default " + export.DefaultMemoryLimit +
		": the sorts spill to -temp-dir beyond it, docs/operations.md)"
	if err := cli.Parse(ctx, fs, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	cfg, err := exportConfig(fs, *out, *since, *until, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "analyze export: %v\n", err)
		return errUsage
	}

	conn, err := openExportDB(ctx, *db, export.ReadOptions(read))
	if err != nil {
		return err
	}
	defer conn.Close()

	// Progress: on stderr, each table as it starts, with its rows and, once
	// a table was written, the time the run has left (the events table comes
	// first and takes the longest: seconds per million rows); on stdout, one
	// line per table as it finishes.
	cfg.Starting = func(ts export.TableStart) {
		fmt.Fprintf(stderr, "analyze export: writing %s, %d rows (table %d of %d%s)…\n", ts.Table, ts.Rows, ts.Index, ts.Of, etaText(ts.ETA))
	}
	cfg.Progress = func(tr export.TableResult) {
		fmt.Fprintf(stdout, "%-17s %10d rows %6d files in %s\n", tr.Table, tr.Rows, tr.Files, tr.Took.Round(time.Millisecond))
	}
	res, err := export.Export(ctx, conn, cfg)
	if err != nil {
		var de *duckdb.Error
		if errors.As(err, &de) && de.Type == duckdb.ErrorTypeOutOfMemory {
			limit := read.MemoryLimit
			if limit == "" {
				limit = export.DefaultMemoryLimit
			}
			return fmt.Errorf("export: %w\n(the export ran under -memory-limit %s; nothing of this run is in place: run it again with a larger -memory-limit, e.g. -memory-limit 2GiB, docs/operations.md)", err, limit)
		}
		return fmt.Errorf("export: %w", err)
	}
	if res.Removed > 0 {
		fmt.Fprintf(stderr, "analyze export: removed %d files of an interrupted export\n", res.Removed)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "analyze export: warning: %s\n", w)
	}
	fmt.Fprintln(stdout, exportSummaryLine(res))
	return nil
}

// etaText says how long an export has left, when that is known.
func etaText(eta time.Duration) string {
	switch {
	case eta <= 0:
		return ""
	case eta < time.Second:
		return "; under a second left"
	}
	return "; about " + eta.Round(time.Second).String() + " left"
}

// exportConfig checks the flags, reporting every problem at once.
func exportConfig(fs *flag.FlagSet, out, since, until string, now time.Time) (export.Config, error) {
	cfg := export.Config{Dir: out}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if out == "" {
		errs = append(errs, errors.New("-out: an output directory is required"))
	}
	var err error
	if cfg.Since, err = metrics.ParseTime(since, now); err != nil {
		errs = append(errs, fmt.Errorf("-since: %w", err))
	}
	if cfg.Until, err = metrics.ParseTime(until, now); err != nil {
		errs = append(errs, fmt.Errorf("-until: %w", err))
	}
	if len(errs) == 0 {
		errs = append(errs, cfg.Validate())
	}
	return cfg, errors.Join(errs...)
}

// exportSummaryLine says what the run did, in one line.
func exportSummaryLine(res *export.Result) string {
	if res.Rows == 0 {
		if res.Run == 0 {
			return fmt.Sprintf("nothing to export to %s yet", res.Dir)
		}
		return fmt.Sprintf("nothing new to export to %s since run %d", res.Dir, res.Run)
	}
	return fmt.Sprintf("run %d: %d rows in %d files written to %s (committed%s)", res.Run, res.Rows, res.Files, res.Dir, window(res))
}

// window describes the events' commit times a run exported.
func window(res *export.Result) string {
	for _, t := range res.Tables {
		if t.Upto.IsZero() {
			continue
		}
		if t.After.IsZero() {
			return " up to " + t.Upto.Format(time.RFC3339Nano)
		}
		return " after " + t.After.Format(time.RFC3339Nano) + " up to " + t.Upto.Format(time.RFC3339Nano)
	}
	return ""
}

// openExportDB opens the database read-only. A database an ingester holds
// cannot be exported (DuckDB lets no other process open it); the error
// says what to do instead.
func openExportDB(ctx context.Context, path string, o store.ReadOptions) (*sql.DB, error) {
	db, err := openDB(ctx, path, o)
	if _, ok := errors.AsType[*store.LockedError](err); ok {
		return nil, fmt.Errorf("%w (analyze export reads the file itself: stop the ingester, or export a copy of the file)", err)
	}
	return db, err
}
