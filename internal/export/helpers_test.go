package export

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// testDB is a database file the tests load through the ingester and export
// from. The store is open only while loading: the export opens the file
// read-only, as analyze export does.
type testDB struct {
	path string
	db   *testdb.DB
}

func newTestDB(tb testing.TB) *testDB {
	tb.Helper()
	d := testdb.New(tb, testdb.Options{}) // creates the schema
	return &testDB{path: d.Close(tb), db: d}
}

// load opens the store, loads inputs (invalid lines become dead letters),
// and closes the store.
func (d *testDB) load(tb testing.TB, inputs ...testdb.Input) {
	tb.Helper()
	d.db.Reopen(tb)
	for _, in := range inputs {
		d.db.LoadResult(tb, in)
	}
	d.db.Close(tb)
}

// loadFiles loads files (JSON lines; invalid ones become dead letters).
func (d *testDB) loadFiles(tb testing.TB, files ...string) {
	tb.Helper()
	d.load(tb, testdb.Files(tb, files...)...)
}

// loadLines loads JSON lines given as text.
func (d *testDB) loadLines(tb testing.TB, name string, lines ...string) {
	tb.Helper()
	d.load(tb, testdb.Lines(name, lines...))
}

// loadSynth loads n synthetic sessions starting at start.
func (d *testDB) loadSynth(tb testing.TB, seed uint64, start time.Time, n int) {
	tb.Helper()
	d.load(tb, testdb.Synth(tb, "synth.jsonl", seed, start, n))
}

// exec runs statements on the file opened for writing (to bend data the
// ingester would not write).
func (d *testDB) exec(tb testing.TB, stmts ...string) {
	tb.Helper()
	db, err := sql.Open("duckdb", d.path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			tb.Fatalf("%s: %v", s, err)
		}
	}
}

// export runs Export over the file opened read-only.
func (d *testDB) export(ctx context.Context, tb testing.TB, cfg Config) (*Result, error) {
	tb.Helper()
	db, err := sql.Open("duckdb", d.path+"?access_mode=read_only")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	return Export(ctx, db, cfg)
}

// mustExport is export that fails the test on error.
func (d *testDB) mustExport(tb testing.TB, cfg Config) *Result {
	tb.Helper()
	res, err := d.export(context.Background(), tb, cfg)
	if err != nil {
		tb.Fatalf("Export(%s) = %v", cfg.Dir, err)
	}
	return res
}

// counts runs q in a fresh in-memory DuckDB with the database attached
// read-only as src, and returns the first row's integers.
func (d *testDB) counts(tb testing.TB, q string) []int64 {
	tb.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("ATTACH " + sqlString(d.path) + " AS src (READ_ONLY)"); err != nil {
		tb.Fatal(err)
	}
	rows, err := db.Query(q)
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]int64, len(cols))
	ptrs := make([]any, len(cols))
	for i := range out {
		ptrs[i] = &out[i]
	}
	if !rows.Next() {
		tb.Fatalf("%s: no row", q)
	}
	if err := rows.Scan(ptrs...); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// sourceRows counts the rows of a table in the database.
func (d *testDB) sourceRows(tb testing.TB, table string) int64 {
	tb.Helper()
	return d.counts(tb, "SELECT count(*) FROM src.main."+table)[0]
}

// parentDay is the expected partition day of a table's rows, as SQL over
// the source row x (and the parent event e for the child tables).
var parentDay = map[string]struct{ join, day string }{
	"plan_tasks": {"JOIN src.main.events e ON e.session = x.session AND e.seq = x.plan_seq " +
		"AND e.type IN ('agent.plan.created', 'agent.plan.updated')", "e.time"},
	"replan_dropped": {"JOIN src.main.events e ON e.session = x.session AND e.seq = x.replan_seq " +
		"AND e.type = 'agent.plan.updated'", "e.time"},
	"dead_letters": {"", "x.received_at"},
}

