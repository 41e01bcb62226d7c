package analyze

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/render"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// common are the flags every analysis command takes.
type common struct {
	db, since, until, by, format string
	filter                       metrics.Filter
	now                          func() time.Time
	nats                         string            // -nats: read through the ingester's query service
	lake                         lakeFlags         // -lake, -lake-cache: read the Iceberg lake
	conn                         bus.ConnConfig    // how to reach NATS: -user, -creds, -tls-ca, …
	read                         store.ReadOptions // -memory-limit, -temp-dir
	// classifies: the command classifies tasks and takes -taxonomy
	// (withTaxonomy); start loads the taxonomy taxPath names into tax.
	classifies bool
	taxPath    string
	tax        *taxonomy.Taxonomy
}

// newFlags returns a flag set for command name with the common flags bound;
// extra flags are added by the caller before parse. Its help names the
// command as the user runs it under ctx.
func newFlags(ctx context.Context, name, summary string, stderr io.Writer) (*flag.FlagSet, *common) {
	c := &common{now: time.Now}
	fs := flag.NewFlagSet("analyze "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags]\n\n%s\n\nFlags:\n", cli.Cmd(ctx, "analyze "+name), summary)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.db, "db", "evosignal.duckdb", "DuckDB `file` written by the ingester (opened read-only)")
	fs.StringVar(&c.since, "since", "", "only sessions started at or after this `time` (RFC 3339, date, or duration back: 24h, 7d)")
	fs.StringVar(&c.until, "until", "", "only sessions started before this `time` (same forms as -since)")
	fs.StringVar(&c.filter.Agent, "agent", "", "only this agent")
	fs.StringVar(&c.filter.Model, "model", "", "only this model")
	fs.StringVar(&c.filter.TaskType, "task-type", "", "only this task type")
	fs.StringVar(&c.by, "by", "", "group by these `dimensions`, comma-separated: "+strings.Join(metrics.Dimensions, ", "))
	fs.StringVar(&c.format, "format", "", "output: "+strings.Join(render.Formats, ", ")+" (default table on a terminal, json otherwise)")
	c.lake.register(fs)
	readFlags(fs, &c.read)
	cli.ConnFlags(fs, &c.conn)
	return fs, c
}

// withTaxonomy binds -taxonomy for a command that classifies tasks: start
// loads the taxonomy into c.tax.
func (c *common) withTaxonomy(fs *flag.FlagSet) {
	c.classifies = true
	taxonomyFlag(fs, &c.taxPath)
}

// taxonomyFlag binds -taxonomy, the task-type taxonomy file, to path.
func taxonomyFlag(fs *flag.FlagSet, path *string) {
	fs.StringVar(path, "taxonomy", "", "task-type taxonomy `file` (JSON, - for stdin; default: the embedded one)")
}

// start parses args (the common flags and the command's own, bound on fs),
// checks them and opens what the command reads. A problem with the command
// line is printed on fs's output and returned as errUsage: those of the
// common flags all at once, then check's (the command's own checks, nil for
// none), printed after "analyze: ". check runs after the parse: a closure,
// not the method value cfg.Validate, which would check a copy of cfg made
// before the flags were set. With -taxonomy (withTaxonomy), the
// taxonomy is loaded into c.tax before the database is opened. After -h,
// start returns no source and no error: the command is done.
func (c *common) start(ctx context.Context, fs *flag.FlagSet, args []string, stdout io.Writer, check func() error) (metrics.Source, func() error, error) {
	if err := c.parse(ctx, fs, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	if check != nil {
		if err := check(); err != nil {
			fmt.Fprintf(fs.Output(), "analyze: %v\n", err)
			return nil, nil, errUsage
		}
	}
	if c.classifies {
		var err error
		if c.tax, err = loadTaxonomy(c.taxPath); err != nil {
			return nil, nil, err
		}
	}
	return c.open(ctx)
}

// parse parses args and checks the common flags, reporting every problem.
func (c *common) parse(ctx context.Context, fs *flag.FlagSet, args []string, stdout io.Writer) error {
	// -nats is bound here rather than in newFlags: a command with a -nats
	// of its own (rules -publish) keeps it and reads from -db.
	if fs.Lookup("nats") == nil {
		fs.StringVar(&c.nats, "nats", "", "read through the running ingester's query service at this NATS `URL` instead of -db (URL#subject for a subject other than "+sqlservice.DefaultSubject+")")
	}
	if err := cli.Parse(ctx, fs, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return flag.ErrHelp
		}
		return errUsage
	}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if c.lake.uri != "" && c.nats != "" {
		errs = append(errs, errors.New("-lake and -nats exclude each other"))
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
// ingester's query service, or with -lake reads the lake's snapshot.
func (c *common) open(ctx context.Context) (metrics.Source, func() error, error) {
	if c.nats != "" {
		return openRemote(c.nats, c.conn)
	}
	if c.lake.uri != "" {
		db, _, err := openLake(ctx, c.lake, c.read)
		if err != nil {
			return nil, nil, err
		}
		return metrics.DB{DB: db}, db.Close, nil
	}
	db, err := openDB(ctx, c.db, c.read)
	if err != nil {
		return nil, nil, err
	}
	return metrics.DB{DB: db}, db.Close, nil
}

// readFlags binds -memory-limit and -temp-dir, the DuckDB settings of a
// read-only open of a large database.
func readFlags(fs *flag.FlagSet, o *store.ReadOptions) {
	fs.StringVar(&o.MemoryLimit, "memory-limit", "", "DuckDB memory limit for reading the database, such as 4GiB (default DuckDB's, 80% of RAM)")
	fs.StringVar(&o.TempDir, "temp-dir", "", "`dir` where DuckDB spills what does not fit under -memory-limit (default FILE.tmp beside -db)")
}

// openDB opens the database at path read-only (store.OpenReadOnlyWith: a
// database an ingester holds is a *store.LockedError); a missing file is
// an error that says where databases come from.
func openDB(ctx context.Context, path string, o store.ReadOptions) (*sql.DB, error) {
	db, err := store.OpenReadOnlyWith(ctx, path, o)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingDB(ctx, path, err)
	}
	return db, err
}

// missingDB explains a database file that does not exist: the ingester
// writes one (-db), and agentsim demo writes its own in its directory
// (demo.Paths), which it names when the working directory has one. It
// names the commands as the user runs them under ctx.
func missingDB(ctx context.Context, path string, err error) error {
	hint := "; the ingester writes one: " + cli.Cmd(ctx, "ingest -db "+path) + " (-file FILE loads a file of events)"
	if demos, _ := filepath.Glob(filepath.Join("evosignal-demo*", "evosignal.duckdb")); len(demos) > 0 {
		hint += "; " + cli.Cmd(ctx, "agentsim demo") + " wrote its own here: -db " + strings.Join(demos, " or -db ")
	} else {
		hint += "; " + cli.Cmd(ctx, "agentsim demo") + " writes its own, evosignal-demo/evosignal.duckdb"
	}
	return fmt.Errorf("%w%s", err, hint)
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

// loadTaxonomy reads the -taxonomy file (- for stdin); empty is the
// embedded taxonomy.
func loadTaxonomy(path string) (*taxonomy.Taxonomy, error) {
	if path == "" {
		return taxonomy.Default(), nil
	}
	b, err := cli.ReadFile(path, os.Stdin)
	if err != nil {
		return nil, fmt.Errorf("read taxonomy: %w", err)
	}
	t, err := taxonomy.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("taxonomy %s: %w", path, err)
	}
	return t, nil
}
