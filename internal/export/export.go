// Package export writes the tables of an evosignal database as Parquet files
// that DuckDB, pandas/pyarrow, polars, Spark or Trino read directly: one
// folder per table, hive-partitioned by day, and on every run only what was
// committed since the last one.
//
// Layout of the output directory:
//
//	_evosignal_export.json                    the manifest (see Manifest)
//	_evosignal_export.lock                    held while an export runs
//	_evosignal_staging/run-000002/…           a run's files while it writes them
//	events/day=2025-06-12/part-000001-<uuid>.parquet
//	session_starts/day=2025-06-12/part-000001-<uuid>.parquet
//	…                                         one folder per table in Tables
//
// A typed row's day is the UTC date of its event's time (plan_tasks and
// replan_dropped take their parent event's), a dead letter's the UTC date of
// received_at. The day is the folder name only, not a column in the files.
//
// Incremental: the manifest holds, per table, the high-water mark of the
// rows exported — the commit time of the last batch, events.ingested_at
// (dead_letters.received_at for dead letters). A run exports the rows
// committed after it, up to the latest commit time it sees, as files named
// part-<run>-<uuid>.parquet. It writes every table into a staging folder
// (_evosignal_staging, which readers of the table folders never list, and
// which Spark, pyarrow and DuckDB's hive readers skip by its leading
// underscore), then moves the files into the table folders (a rename each,
// within one file system) and replaces the manifest atomically (write a
// temporary file, sync, rename). So the table folders never hold the files
// of a run still writing; a run killed while writing leaves files only in
// the staging folder. The manifest is the commit point: the files of a run
// whose number is greater than the manifest's run are not committed (a run
// killed between its renames and the manifest), and every run starts by
// removing them and the staging folder. So an interrupted export leaves no
// duplicates: it is simply done again.
//
// The marks assume that commit times grow: a row committed later with a
// commit time at or before a mark (a clock set back) is not exported; the
// export notices that the database holds more rows in the exported windows
// than it wrote and warns.
package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/evosignal/evosignal/queries"
)

// Errors returned by Export, for callers to branch on with errors.Is.
var (
	// ErrNotDir: Config.Dir exists and is not a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrNotExportDir: Config.Dir holds other files and no manifest, so it is
	// not an export directory; the export refuses to write (and clean) there.
	ErrNotExportDir = errors.New("not an export directory")
	// ErrBusy: another export is writing to the same directory.
	ErrBusy = errors.New("another export is writing to this directory")
	// ErrManifest: the manifest cannot be read, or is of another format or
	// version.
	ErrManifest = errors.New("bad export manifest")
	// ErrSince: Config.Since does not fit the exports the directory already
	// holds (it would leave a gap, or reach back before their start).
	ErrSince = errors.New("-since does not fit the existing export")
)

// Config says where to export and which commit times.
type Config struct {
	// Dir is the output directory; it is created if missing. It must be empty
	// or an export directory (holding a manifest).
	Dir string
	// Since, when set, leaves out every row committed at or before it. It
	// starts an export directory; later runs may repeat it or leave it out.
	Since time.Time
	// Until, when set, exports only rows committed at or before it; the
	// next run continues from there.
	Until time.Time
	// Starting, when set, is called before each table is written, with its
	// place among the tables, its rows and the time the run has left. The
	// rows are counted before the first table is written, only when
	// Starting is set.
	Starting func(TableStart)
	// Progress, when set, is called after each table.
	Progress func(TableResult)
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("output directory: none given"))
	}
	if strings.ContainsRune(c.Dir, 0) {
		errs = append(errs, errors.New("output directory: contains a NUL byte"))
	}
	if !c.Since.IsZero() && !c.Until.IsZero() && !c.Since.Before(c.Until) {
		errs = append(errs, fmt.Errorf("since %s is not before until %s",
			c.Since.UTC().Format(time.RFC3339), c.Until.UTC().Format(time.RFC3339)))
	}
	return errors.Join(errs...)
}

