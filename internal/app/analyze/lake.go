package analyze

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/lake"
	"github.com/evosignal/evosignal/internal/store"
)

// lakeFlagUsage is the help of -lake, the same on every command.
const lakeFlagUsage = "read the current snapshot of the Iceberg lake `uri` (ingest -lake: a directory, or postgres://… of a PostgreSQL catalog) instead of -db"

// lakeCacheUsage is the help of -lake-cache.
const lakeCacheUsage = "with -lake on an S3 warehouse: keep the copies of its data files DuckDB reads in `dir` (default: the user's cache directory's evosignal/lake)"

// lakeFlags are the flags that name a lake to read.
type lakeFlags struct {
	uri, cache string
}

func (f *lakeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.uri, "lake", "", lakeFlagUsage)
	fs.StringVar(&f.cache, "lake-cache", "", lakeCacheUsage)
}

// openLake opens a DuckDB in memory with the current snapshot of the lake
// attached (lake.Attach): the database tables as views over the lake's
// data files, and the analysis views over them. o's memory limit and
// temporary directory apply to it. It returns the directory the views
// read too (lake.Readable).
func openLake(ctx context.Context, f lakeFlags, o store.ReadOptions) (*sql.DB, string, error) {
	lake.Writer = cli.Version("evosignal")
	l, err := lake.Open(ctx, f.uri, lake.Options{Cache: f.cache})
	if err != nil {
		return nil, "", err
	}
	defer l.Close()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, "", err
	}
	if err := o.Apply(ctx, func(ctx context.Context, stmt, value string) error {
		_, err := db.ExecContext(ctx, stmt, value)
		return err
	}); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("lake %s: %w", l.Name(), err)
	}
	if err := l.Attach(ctx, db); err != nil {
		db.Close()
		return nil, "", err
	}
	return db, l.Readable(), nil
}

// allowLake lets a database locked down (sqlservice.Lockdown: no file
// outside the database) read the lake's data files, which its views read:
// dir, the lake's readable directory (openLake), is its one allowed
// directory.
func allowLake(ctx context.Context, db *sql.DB, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "SET allowed_directories = ['"+strings.ReplaceAll(abs, "'", "''")+"/']")
	return err
}
