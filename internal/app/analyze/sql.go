package analyze

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/render"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/queries"
)

const sqlSummary = "run a read-only SQL query (text, -f file or -q name) and print or save its result"

// sqlHelpFormat is the help of analyze sql; %[1]s is the command.
const sqlHelpFormat = `Runs one read-only SELECT and prints its rows as a table, CSV or JSON (an
array of row objects), or writes them to a Parquet or Arrow file (-out).

  %[1]s "SELECT agent, count(*) FROM events GROUP BY agent"
  %[1]s -f my.sql -param since=2025-06-01T00:00:00Z
  %[1]s -q replans -param 'by=["agent"]' -format csv
  %[1]s -nats nats://ingest-host:4222 -out tools.parquet "FROM tool_calls"

With -db (the default) the file is opened read-only in this process, which a
running ingester does not allow; with -nats the query goes to the ingester's
query service, live. Either way the same checks apply (one SELECT statement,
no files, no extensions, no settings) and the results are the same.
Parameters: -param name=value binds $name, -arg value binds $1, $2, … (or ?)
in order; a value is JSON when it parses as JSON (42, true, null, ["a"],
{"type": "timestamp", "value": "2025-06-01T00:00:00Z"}), else text — DuckDB
casts text to the type the query needs. -q runs a query of queries/analyze/
(-list shows them) with $since, $until, $agent, $model, $task_type as NULL,
$by as [] and the default task taxonomy, each overridable with -param
(another taxonomy without -param tax_id=… does not use the ingester's stored
classification).
docs/query-service.md describes the service and its value types.`

// sqlHelp is the help of analyze sql, whose examples name it as the user
// runs it under ctx.
func sqlHelp(ctx context.Context) string {
	return fmt.Sprintf(sqlHelpFormat, cli.Cmd(ctx, "analyze sql"))
}

// sqlOptions are the flags of `analyze sql`.
type sqlOptions struct {
	db, nats, file, name, format, out string
	lake                              lakeFlags
	list                              bool
	params, args                      multiFlag
	maxRows                           int64
	timeout                           time.Duration
	conn                              bus.ConnConfig
	read                              store.ReadOptions
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runSQL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o sqlOptions
	fl := flag.NewFlagSet("analyze sql", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags] [\"SELECT …\"]\n\n%s\n\nFlags:\n", cli.Cmd(ctx, "analyze sql"), sqlHelp(ctx))
		fl.PrintDefaults()
	}
	fl.StringVar(&o.db, "db", "evosignal.duckdb", "DuckDB `file` written by the ingester (opened read-only)")
	fl.StringVar(&o.nats, "nats", "", "ask the running ingester's query service at this NATS `URL` instead (URL#subject for a subject other than "+sqlservice.DefaultSubject+")")
	o.lake.register(fl)
	fl.StringVar(&o.file, "f", "", "read the query from this `file` (- for stdin)")
	fl.StringVar(&o.name, "q", "", "run the named query `name` of queries/analyze/ (see -list)")
	fl.BoolVar(&o.list, "list", false, "list the named queries and exit")
	fl.StringVar(&o.format, "format", "", "output: "+strings.Join(render.Formats, ", ")+" (default table on a terminal, json otherwise)")
	fl.StringVar(&o.out, "out", "", "write the rows to `FILE`.parquet or FILE.arrow instead of printing them")
	fl.Var(&o.params, "param", "bind $name: `name=value` (repeatable; value JSON if it parses, else text)")
	fl.Var(&o.args, "arg", "bind $1, $2, … in order: `value` (repeatable; JSON if it parses, else text)")
	fl.Int64Var(&o.maxRows, "max-rows", 0, "at most this many `rows` (0: all; through -nats, at most the service's limit)")
	readFlags(fl, &o.read)
	cli.ConnFlags(fl, &o.conn)
	fl.DurationVar(&o.timeout, "timeout", 0, "cancel the query after this `long` (0: no limit; through -nats, at most the service's)")
	text, err := parseInterspersed(ctx, fl, args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return errUsage
	}
	if o.list {
		return listQueries(stdout)
	}
	if o.lake.uri != "" && o.nats != "" {
		fmt.Fprintln(stderr, "analyze sql: -lake and -nats exclude each other")
		return errUsage
	}
	req, err := o.request(text)
	if err != nil {
		fmt.Fprintf(stderr, "analyze sql: %v\n", err)
		return errUsage
	}
	if o.format == "" {
		o.format = "json"
		if isTerminal(stdout) {
			o.format = "table"
		}
	}
	if !slices.Contains(render.Formats, o.format) {
		fmt.Fprintf(stderr, "analyze sql: -format %q: want one of %s\n", o.format, strings.Join(render.Formats, ", "))
		return errUsage
	}
	if ext := strings.ToLower(filepath.Ext(o.out)); o.out != "" && ext != ".parquet" && ext != ".arrow" && ext != ".feather" {
		fmt.Fprintf(stderr, "analyze sql: -out %s: want a .parquet or .arrow file\n", o.out)
		return errUsage
	}
	q, closeQ, err := o.querier(ctx)
	if err != nil {
		return err
	}
	defer closeQ()
	res, err := q.Query(ctx, req)
	if err != nil {
		return err
	}
	if res.Truncated {
		fmt.Fprintf(stderr, "analyze sql: the result was cut off at %d rows (-max-rows, or the query service's limit)\n", len(res.Rows))
	}
	if o.out != "" {
		if err := writeResultFile(ctx, o.out, res); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "analyze sql: wrote %d rows to %s\n", len(res.Rows), o.out)
		return nil
	}
	return render.WriteResult(stdout, o.format, res)
}

