package sqlservice

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"
)

// Result is a query result held in memory. Its values are the Go values
// database/sql gives when scanning DuckDB into `any`: int32, int64, float64,
// string, bool, time.Time, []byte, *big.Int (HUGEINT), duckdb.Decimal,
// duckdb.Interval, []any (LIST, ARRAY), map[string]any (STRUCT),
// duckdb.OrderedMap (MAP), decoded JSON for JSON columns, nil for NULL —
// whether it came from Local or through the service (docs/query-service.md
// lists the few exceptions).
type Result struct {
	Columns   []string
	Types     []*Type
	Rows      [][]any
	Truncated bool // more rows matched than the row limit let through
}

// Querier answers requests: the Client (through the service) and Local
// (a database opened in this process).
type Querier interface {
	Query(ctx context.Context, req Request) (*Result, error)
}

var (
	_ Querier = (*Client)(nil)
	_ Querier = Local{}
)

// Local answers requests from a database opened in this process, with the
// service's checks and limits (Lockdown is the caller's: it acts on the
// whole database). The format of the request is ignored.
type Local struct {
	DB      *sql.DB
	MaxRows int64         // 0: no limit
	Timeout time.Duration // 0: none
}

// Query runs req.
func (l Local) Query(ctx context.Context, req Request) (*Result, error) {
	q, err := req.decode()
	if err != nil {
		return nil, err
	}
	q.MaxRows = limit(req.MaxRows, l.MaxRows)
	if t := limitDuration(time.Duration(req.TimeoutMS)*time.Millisecond, l.Timeout); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	var c collector
	out, err := run(ctx, l.DB, q, &c)
	if err != nil {
		return nil, err
	}
	c.res.Truncated = out.truncated
	return &c.res, nil
}

// limit is the smaller positive of asked and max (0 is no limit).
func limit(asked, max int64) int64 {
	if max > 0 && (asked <= 0 || asked > max) {
		return max
	}
	return asked
}

func limitDuration(asked, max time.Duration) time.Duration {
	return time.Duration(limit(int64(asked), int64(max)))
}

// collector is the sink that keeps the rows.
type collector struct{ res Result }

func (c *collector) columns(names []string, types []*Type) error {
	c.res.Columns, c.res.Types = names, types
	return nil
}

func (c *collector) row(vals []driver.Value) error {
	row := make([]any, len(vals))
	for i, v := range vals {
		row[i] = v
	}
	c.res.Rows = append(c.res.Rows, row)
	return nil
}
