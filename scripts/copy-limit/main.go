// Command copy-limit measures the limit a lake seal compares against:
// DuckDB's own COPY of each table a seal writes to a Parquet file, whole,
// from the database opened read-only as ingest -lake opens it. It prints
// a line per table (rows, seconds, MiB written) and the totals, the
// events' rate over all the tables' time. scripts/bench-analyze runs it;
// it writes into -out and removes nothing.
//
//	copy-limit -db evo.duckdb -out /tmp/copy
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/lake"
	"github.com/evosignal/evosignal/internal/store"
)

func main() {
	db := flag.String("db", "evosignal.duckdb", "DuckDB `file` to read")
	out := flag.String("out", "", "`dir` to write the Parquet files into (created)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "copy-limit: -out is required")
		os.Exit(2)
	}
	if err := run(context.Background(), *db, *out); err != nil {
		fmt.Fprintln(os.Stderr, "copy-limit:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	db, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Printf("table\trows\tseconds\tMiB\n")
	var total time.Duration
	var events, size int64
	for _, t := range lake.Tables() {
		f := filepath.Join(out, t+".parquet")
		t0 := time.Now()
		res, err := db.ExecContext(ctx, `COPY (SELECT * FROM `+t+`) TO '`+strings.ReplaceAll(f, "'", "''")+`' (FORMAT parquet)`)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		d := time.Since(t0)
		rows, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		st, err := os.Stat(f)
		if err != nil {
			return err
		}
		total += d
		size += st.Size()
		if t == "events" {
			events = rows
		}
		fmt.Printf("%s\t%d\t%.2f\t%.1f\n", t, rows, d.Seconds(), float64(st.Size())/(1<<20))
	}
	fmt.Printf("all\t%d events\t%.2f\t%.1f\t%.0f events/s\n", events, total.Seconds(), float64(size)/(1<<20), float64(events)/total.Seconds())
	return nil
}