// parseInterspersed parses flags before and after the positional query
// text, which may appear once.
func parseInterspersed(ctx context.Context, fl *flag.FlagSet, args []string, stdout io.Writer) (string, error) {
	var text []string
	for {
		if err := cli.Parse(ctx, fl, args, stdout); err != nil {
			return "", err
		}
		if fl.NArg() == 0 {
			break
		}
		text = append(text, fl.Arg(0))
		args = fl.Args()[1:]
	}
	if len(text) > 1 {
		fmt.Fprintf(fl.Output(), "analyze sql: one query at a time (got %d texts; quote the query)\n", len(text))
		return "", errUsage
	}
	return strings.Join(text, ""), nil
}

// request builds the request from the query source and the parameters.
func (o *sqlOptions) request(text string) (sqlservice.Request, error) {
	sources := 0
	for _, s := range []string{text, o.file, o.name} {
		if s != "" {
			sources++
		}
	}
	if sources != 1 {
		return sqlservice.Request{}, errors.New(`give the query as text, -f FILE or -q NAME (exactly one; -list shows the names)`)
	}
	req := sqlservice.Request{SQL: text, MaxRows: o.maxRows, TimeoutMS: o.timeout.Milliseconds()}
	if o.maxRows < 0 || o.timeout < 0 {
		return req, errors.New("-max-rows and -timeout must not be negative")
	}
	switch {
	case o.file != "":
		b, err := cli.ReadFile(o.file, os.Stdin)
		if err != nil {
			return req, err
		}
		req.SQL = string(b)
	case o.name != "":
		q, err := namedQuery(o.name)
		if err != nil {
			return req, err
		}
		// The parameters every analysis query may take, with their
		// neutral values; -param overrides them. Values a query does not
		// use are ignored.
		defaults := append(metrics.Filter{}.Args(), taxonomy.Default().Args()...)
		r, err := sqlservice.NewRequest(q, defaults...)
		if err != nil {
			return req, err
		}
		req.SQL, req.Named = q, r.Named
	}
	for _, a := range o.args {
		req.Args = append(req.Args, paramJSON(a))
	}
	for _, p := range o.params {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return req, fmt.Errorf("-param %q: want name=value", p)
		}
		if req.Named == nil {
			req.Named = map[string]json.RawMessage{}
		}
		req.Named[strings.TrimPrefix(name, "$")] = paramJSON(value)
	}
	if o.name != "" && taxonomyOverridden(o.params) {
		// Another taxonomy: the ingester's stored classification (made
		// with the default's id) must not serve, unless -param tax_id says
		// which taxonomy this is.
		req.Named["tax_id"] = json.RawMessage("null")
	}
	return req, nil
}

