package queries_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/queries"
)

// committed are the checksums of the migrations as committed. A committed
// migration is never edited (databases that applied it record this
// checksum, and the store refuses them when the embedded text differs):
// a change to the schema is a new migration, a change to a view a change
// of queries/views. Add a new migration's checksum here when you commit it.
var committed = map[string]string{
	"migrations/0001_init.sql":                     "56837767281363e02238adfc5f3eee24c61885a885ba71319ff00798a9232ccc",
	"migrations/0002_analysis_views.sql":           "009fb056a990f5316f019767fbaa6096c65616754491858b38a30691e988423b",
	"migrations/0003_stored_facts.sql":             "c71f7f07353d9fa8abe0465b7dd576be1b66e9386521a74c0cb23174f829304e",
	"migrations/0004_database_identity.sql":        "9e68bdadc99217d1e44026c7e8a6da2875a5edd2acda056630df24d529a96c2b",
	"migrations/0005_dead_letter_replay.sql":       "4784a06d5bf44a95655bd46258f2f0c0eb4645df31ff045543a8140a5bdc7212",
	"migrations/0006_stored_plan_facts.sql":        "8863832b8c49b126adaed1a42941df9eda9f83623bd1b3e33efaeca11e6e1926",
	"migrations/0007_dead_letter_bounds.sql":       "02aff5c337b44d61b1af3ff2a3b9e398c8717b408b4512e31b73eaef6a6e200d",
	"migrations/0008_facts_bounds.sql":             "a127443f737c96a7da19a997c8b03111f13b4abc7951e093241c97b9e1029ba9",
	"migrations/0009_model_calls.sql":              "9735774680782e9dccf9162510c14a42421707e9c7ec8a27d46c87a93cd796c9",
	"migrations/0010_session_assignments.sql":      "c0275dca88f1b56c0aa9bd7c4983396def8f8561c39de7e97925c4aee64f34b2",
	"migrations/0011_session_rule_assignments.sql": "824b43c5a8e5a68b9ef45ba3e9d2fde27192af6f95e974874ae3b90cc2e0134e",
	"migrations/0012_rollups.sql":                  "6549eccb757eed5e62eeb6510c3556d73464572859dd60e026b86a780e3eef83",
}

func TestCommittedMigrationsAreUnchanged(t *testing.T) {
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m.File] = true
		want, ok := committed[m.File]
		switch {
		case !ok:
			t.Errorf("%s has no committed checksum: add %q to committed once it is committed, and never edit it after", m.File, m.Checksum)
		case m.Checksum != want:
			t.Errorf("%s changed after it was committed: checksum %s, committed %s; databases that applied it will be refused. "+
				"Restore it and put the change in a new migration (a view: in queries/views)", m.File, m.Checksum, want)
		}
	}
	for f := range committed {
		if !seen[f] {
			t.Errorf("committed migration %s is missing", f)
		}
	}
}

// Migrations create and alter tables; views live in views/. The migrations
// that created views before views/ existed are history.
func TestNewMigrationsCreateNoViews(t *testing.T) {
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	view := regexp.MustCompile(`(?i)\bCREATE\s+(OR\s+REPLACE\s+)?(TEMP\w*\s+)?VIEW\b`)
	for _, m := range ms {
		if m.Version > 3 && view.MatchString(m.SQL) {
			t.Errorf("%s creates a view: views are defined in queries/views", m.File)
		}
	}
}

func TestViewsAreAllOrdered(t *testing.T) {
	vs, err := queries.Views()
	if err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(queries.FS, "views/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(files) {
		t.Fatalf("Views() = %d views, views/ has %d files", len(vs), len(files))
	}
	for _, v := range vs {
		name := strings.TrimSuffix(path.Base(v.File), ".sql")
		if !strings.Contains(v.SQL, "CREATE OR REPLACE VIEW "+name+" AS") {
			t.Errorf("%s does not CREATE OR REPLACE VIEW %s", v.File, name)
		}
	}
}

// The order of Views creates every view on a database that has none: each
// view finds the views it reads already there. (A database the migrations
// made also has the views 0001-0003 created, under which a view created too
// early would still bind, to an old definition.)
func TestViewsCreateInOrder(t *testing.T) {
	ctx := t.Context()
	tx, err := freshDB(t).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary`)
	if err != nil {
		t.Fatal(err)
	}
	var existing []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		existing = append(existing, v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	for _, v := range existing {
		if _, err := tx.ExecContext(ctx, `DROP VIEW "`+strings.ReplaceAll(v, `"`, `""`)+`"`); err != nil {
			t.Fatalf("drop view %s: %v", v, err)
		}
	}
	vs, err := queries.Views()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, v := range vs {
		order = append(order, strings.TrimSuffix(path.Base(v.File), ".sql"))
		if _, err := tx.ExecContext(ctx, v.SQL); err != nil {
			t.Fatalf("Views() order %v: create %s: %v", order, v.File, err)
		}
	}
}

