package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
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
func OpenReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	db, err := sql.Open("duckdb", path+"?access_mode=read_only")
	if err == nil {
		err = db.PingContext(ctx)
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		if strings.Contains(err.Error(), "Could not set lock") {
			return nil, &LockedError{Path: path, Err: err}
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}
