package analyze

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// remoteFixtures are the JSON-lines files the -nats tests load: the sample
// sessions and the analyze fixtures (rules, effects, hints, trends).
func remoteFixtures(tb testing.TB) []string {
	tb.Helper()
	return append(testdb.SampleSessions(tb), testdb.Glob(tb, "analyze/*.jsonl")...)
}

// remoteDB loads files into a new database file through the ingester and
// returns its path, closed.
func remoteDB(tb testing.TB, files ...string) string {
	tb.Helper()
	d := testdb.New(tb, testdb.Options{})
	for _, in := range testdb.Files(tb, files...) {
		d.LoadResult(tb, in)
	}
	return d.Close(tb)
}

// liveService opens the database file as the ingester does, starts the
// query service on an embedded nats-server and returns the store and the
// server's URL; both stop when the test ends.
func liveService(tb testing.TB, path string) (*store.Store, string) {
	tb.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	srv, nc, _ := testkit.Embedded(tb)
	svc, err := sqlservice.Start(context.Background(), nc, st.DB(), sqlservice.DefaultConfig(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close() })
	return st, srv.ClientURL()
}

// TestRemoteSourceEqualsDB runs every analysis query through the service
// and through metrics.DB on the same database: same columns, same rows,
// same Go value types.
func TestRemoteSourceEqualsDB(t *testing.T) {
	st, url := liveService(t, remoteDB(t, remoteFixtures(t)...))
	src, closeSrc, err := openRemote(url, bus.ConnConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSrc()
	local := metrics.DB{DB: st.DB()}
	names, _, err := analysisQueries()
	if err != nil {
		t.Fatal(err)
	}
	filters := []metrics.Filter{
		{},
		{By: []string{"agent", "day"}},
		{Since: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Agent: "skilllite", By: []string{"task_type", "ruleset"}},
	}
	for name := range names {
		q, err := namedQuery(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range filters {
			t.Run(fmt.Sprint(name, "/", i), func(t *testing.T) {
				args := append(f.Args(), taxonomy.Default().Args()...)
				args = append(args, sql.Named("every", "day"), sql.Named("window_us", int64(7*24*time.Hour/time.Microsecond)), sql.Named("windows", int64(4)), sql.Named("examples", int64(3)))
				want, err := local.Query(t.Context(), q, args...)
				if err != nil {
					t.Fatalf("metrics.DB: %v", err)
				}
				got, err := src.Query(t.Context(), q, args...)
				if err != nil {
					t.Fatalf("remote: %v", err)
				}
				if d := tableDiff(got, want); d != "" {
					t.Fatal(d)
				}
				if len(want.Rows) == 0 && i == 0 {
					t.Errorf("%s returns no rows on the fixtures: the comparison proves little", name)
				}
			})
		}
	}
}

func tableDiff(got, want *metrics.Table) string {
	if !reflect.DeepEqual(got.Columns, want.Columns) {
		return fmt.Sprintf("columns %v, want %v", got.Columns, want.Columns)
	}
	if len(got.Rows) != len(want.Rows) {
		return fmt.Sprintf("%d rows, want %d", len(got.Rows), len(want.Rows))
	}
	for r := range want.Rows {
		for c := range want.Rows[r] {
			if !sameCell(got.Rows[r][c], want.Rows[r][c]) {
				return fmt.Sprintf("row %d column %s: %T(%v), want %T(%v)", r, want.Columns[c], got.Rows[r][c], got.Rows[r][c], want.Rows[r][c], want.Rows[r][c])
			}
		}
	}
	return ""
}

// sameCell is reflect.DeepEqual with big integers compared by value.
func sameCell(a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	switch x := a.(type) {
	case *big.Int:
		return x.Cmp(b.(*big.Int)) == 0
	case duckdb.Decimal:
		y := b.(duckdb.Decimal)
		return x.Width == y.Width && x.Scale == y.Scale && x.Value.Cmp(y.Value) == 0
	case []any:
		y := b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameCell(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y := b.(map[string]any)
		if len(x) != len(y) {
			return false
		}
		for k := range x {
			if !sameCell(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// TestEveryCommandThroughService runs each analysis command that reads
// through (*common).open with -db on the closed file and with -nats on the
// live service over the same file: the outputs must be the same.
func TestEveryCommandThroughService(t *testing.T) {
	path := remoteDB(t, remoteFixtures(t)...)
	var names []string
	for name := range commands {
		var help bytes.Buffer
		if err := commands[name].run(t.Context(), []string{"-h"}, &help, &help); err != nil {
			t.Fatalf("%s -h: %v", name, err)
		}
		if name != "sql" && name != "report" && strings.Contains(help.String(), "query service at this NATS") {
			names = append(names, name)
		}
	}
	if len(names) < 3 {
		t.Fatalf("commands with -nats: %v", names)
	}
	variants := [][]string{{}, {"-by", "agent"}}
	want := map[string]string{}
	for _, name := range names {
		for _, v := range variants {
			want[name+fmt.Sprint(v)] = commandJSON(t, append([]string{name, "-format", "json", "-db", path}, v...))
		}
	}
	_, url := liveService(t, path)
	for _, name := range names {
		for _, v := range variants {
			t.Run(name+fmt.Sprint(v), func(t *testing.T) {
				got := commandJSON(t, append([]string{name, "-format", "json", "-nats", url}, v...))
				if w := want[name+fmt.Sprint(v)]; got != w {
					t.Fatalf("analyze %s -nats differs from -db\n-nats:\n%s\n-db:\n%s", name, got, w)
				}
			})
		}
	}
}

// commandJSON runs analyze with args and returns its JSON output without
// the time it was generated.
func commandJSON(tb testing.TB, args []string) string {
	tb.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		tb.Fatalf("analyze %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		tb.Fatalf("analyze %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	delete(v, "generated_at")
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}

func TestSplitNATS(t *testing.T) {
	tests := []struct{ in, urls, subject string }{
		{"nats://h:4222", "nats://h:4222", ""},
		{"nats://a:4222,nats://b:4222#evosignal.query.lab", "nats://a:4222,nats://b:4222", "evosignal.query.lab"},
	}
	for _, tc := range tests {
		if u, s := splitNATS(tc.in); u != tc.urls || s != tc.subject {
			t.Errorf("splitNATS(%q) = %q, %q; want %q, %q", tc.in, u, s, tc.urls, tc.subject)
		}
	}
}
