// Package metrics holds evosignal's analyzers: they run the SQL in queries/
// (every number a user sees comes from one .sql file) against a Source, add
// honest statistics (Wilson intervals, Fisher's exact and chi-square tests)
// and derive learned hint rules. It knows no NATS: a Source is a DuckDB
// database opened directly, or anything else that answers SQL.
package metrics

import (
	"context"
	"database/sql"
	"fmt"
)

// Source answers read-only SQL with named parameters ($name in the query,
// sql.Named in args).
type Source interface {
	Query(ctx context.Context, query string, args ...any) (*Table, error)
}

// Table is a query result held in memory.
type Table struct {
	Columns []string
	Rows    [][]any
}

// Col returns the index of the column name, or -1.
func (t *Table) Col(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// DB is a Source over a database/sql handle (a DuckDB file).
type DB struct{ DB *sql.DB }

var _ Source = DB{}

// Query runs q and reads all its rows.
func (d DB) Query(ctx context.Context, q string, args ...any) (*Table, error) {
	rows, err := d.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	t := &Table{Columns: cols}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("scan row %d: %w", len(t.Rows)+1, err)
		}
		t.Rows = append(t.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return t, nil
}
