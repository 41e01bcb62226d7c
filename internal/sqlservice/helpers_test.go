package sqlservice

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/nats-io/nats.go"

	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// sampleStore opens a new database, loads the sample sessions and sessions
// synthetic sessions into it through the ingester, and returns it open (as
// the ingester holds it); it is closed when the test ends.
func sampleStore(tb testing.TB, sessions int) *store.Store {
	tb.Helper()
	d := testdb.New(tb, testdb.Options{})
	d.Load(tb, testdb.Concat("samples", append(testdb.Files(tb, testdb.SampleSessions(tb)...),
		testdb.Synth(tb, "synth", 11, time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC), sessions))...))
	return d.Store()
}

// startService starts a service on nc over db with the defaults changed by
// mod; it is closed when the test ends.
func startService(tb testing.TB, nc *nats.Conn, db *sql.DB, mod func(*Config)) *Service {
	tb.Helper()
	cfg := DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	s, err := Start(context.Background(), nc, db, cfg, nil)
	if err != nil {
		tb.Fatalf("start query service: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// queryJSON runs req through the service c asks with format "json" and
// returns the answer's body.
func queryJSON(ctx context.Context, c *Client, req Request) ([]byte, error) {
	req.Format = FormatJSON
	r, err := c.open(ctx, req)
	if err != nil {
		return nil, err
	}
	defer r.close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, r.failure(err)
	}
	return b, nil
}

// direct runs q through database/sql, scanning into any as metrics.DB
// does: the reference every answer is compared with.
func direct(tb testing.TB, db *sql.DB, q string, args ...any) *Result {
	tb.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		tb.Fatalf("direct %q: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	res := &Result{Columns: cols}
	cts, err := rows.ColumnTypes()
	if err != nil {
		tb.Fatal(err)
	}
	for _, ct := range cts {
		t, err := ParseType(ct.DatabaseTypeName())
		if err != nil {
			tb.Fatalf("direct %q: %v", q, err)
		}
		res.Types = append(res.Types, t)
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatalf("direct %q: scan: %v", q, err)
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("direct %q: %v", q, err)
	}
	return res
}

// sameResult reports how got differs from want (columns, types, rows and
// Go value types), or "".
func sameResult(got, want *Result) string {
	if !reflect.DeepEqual(got.Columns, want.Columns) {
		return "columns " + sprint(got.Columns) + ", want " + sprint(want.Columns)
	}
	for i := range want.Types {
		if got.Types[i].String() != want.Types[i].String() {
			return "type of " + want.Columns[i] + " " + got.Types[i].String() + ", want " + want.Types[i].String()
		}
	}
	if len(got.Rows) != len(want.Rows) {
		return "rows " + sprint(len(got.Rows)) + ", want " + sprint(len(want.Rows))
	}
	for r := range want.Rows {
		for c := range want.Rows[r] {
			if !sameValue(got.Rows[r][c], want.Rows[r][c]) {
				return "row " + sprint(r) + " column " + want.Columns[c] + ": " + sprintT(got.Rows[r][c]) + ", want " + sprintT(want.Rows[r][c])
			}
		}
	}
	return ""
}

// sameValue is reflect.DeepEqual, except that big integers compare by value
// and NaN equals NaN.
func sameValue(a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	switch x := a.(type) {
	case *big.Int:
		return x.Cmp(b.(*big.Int)) == 0
	case duckdb.Decimal:
		y := b.(duckdb.Decimal)
		return x.Width == y.Width && x.Scale == y.Scale && x.Value.Cmp(y.Value) == 0
	case float64:
		y := b.(float64)
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	case float32:
		y := b.(float32)
		return x == y || x != x && y != y
	case []any:
		y := b.([]any)
		if len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y := b.(map[string]any)
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case duckdb.OrderedMap:
		y := b.(duckdb.OrderedMap)
		return sameValue(x.Keys(), y.Keys()) && sameValue(x.Values(), y.Values())
	}
	return reflect.DeepEqual(a, b)
}

func sprint(v any) string { return fmt.Sprint(v) }

func sprintT(v any) string { return fmt.Sprintf("%T(%v)", v, v) }