// TableResult is what a run wrote for one table.
type TableResult struct {
	Table string
	Rows  int64
	Files int
	Took  time.Duration // writing the table's files (staged)
	// After and Upto bound the commit times exported: (After, Upto]. After is
	// zero from the start; both are zero when there was nothing new.
	After, Upto time.Time
}

// Result is what a run did.
type Result struct {
	Dir      string // absolute output directory
	Run      int64  // this run's number; the previous run's when nothing was new
	Tables   []TableResult
	Rows     int64
	Files    int
	Removed  int      // files of interrupted runs removed at the start
	Warnings []string // data problems the export noticed but did not fail on
}

// Export writes what db holds and the export in cfg.Dir does not yet. db
// is read in one transaction; open it read-only. On error nothing is
// committed: the files written so far are removed (or, after a crash, at the
// next start) and the manifest is unchanged.
func Export(ctx context.Context, db *sql.DB, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid config: %w", err)
	}
	dir, err := prepareDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	m, found, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	if !found {
		if err := checkEmpty(dir); err != nil {
			return nil, err
		}
	}
	res := &Result{Dir: dir, Run: m.Run}
	if res.Removed, err = removeUncommitted(dir, m.Run); err != nil {
		return nil, err
	}
	started, err := m.applySince(cfg.Since)
	if err != nil {
		return nil, err
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()

	marks, err := readMarks(ctx, tx, cfg.Until)
	if err != nil {
		return nil, err
	}
	if res.Warnings, err = checkCommitted(ctx, tx, m); err != nil {
		return nil, err
	}

	run := m.Run + 1
	next := m.clone()
	advanced := false
	stage := stagingDir(dir, run)
	fail := func(err error) (*Result, error) {
		return nil, errors.Join(err, removeStaging(dir), removeRun(dir, run))
	}
	var staged []string
	var left eta
	var counts map[string]int64
	latest := marks // the latest commit times, whatever -until says
	if !cfg.Until.IsZero() {
		if latest, err = readMarks(ctx, tx, time.Time{}); err != nil {
			return nil, err
		}
	}
	if cfg.Starting != nil {
		if counts, err = rowCounts(ctx, tx, next, marks, latest); err != nil {
			return nil, err
		}
		for _, n := range counts {
			left.left += n
		}
	}
	for i, t := range Tables {
		after, upto, ok := next.window(t, marks)
		tr := TableResult{Table: t.Name}
		if ok {
			if cfg.Starting != nil {
				cfg.Starting(TableStart{Table: t.Name, Index: i + 1, Of: len(Tables), Rows: counts[t.Name], ETA: left.estimate()})
			}
			t0 := time.Now()
			tr.After, tr.Upto = after, upto
			var files []string
			if tr.Rows, files, err = exportTable(ctx, tx, stage, t, run, after, upto, latest); err != nil {
				return fail(err)
			}
			tr.Files, tr.Took = len(files), time.Since(t0)
			left.wrote(tr.Rows, tr.Took)
			staged = append(staged, files...)
			next.advance(t, upto, tr.Rows, tr.Files)
			advanced = true
		}
		res.Tables = append(res.Tables, tr)
		res.Rows += tr.Rows
		res.Files += tr.Files
		if cfg.Progress != nil {
			cfg.Progress(tr)
		}
	}
	if w, err := checkReusedKeys(ctx, tx, m, next); err != nil {
		return fail(err)
	} else if w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if err := moveIntoPlace(dir, stage, staged); err != nil {
		return fail(err)
	}
	if !advanced && found && !started {
		return res, nil // nothing new: the manifest stays as it is
	}
	if advanced {
		next.Run = run
	}
	next.UpdatedAt = time.Now().UTC()
	if err := writeManifest(dir, next); errors.Is(err, errSyncDir) {
		res.Warnings = append(res.Warnings, err.Error()) // committed all the same
	} else if err != nil {
		return fail(err)
	}
	res.Run = next.Run
	return res, nil
}

