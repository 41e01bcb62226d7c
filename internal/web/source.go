package web

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/report"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/queries"
)

// source is the analyzers' metrics.Source over the pages' querier: the
// same guarded read path as every other query of the pages.
type source struct{ q sqlservice.Querier }

var _ metrics.Source = source{}

// Query runs q; a result cut off at the querier's row limit is an error,
// as for sqlservice.Source: an analysis of part of the rows would be wrong.
func (s source) Query(ctx context.Context, q string, args ...any) (*metrics.Table, error) {
	res, err := s.run(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	if res.Truncated {
		return nil, fmt.Errorf("the result was cut off at %d rows (the querier's row limit); an analysis needs them all", len(res.Rows))
	}
	return &metrics.Table{Columns: res.Columns, Rows: res.Rows}, nil
}

func (s source) run(ctx context.Context, q string, args ...any) (*sqlservice.Result, error) {
	req, err := sqlservice.NewRequest(q, args...)
	if err != nil {
		return nil, err
	}
	return s.q.Query(ctx, req)
}

// params are the named parameters of a query.
type params map[string]any

// lookup runs the embedded file web/NAME.sql with the named parameters p
// and returns its rows.
func (s *Server) lookup(ctx context.Context, name string, p params) (*table, error) {
	file := "web/" + name + ".sql"
	q, err := queries.Expand(file)
	if err != nil {
		return nil, err
	}
	named := make([]any, 0, len(p))
	for k, v := range p {
		named = append(named, sql.Named(k, v))
	}
	res, err := source{s.cfg.Querier}.run(ctx, q, named...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return newTable(res), nil
}

func (s *Server) src() metrics.Source { return source{s.cfg.Querier} }

// dataVersion is the token of version.sql: committed batches and the last
// commit's time. Pages that are not live read data nothing writes (a
// database file opened read-only, a lake as it stood when attached, which
// has no ingest_batches): one version.
func (s *Server) dataVersion(ctx context.Context) (string, error) {
	if !s.cfg.Live {
		return "static", nil
	}
	t, err := s.lookup(ctx, "version", nil)
	if err != nil {
		return "", err
	}
	if len(t.rows) == 0 {
		return "0", nil
	}
	r := t.row(0)
	return fmt.Sprintf("%d-%d", r.int("batches"), r.time("last_commit").UnixNano()), nil
}

// reportCSS serves the report page's stylesheet, which the overview's
// figures and curve use.
func (s *Server) reportCSS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Write([]byte(report.CSS()))
}

// table is a query result with its columns by name.
type table struct {
	cols map[string]int
	rows [][]any
}

func newTable(res *sqlservice.Result) *table {
	t := &table{cols: map[string]int{}, rows: res.Rows}
	for i, c := range res.Columns {
		t.cols[c] = i
	}
	return t
}

func (t *table) row(i int) row { return row{t, t.rows[i]} }

func (t *table) each(f func(row)) {
	for i := range t.rows {
		f(t.row(i))
	}
}

// row reads one row's columns by name; a missing column is a programming
// error (the .sql files are the binary's own).
type row struct {
	t    *table
	vals []any
}

func (r row) get(col string) any {
	i, ok := r.t.cols[col]
	if !ok {
		panic("web: no column " + col)
	}
	return r.vals[i]
}

func (r row) null(col string) bool { return r.get(col) == nil }

func (r row) str(col string) string {
	switch v := r.get(col).(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// strp is the column as a *string: nil for NULL.
func (r row) strp(col string) *string {
	if r.null(col) {
		return nil
	}
	s := r.str(col)
	return &s
}

func (r row) int(col string) int64 {
	switch v := r.get(col).(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	case int16:
		return int64(v)
	case int8:
		return int64(v)
	case uint64:
		return int64(v)
	case uint32:
		return int64(v)
	case float64:
		return int64(v)
	case *big.Int:
		return v.Int64()
	}
	return 0
}

func (r row) float(col string) float64 {
	switch v := r.get(col).(type) {
	case float64:
		return v
	case float32:
		return float64(v)
	}
	return float64(r.int(col))
}

func (r row) bool(col string) bool {
	b, _ := r.get(col).(bool)
	return b
}

func (r row) time(col string) time.Time {
	t, _ := r.get(col).(time.Time)
	return t
}

func (r row) strs(col string) []string {
	l, _ := r.get(col).([]any)
	out := make([]string, 0, len(l))
	for _, v := range l {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

func (r row) ints(col string) []int64 {
	l, _ := r.get(col).([]any)
	out := make([]int64, 0, len(l))
	for _, v := range l {
		switch n := v.(type) {
		case int64:
			out = append(out, n)
		case int32:
			out = append(out, int64(n))
		}
	}
	return out
}

// sqlText is the embedded file web/NAME.sql with its includes expanded, to
// show beside what it found.
func sqlText(name string) string {
	q, err := queries.Expand("web/" + name + ".sql")
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(q)
}
