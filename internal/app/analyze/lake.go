package analyze

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/lake"
	"github.com/evosignal/evosignal/internal/store"
)

// lakeFlagUsage is the help of -lake, the same on every command.
const lakeFlagUsage = "read the current snapshot of the Iceberg lake in `dir` (ingest -lake) instead of -db"

// openLake opens a DuckDB in memory with the current snapshot of the lake
// in dir attached (lake.Attach): the database tables as views over the
// lake's data files, and the analysis views over them. o's memory limit
// and temporary directory apply to it.
func openLake(ctx context.Context, dir string, o store.ReadOptions) (*sql.DB, error) {
	lake.Writer = cli.Version("evosignal")
	if _, err := os.Stat(filepath.Join(dir, lake.CatalogFile)); err != nil {
		// Reading opens no new lake: a mistyped dir is an error, not an
		// empty lake left behind.
		return nil, fmt.Errorf("lake %s: no lake there (%w); ingest -file F -lake DIR makes one", dir, err)
	}
	l, err := lake.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	if err := o.Apply(ctx, func(ctx context.Context, stmt, value string) error {
		_, err := db.ExecContext(ctx, stmt, value)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("lake %s: %w", dir, err)
	}
	if err := l.Attach(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// allowLake lets a database locked down (sqlservice.Lockdown: no file
// outside the database) read the lake's data files, which its views read:
// the lake's warehouse is its one allowed directory.
func allowLake(ctx context.Context, db *sql.DB, dir string) error {
	abs, err := filepath.Abs(filepath.Join(dir, "warehouse"))
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "SET allowed_directories = ['"+strings.ReplaceAll(abs, "'", "''")+"/']")
	return err
}
