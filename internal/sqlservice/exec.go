package sqlservice

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// sink receives the result of one query: its columns once, then its rows.
// The values of a row are the DuckDB driver's; vals is reused after row
// returns.
type sink interface {
	columns(names []string, types []*Type) error
	row(vals []driver.Value) error
}

// outcome is what a run produced besides the rows it gave the sink.
type outcome struct {
	rows      int64
	truncated bool
}

// Transaction control around every query (guard layer 2).
const (
	beginSQL    = "BEGIN TRANSACTION"
	rollbackSQL = "ROLLBACK"
)

// run answers q from a connection of db: it checks the statement (guard.go),
// runs it in a transaction it always rolls back, and gives the sink at most
// q.MaxRows rows (all when 0). ctx bounds everything; cancelling it
// interrupts DuckDB. Errors are *Error.
func run(ctx context.Context, db *sql.DB, q Query, s sink) (outcome, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return outcome{}, ctxError(ctx, newError(503, fmt.Sprintf("no database connection: %v", err)))
	}
	defer conn.Close()
	var (
		out    outcome
		runErr error
	)
	rawErr := conn.Raw(func(dc any) error {
		c, ok := dc.(*duckdb.Conn)
		if !ok {
			runErr = newError(500, fmt.Sprintf("database driver connection is %T, want DuckDB", dc))
			return nil
		}
		if _, err := c.ExecContext(ctx, beginSQL, nil); err != nil {
			runErr = ctxError(ctx, sqlError(err))
			return nil
		}
		out, runErr = runIn(ctx, c, q, s)
		if _, err := c.ExecContext(context.Background(), rollbackSQL, nil); err != nil {
			// The connection's state is unknown: drop it from the pool.
			return driver.ErrBadConn
		}
		return nil
	})
	if runErr == nil && rawErr != nil {
		runErr = newError(500, fmt.Sprintf("roll back: %v", rawErr))
	}
	return out, runErr
}

// ctxError prefers the context's end to the error it caused.
func ctxError(ctx context.Context, err *Error) *Error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return newError(408, "the query ran past its time limit and was cancelled")
	case ctx.Err() != nil:
		return newError(503, "the query was cancelled: "+context.Cause(ctx).Error())
	}
	return err
}

func runIn(ctx context.Context, c *duckdb.Conn, q Query, s sink) (outcome, error) {
	// The parse tree first: a failed prepare would abort the transaction,
	// and preparing folds constants, computing what the tree check refuses
	// (repeat('x', 1000000000) in full). A statement that is not a SELECT
	// is prepared only to name its type.
	treeErr := checkFunctions(ctx, c, q.SQL)
	if treeErr != nil && !strings.HasPrefix(asError(treeErr).Message, "refused: "+notSelect) {
		return outcome{}, ctxError(ctx, asError(treeErr))
	}
	orig, err := prepare(c, q.SQL)
	switch {
	case err != nil && asError(err).Code == 403:
		return outcome{}, err // names the statement type
	case treeErr != nil:
		if orig != nil {
			orig.Close()
		}
		return outcome{}, treeErr
	case err != nil:
		return outcome{}, ctxError(ctx, asError(err))
	}
	defer orig.Close()
	args, err := bindArgs(orig, q)
	if err != nil {
		return outcome{}, err
	}
	stmt := orig
	if q.MaxRows > 0 {
		// Wrapped, DuckDB computes at most MaxRows+1 rows; the wrapped text
		// passes the statement checks again.
		if w, err := prepare(c, limited(q.SQL, q.MaxRows+1)); err == nil {
			defer w.Close()
			stmt = w
		}
	}
	rows, err := stmt.QueryContext(ctx, args)
	if err != nil {
		return outcome{}, ctxError(ctx, sqlError(err))
	}
	defer rows.Close()
	names := rows.Columns()
	if stmt != orig {
		queryNames(orig, names)
	}
	types := make([]*Type, len(names))
	tn, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
	for i := range names {
		name := "VARCHAR"
		if tn != nil {
			name = tn.ColumnTypeDatabaseTypeName(i)
		}
		t, err := ParseType(name)
		if err != nil {
			t = &Type{Name: name} // unknown: travels as text
		}
		types[i] = t
	}
	if err := s.columns(names, types); err != nil {
		return outcome{}, ctxError(ctx, asError(err))
	}
	var out outcome
	vals := make([]driver.Value, len(names))
	for {
		if out.rows%256 == 0 && ctx.Err() != nil {
			return out, ctxError(ctx, nil)
		}
		err := rows.Next(vals)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, ctxError(ctx, sqlError(err))
		}
		if q.MaxRows > 0 && out.rows == q.MaxRows {
			out.truncated = true
			return out, nil
		}
		if err := s.row(vals); err != nil {
			return out, ctxError(ctx, asError(err))
		}
		out.rows++
	}
}

// bindArgs checks that every parameter of the statement has a value and
// returns the values in the driver's form. Unused values are ignored.
func bindArgs(st *duckdb.Stmt, q Query) ([]driver.NamedValue, error) {
	for i := 1; i <= st.NumInput(); i++ {
		name, err := st.ParamName(i)
		if err != nil {
			return nil, sqlError(err)
		}
		if n, err := strconv.Atoi(name); err == nil {
			if n > len(q.Args) {
				return nil, newError(400, fmt.Sprintf("missing parameter $%d: the request has %d positional values", n, len(q.Args)))
			}
			continue
		}
		if _, ok := q.Named[name]; !ok {
			return nil, newError(400, fmt.Sprintf("missing parameter $%s: the request has no named value %q", name, name))
		}
	}
	args := make([]driver.NamedValue, 0, len(q.Args)+len(q.Named))
	for i, a := range q.Args {
		args = append(args, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	for name, v := range q.Named {
		args = append(args, driver.NamedValue{Name: name, Value: v})
	}
	// The driver fills parameters it cannot match by position from the
	// values in order; the checks above make sure it never has to.
	for len(args) < st.NumInput() {
		args = append(args, driver.NamedValue{Ordinal: len(args) + 1})
	}
	return args, nil
}

// queryNames puts the query's own column names in names: the limit's wrapper
// renames repeated ones (a, a_1). The prepared query knows its columns only
// when their types do not depend on the parameters.
func queryNames(orig *duckdb.Stmt, names []string) {
	n, err := orig.ColumnCount()
	if err != nil || n != len(names) {
		return
	}
	own := make([]string, n)
	for i := range own {
		t, err := orig.ColumnType(i)
		if err != nil || t == duckdb.TYPE_INVALID {
			return
		}
		if own[i], err = orig.ColumnName(i); err != nil {
			return
		}
	}
	copy(names, own)
}