// prepareDir checks the output directory, creating it if missing, and
// returns its absolute, cleaned path.
func prepareDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("output directory %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return "", fmt.Errorf("create output directory: %w", err)
		}
	case err != nil:
		return "", fmt.Errorf("output directory %s: %w", dir, err)
	case !fi.IsDir():
		return "", fmt.Errorf("output directory %s: %w", dir, ErrNotDir)
	}
	return abs, nil
}

// checkEmpty refuses a directory without a manifest that holds anything but
// what an interrupted first export leaves behind: the export removes files
// there, so it must not be pointed at a directory of other data by mistake.
func checkEmpty(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read output directory: %w", err)
	}
	for _, e := range ents {
		n := e.Name()
		if n == lockName || n == manifestName+tmpSuffix || n == stagingName || (e.IsDir() && isTable(n)) {
			continue
		}
		return fmt.Errorf("output directory %s holds %q and no %s: %w (choose an empty or new directory)",
			dir, n, manifestName, ErrNotExportDir)
	}
	return nil
}

// marks are the high-water marks of this run, per clock; zero when the
// clock has no rows (at or before -until).
type marks map[string]time.Time

func readMarks(ctx context.Context, tx *sql.Tx, until time.Time) (marks, error) {
	var ev, dl sql.NullTime
	err := tx.QueryRowContext(ctx, queries.MustRead("export/marks.sql"), sql.Named("until", nullTime(until))).Scan(&ev, &dl)
	if err != nil {
		return nil, fmt.Errorf("read high-water marks: %w", err)
	}
	m := marks{}
	if ev.Valid {
		m[clockEvents] = ev.Time.UTC()
	}
	if dl.Valid {
		m[clockDeadLetters] = dl.Time.UTC()
	}
	return m, nil
}

// checkCommitted compares the rows the database holds in the windows
// already exported with the rows the export wrote: more means rows were
// committed there after the export (a clock set back).
func checkCommitted(ctx context.Context, tx *sql.Tx, m *Manifest) ([]string, error) {
	ev, dl := m.Tables[eventsTable], m.Tables[deadLettersTable]
	var nev, ndl int64
	err := tx.QueryRowContext(ctx, queries.MustRead("export/committed.sql"),
		sql.Named("floor", nullTimePtr(m.Since)),
		sql.Named("events_mark", nullTimePtr(ev.Mark)),
		sql.Named("dead_mark", nullTimePtr(dl.Mark)),
	).Scan(&nev, &ndl)
	if err != nil {
		return nil, fmt.Errorf("count exported windows: %w", err)
	}
	var warn []string
	for _, c := range []struct {
		table     string
		have, got int64
		st        TableState
	}{{eventsTable, nev, ev.Rows, ev}, {deadLettersTable, ndl, dl.Rows, dl}} {
		if c.have != c.got {
			warn = append(warn, fmt.Sprintf("%s: the database holds %d rows committed up to %s, the export %d: "+
				"rows committed later with an earlier commit time (a clock set back) are not exported, "+
				"or this is another database; export into a new directory for an exact copy",
				c.table, c.have, c.st.Mark.Format(time.RFC3339Nano), c.got))
		}
	}
	return warn, nil
}

// checkReusedKeys warns when plan events of this run reuse the (session,
// seq) of a plan event exported before: their child rows are not exported.
func checkReusedKeys(ctx context.Context, tx *sql.Tx, prev, next *Manifest) (string, error) {
	before, now := prev.Tables[eventsTable].Mark, next.Tables[eventsTable].Mark
	if before == nil || now == nil || !now.After(*before) {
		return "", nil
	}
	var n int64
	err := tx.QueryRowContext(ctx, queries.MustRead("export/reused_keys.sql"),
		sql.Named("after", *before), sql.Named("upto", *now)).Scan(&n)
	if err != nil {
		return "", fmt.Errorf("check reused plan keys: %w", err)
	}
	if n == 0 {
		return "", nil
	}
	return fmt.Sprintf("%d plan events of this run reuse the (session, seq) of a plan event exported before; "+
		"their plan_tasks and replan_dropped rows are not exported again (seq should be unique within a session)", n), nil
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func nullTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}
