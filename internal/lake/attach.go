package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/evosignal/evosignal/queries"
)

// Attach creates in db (a DuckDB, usually in memory) a view over the
// lake's current snapshot of each table Seal writes, named like the
// database's table and of its column types, and then the views of
// queries/views over them: the analyzers' SQL reads db as it reads one
// database holding every shard's events. The views read the data files
// the snapshots held when Attach ran; attach again to see later seals.
// facts_classifier, one row in a database, is one row per distinct
// classifier over the shards.
func (l *Lake) Attach(ctx context.Context, db *sql.DB) error {
	for _, t := range tables {
		tbl, err := l.cat.LoadTable(ctx, ident(t.name))
		if err != nil {
			return fmt.Errorf("lake %s: %s: %w (seal a shard into the lake first)", l.dir, t.name, err)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			return fmt.Errorf("lake %s: plan %s: %w", l.dir, t.name, err)
		}
		var files []string
		for _, task := range tasks {
			if len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) > 0 {
				return fmt.Errorf("lake %s: %s has delete files, which this evosignal does not write nor read", l.dir, t.name)
			}
			p, err := localPath(task.File.FilePath())
			if err != nil {
				return fmt.Errorf("lake %s: %s: %w", l.dir, t.name, err)
			}
			files = append(files, "'"+strings.ReplaceAll(p, "'", "''")+"'")
		}
		if len(files) == 0 {
			if err := emptyView(ctx, db, t.name, tbl.Properties()[columnsProp]); err != nil {
				return fmt.Errorf("lake %s: %s: %w", l.dir, t.name, err)
			}
			continue
		}
		slices.Sort(files)
		var casts []string
		for k, typ := range tbl.Properties() {
			if col, ok := strings.CutPrefix(k, typeProp); ok {
				casts = append(casts, fmt.Sprintf("CAST(%s AS %s) AS %s", quote(col), typ, quote(col)))
			}
		}
		slices.Sort(casts)
		sel := "*"
		if len(casts) > 0 {
			sel = "* REPLACE (" + strings.Join(casts, ", ") + ")"
		}
		if t.name == "facts_classifier" {
			sel = "DISTINCT " + sel
		}
		q := "CREATE OR REPLACE VIEW " + quote(t.name) + " AS SELECT " + sel + " FROM read_parquet([" + strings.Join(files, ", ") + "])"
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("lake %s: view %s: %w", l.dir, t.name, err)
		}
	}
	vs, err := queries.Views()
	if err != nil {
		return err
	}
	for _, v := range vs {
		if _, err := db.ExecContext(ctx, v.SQL); err != nil {
			return fmt.Errorf("lake %s: view %s: %w", l.dir, v.File, err)
		}
	}
	return nil
}

// localPath is the file a data file's location names in the file
// warehouse.
func localPath(loc string) (string, error) {
	if !strings.HasPrefix(loc, "file://") {
		return "", fmt.Errorf("data file %s: not in a file warehouse", loc)
	}
	return strings.TrimPrefix(loc, "file://"), nil
}

// emptyView creates the view of a table without rows: its columns (JSON,
// columnsProp) of their DuckDB types.
func emptyView(ctx context.Context, db *sql.DB, name, columns string) error {
	var cols [][2]string
	if err := json.Unmarshal([]byte(columns), &cols); err != nil || len(cols) == 0 {
		return fmt.Errorf("the table's property %s: %q", columnsProp, columns)
	}
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = fmt.Sprintf("CAST(NULL AS %s) AS %s", c[1], quote(c[0]))
	}
	_, err := db.ExecContext(ctx, "CREATE OR REPLACE VIEW "+quote(name)+" AS SELECT "+strings.Join(sel, ", ")+" LIMIT 0")
	return err
}