// taxonomyOverridden says whether -param sets a taxonomy parameter other
// than tax_id and leaves tax_id alone.
func taxonomyOverridden(params []string) bool {
	tax, id := false, false
	for _, p := range params {
		name, _, _ := strings.Cut(p, "=")
		switch strings.TrimPrefix(name, "$") {
		case "tax_types", "tax_patterns", "tax_fallback":
			tax = true
		case "tax_id":
			id = true
		}
	}
	return tax && !id
}

// paramJSON is a flag value as a parameter: itself when it is JSON, else a
// JSON string.
func paramJSON(v string) json.RawMessage {
	if json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}

// namedQuery reads queries/analyze/NAME.sql with its includes in place.
func namedQuery(name string) (string, error) {
	name = strings.TrimSuffix(name, ".sql")
	names, fragments, err := analysisQueries()
	if err != nil {
		return "", err
	}
	if fragments[name] {
		return "", fmt.Errorf("-q %s: a fragment other queries include, not a query of its own", name)
	}
	if _, ok := names[name]; !ok {
		return "", fmt.Errorf("-q %s: no such query (-list shows them)", name)
	}
	return queries.Expand("analyze/" + name + ".sql")
}

// analysisQueries returns the queries of queries/analyze/ with the first
// line of their header comment, and the fragments (files others include).
func analysisQueries() (map[string]string, map[string]bool, error) {
	files, err := fs.Glob(queries.FS, "analyze/*.sql")
	if err != nil {
		return nil, nil, err
	}
	included, err := queries.Fragments()
	if err != nil {
		return nil, nil, err
	}
	names, fragments := map[string]string{}, map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".sql")
		if included[f] {
			fragments[name] = true
			continue
		}
		b, err := fs.ReadFile(queries.FS, f)
		if err != nil {
			return nil, nil, err
		}
		first, _, _ := strings.Cut(string(b), "\n")
		names[name] = strings.TrimSpace(strings.TrimPrefix(first, "--"))
	}
	return names, fragments, nil
}

func listQueries(w io.Writer) error {
	names, _, err := analysisQueries()
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(names))
	for n := range names {
		keys = append(keys, n)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range keys {
		fmt.Fprintf(tw, "%s\t%s\n", n, names[n])
	}
	return tw.Flush()
}

// querier opens the database (read-only, locked down as the service's is)
// or connects to the query service.
func (o *sqlOptions) querier(ctx context.Context) (sqlservice.Querier, func(), error) {
	if o.nats != "" {
		nc, subject, err := connectNATS(o.nats, o.conn)
		if err != nil {
			return nil, nil, err
		}
		return sqlservice.NewClient(nc, subject), nc.Close, nil
	}
	var db *sql.DB
	var err error
	name := o.db
	if o.lake.uri != "" {
		name = o.lake.uri
		var readable string
		if db, readable, err = openLake(ctx, o.lake, o.read); err == nil {
			if err = allowLake(ctx, db, readable); err != nil {
				db.Close()
			}
		}
	} else {
		db, err = openDB(ctx, o.db, o.read)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := sqlservice.Lockdown(ctx, db); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	return sqlservice.Local{DB: db}, func() { db.Close() }, nil
}

func writeResultFile(ctx context.Context, name string, res *sqlservice.Result) error {
	if strings.EqualFold(filepath.Ext(name), ".parquet") {
		return sqlservice.WriteParquet(ctx, name, res)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = sqlservice.WriteArrowFile(w, res)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
