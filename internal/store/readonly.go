package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/queries"
)

// LockedError is returned by OpenReadOnly when a writer (a running
// ingester) holds the database file: DuckDB lets no other process open a
// file that one process has open for writing. It matches ErrLocked with
// errors.Is.
type LockedError struct {
	Path string
	Err  error // DuckDB's error
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("open %s: it is in use by a running ingester (DuckDB allows one writer and no other process); "+
		"read through the ingester's query service with -nats URL instead, or stop it: %v", e.Path, e.Err)
}

func (e *LockedError) Unwrap() error { return e.Err }

// Is reports whether target is ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// OpenReadOnly opens the database file at path for reading only: the one
// way every reader (analyze, export, the demo's report) opens a database.
// A file that does not exist is an error, not a new database; a file a
// writer holds is a *LockedError.
//
// Every connection gets this binary's views (queries/views) as temporary
// views, which come before the stored ones in DuckDB's search path: a file
// last written by an earlier ingester is read with the current definitions,
// as a writable open would have re-created them.
func OpenReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	return OpenReadOnlyWith(ctx, path, ReadOptions{})
}

// ReadOptions tune a read-only open for large databases (analyze export
// and report on hundreds of millions of events).
type ReadOptions struct {
	// MemoryLimit is DuckDB's memory_limit ("4GiB"); empty keeps DuckDB's
	// default, 80 % of the machine's memory.
	MemoryLimit string
	// TempDir is where DuckDB spills what does not fit under MemoryLimit
	// (temp_directory); empty keeps DuckDB's default, <db file>.tmp.
	TempDir string
}

// Apply sets o's memory limit and temporary directory on a DuckDB
// connection through exec (a statement with one parameter, $1).
func (o ReadOptions) Apply(ctx context.Context, exec func(ctx context.Context, stmt, value string) error) error {
	for _, set := range []struct{ stmt, value, what string }{
		{"SET GLOBAL memory_limit = $1", o.MemoryLimit, "memory limit"},
		{"SET GLOBAL temp_directory = $1", o.TempDir, "temp directory"},
	} {
		if set.value == "" {
			continue
		}
		if err := exec(ctx, set.stmt, set.value); err != nil {
			return fmt.Errorf("%s %q: %w", set.what, set.value, err)
		}
	}
	return nil
}

// OpenReadOnlyWith is OpenReadOnly with opts.
func OpenReadOnlyWith(ctx context.Context, path string, opts ReadOptions) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	views, err := tempViews()
	if err != nil {
		return nil, err
	}
	conn, err := duckdb.NewConnector(path+"?access_mode=read_only", func(ex driver.ExecerContext) error {
		if err := opts.Apply(ctx, func(ctx context.Context, stmt, value string) error {
			_, err := ex.ExecContext(ctx, stmt, []driver.NamedValue{{Ordinal: 1, Value: value}})
			return err
		}); err != nil {
			return err
		}
		for _, v := range views {
			if _, err := ex.ExecContext(ctx, v.SQL, nil); err != nil {
				return fmt.Errorf("create the view of %s: %w (the file may come from an older evosignal: "+
					"run this version's ingester on it once to migrate it)", v.File, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, readOnlyErr(path, err)
	}
	db := sql.OpenDB(conn)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, readOnlyErr(path, err)
	}
	return db, nil
}

func readOnlyErr(path string, err error) error {
	if strings.Contains(err.Error(), "Could not set lock") {
		return &LockedError{Path: path, Err: err}
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// tempViews are the views of queries/views, each created as a temporary
// view of the connection.
func tempViews() ([]queries.Named, error) {
	vs, err := queries.Views()
	if err != nil {
		return nil, err
	}
	const create, temp = "CREATE OR REPLACE VIEW ", "CREATE OR REPLACE TEMP VIEW "
	out := make([]queries.Named, len(vs))
	for i, v := range vs {
		if strings.Count(v.SQL, create) != 1 {
			return nil, fmt.Errorf("store: %s must hold one %q", v.File, create)
		}
		v.SQL = strings.Replace(v.SQL, create, temp, 1)
		out[i] = v
	}
	return out, nil
}