// checkExport compares what dir holds of every table with the database,
// row for row (EXCEPT ALL both ways, so duplicates count), checks every
// row's partition day, and that no folder is left for an empty table.
// expect, when it has a table, is the query of the rows expected of it
// (default: all the table's rows).
func (d *testDB) checkExport(tb testing.TB, dir string, expect map[string]string) {
	tb.Helper()
	for _, t := range Tables {
		want := "SELECT * FROM src.main." + t.Name
		if q, ok := expect[t.Name]; ok {
			want = q
		}
		nwant := d.counts(tb, "SELECT count(*) FROM ("+want+")")[0]
		tdir := filepath.Join(dir, t.Name)
		if nwant == 0 {
			if _, err := os.Stat(tdir); !os.IsNotExist(err) {
				tb.Errorf("%s: folder %v, want none (no rows)", t.Name, err)
			}
			continue
		}
		got := readParquet(tb, tdir)
		c := d.counts(tb, fmt.Sprintf(`SELECT
			(SELECT count(*) FROM (%[1]s EXCEPT ALL SELECT * EXCLUDE (day) FROM %[2]s)),
			(SELECT count(*) FROM (SELECT * EXCLUDE (day) FROM %[2]s EXCEPT ALL %[1]s)),
			(SELECT count(*) FROM %[2]s)`, want, got))
		if c[0] != 0 || c[1] != 0 || c[2] != nwant {
			tb.Errorf("%s: %d source rows missing from the export, %d exported rows not in the source, %d rows exported, want %d",
				t.Name, c[0], c[1], c[2], nwant)
		}
		pd, ok := parentDay[t.Name]
		if !ok {
			pd.day = "x.time"
		}
		// Each exported row's day: match it back to its source row.
		bad := d.counts(tb, fmt.Sprintf(`SELECT count(*) FROM (
			SELECT * EXCLUDE (day), day FROM %s
			EXCEPT ALL
			SELECT x.*, CAST(timezone('UTC', %s) AS DATE) FROM src.main.%s x %s)`,
			got, pd.day, t.Name, pd.join))[0]
		if bad != 0 {
			tb.Errorf("%s: %d rows with a wrong day", t.Name, bad)
		}
	}
}

// rowsWhere is the query of a table's rows x that meet cond, SQL over x
// and e, the row's event (or parent event; none for dead letters).
func rowsWhere(table, cond string) string {
	return "SELECT x.* FROM src.main." + table + " x " + eventJoin(table) + " WHERE " + cond
}

// readParquet is the SQL that reads the Parquet files under tdir, listed
// one by one (no glob, so that the path may hold glob characters).
func readParquet(tb testing.TB, tdir string) string {
	tb.Helper()
	files := parquetFiles(tb, tdir)
	if len(files) == 0 {
		tb.Fatalf("no Parquet files under %s", tdir)
	}
	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = sqlString(f)
	}
	return "read_parquet([" + strings.Join(quoted, ", ") + "], hive_partitioning = true)"
}

// eventJoin joins a table's rows x to their event (or parent event) e.
func eventJoin(table string) string {
	switch table {
	case "events":
		return "JOIN src.main.events e ON e.source = x.source AND e.id = x.id"
	case "dead_letters":
		return ""
	}
	if pd, ok := parentDay[table]; ok {
		return pd.join
	}
	return "JOIN src.main.events e ON e.source = x.source AND e.id = x.event_id"
}

// parquetFiles lists the Parquet files under dir, sorted.
func parquetFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if os.IsNotExist(err) && p == dir {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		if !e.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// snapshot maps every file under dir to its content.
func snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, p := range parquetFiles(tb, dir) {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

func readManifestFile(tb testing.TB, dir string) *Manifest {
	tb.Helper()
	m, found, err := readManifest(dir)
	if err != nil || !found {
		tb.Fatalf("manifest of %s: found %v, %v", dir, found, err)
	}
	return m
}

// validFiles are the sample sessions; invalidFiles the invalid events (dead
// letters).
func validFiles(tb testing.TB) []string   { return testdb.SampleSessions(tb) }
func invalidFiles(tb testing.TB) []string { return testdb.Glob(tb, "events/invalid/*.json") }
