package analyze

import (
	"context"
	"database/sql"
	"fmt"
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
	l, err := lake.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	var set []string
	if o.MemoryLimit != "" {
		set = append(set, "SET memory_limit = '"+strings.ReplaceAll(o.MemoryLimit, "'", "''")+"'")
	}
	if o.TempDir != "" {
		set = append(set, "SET temp_directory = '"+strings.ReplaceAll(o.TempDir, "'", "''")+"'")
	}
	for _, s := range set {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("lake %s: %w", dir, err)
		}
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