func TestIncludes(t *testing.T) {
	got, err := queries.Includes("analyze/hints.sql")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"include/rollup_split.sql", "analyze/mappings_task_types.sql", "include/hint_cells.sql",
		"include/hint_counts.sql", "include/by_dimensions.sql", "include/rollup_served.sql"}; !slices.Equal(got, want) {
		t.Errorf("Includes(analyze/hints.sql) = %q, want %q", got, want)
	}
	frags, err := queries.Fragments()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"analyze/mappings_task_types.sql": true, "include/by_dimensions.sql": true, "include/classify_case.sql": true,
		"include/facts_rows.sql": true, "analyze/stuck_states.sql": true, "include/inferred_rule.sql": true, "include/session_facts_of.sql": true, "include/task_facts_of.sql": true, "include/selected_sessions.sql": true, "include/session_filter.sql": true,
		"web/list_columns.sql": true, "web/list_filter.sql": true,
		"include/rollup_split.sql": true, "include/rollup_served.sql": true, "include/hint_cells.sql": true, "include/hint_counts.sql": true,
		"include/replace_outcomes.sql": true, "include/replace_counts.sql": true}
	if fmt.Sprint(frags) != fmt.Sprint(want) {
		t.Errorf("Fragments() = %v, want %v", frags, want)
	}
}

// Every embedded statement prepares against a fresh database with every
// migration and view applied (multi-statement files run in a transaction
// that is rolled back), and every named parameter it takes is documented in
// its header comment, or in the header of a file the header refers to
// ("as replans.sql", "those of mappings_task_types.sql") or of a fragment it
// includes. Migrations are applied by the store, fragments are checked
// through the files that include them.
func TestEveryFilePrepares(t *testing.T) {
	ctx := t.Context()
	c, err := freshDB(t).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// derive/ and ingest/append_events.sql read batch_events (the rebuild's
	// view of the event log, or the events appender's rows);
	// ingest/append_facts_pending.sql reads its appender's batch_sessions.
	for _, q := range []string{queries.MustRead("ingest/rebuild_view.sql"), `CREATE TEMP TABLE batch_sessions (session VARCHAR)`,
		`CREATE TEMP TABLE rollup_touched (day DATE)`} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	frags, err := queries.Fragments()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	if err := fs.WalkDir(queries.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Ext(p) == ".sql" {
			files = append(files, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasPrefix(f, "migrations/") || frags[f] {
			continue
		}
		t.Run(f, func(t *testing.T) {
			q, err := queries.Expand(f)
			if err != nil {
				t.Fatal(err)
			}
			params, multi, err := prepare(ctx, c, q)
			if multi {
				err = runRolledBack(ctx, c, q)
			}
			if err != nil {
				t.Fatalf("prepare %s: %v", f, err)
			}
			documented := documentedParams(t, f, nil)
			for _, p := range params {
				if !documented[p] {
					t.Errorf("%s takes $%s, which its header does not document (documented: %v)", f, p, keys(documented))
				}
			}
		})
		checked++
	}
	if checked < 50 {
		t.Errorf("checked %d files, want every statement (more than 50)", checked)
	}
}

// freshDB is a new database opened by the store (every migration and view
// applied), closed when the test ends.
func freshDB(tb testing.TB) *sql.DB {
	tb.Helper()
	s, err := store.Open(tb.Context(), filepath.Join(tb.TempDir(), "q.duckdb"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s.DB()
}

// prepare prepares q on c and returns the names of its named parameters;
// multi is true when q holds more than one statement (DuckDB prepares one
// at a time).
func prepare(ctx context.Context, c *sql.Conn, q string) (params []string, multi bool, err error) {
	err = c.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot prepare", dc)
		}
		st, err := pc.PrepareContext(ctx, q)
		if err != nil {
			if strings.Contains(err.Error(), "multiple statements") {
				multi = true
				return nil
			}
			return err
		}
		defer st.Close()
		ds, ok := st.(*duckdb.Stmt)
		if !ok {
			return fmt.Errorf("statement %T is not a duckdb statement", st)
		}
		for i := 1; i <= ds.NumInput(); i++ {
			name, err := ds.ParamName(i)
			if err != nil {
				return err
			}
			if _, err := strconv.Atoi(name); err != nil && name != "" {
				params = append(params, name)
			}
		}
		return nil
	})
	return params, multi, err
}

// runRolledBack runs the statements of q (which take no parameters) in a
// transaction and rolls it back.
func runRolledBack(ctx context.Context, c *sql.Conn, q string) error {
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	_, err := c.ExecContext(ctx, q)
	if _, rerr := c.ExecContext(ctx, "ROLLBACK"); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

var (
	paramName = regexp.MustCompile(`\$([a-z_]+)`)
	refersTo  = regexp.MustCompile(`(?:as|those of) ([a-z_]+\.sql)`)
)

// documentedParams returns the parameters the header comment of the file
// f names, with those of the files it refers to and includes.
func documentedParams(tb testing.TB, f string, seen map[string]bool) map[string]bool {
	tb.Helper()
	if seen == nil {
		seen = map[string]bool{}
	}
	out := map[string]bool{}
	if seen[f] {
		return out
	}
	seen[f] = true
	text := queries.MustRead(f)
	var header strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			break
		}
		header.WriteString(l + "\n")
	}
	for _, m := range paramName.FindAllStringSubmatch(header.String(), -1) {
		out[m[1]] = true
	}
	refs := []string{}
	for _, m := range refersTo.FindAllStringSubmatch(header.String(), -1) {
		refs = append(refs, path.Join(path.Dir(f), m[1]))
	}
	incs, err := queries.Includes(f)
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range append(refs, incs...) {
		for p := range documentedParams(tb, r, seen) {
			out[p] = true
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
