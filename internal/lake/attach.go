package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

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
	seals, err := l.cat.LoadTable(ctx, ident(sealsTable))
	if err != nil {
		return fmt.Errorf("lake %s: %s: %w (seal a shard into the lake first)", l.name, sealsTable, err)
	}
	complete := map[string]int64{} // shard → its last complete seal
	for shard, m := range watermarks(seals) {
		n, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			return fmt.Errorf("lake %s: %s: shard %s's watermark %q: %w", l.name, sealsTable, shard, m, err)
		}
		complete[shard] = n
	}
	for _, t := range tables {
		tbl, err := l.cat.LoadTable(ctx, ident(t.name))
		if err != nil {
			return fmt.Errorf("lake %s: %s: %w (seal a shard into the lake first)", l.name, t.name, err)
		}
		dfs, err := completeFiles(ctx, tbl, t.mode, complete)
		if err != nil {
			return fmt.Errorf("lake %s: %s: %w", l.name, t.name, err)
		}
		paths, err := l.localFiles(ctx, dfs)
		if err != nil {
			return fmt.Errorf("lake %s: %s: %w", l.name, t.name, err)
		}
		var files []string
		for _, p := range paths {
			files = append(files, literal(p))
		}
		name := t.name
		if t.mode == marker {
			name = "lake_seals"
		}
		if len(files) == 0 {
			if err := emptyView(ctx, db, name, tbl.Properties()[columnsProp]); err != nil {
				return fmt.Errorf("lake %s: %s: %w", l.name, t.name, err)
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
		q := "CREATE OR REPLACE VIEW " + quote(name) + " AS SELECT " + sel + " FROM read_parquet([" + strings.Join(files, ", ") + "])"
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("lake %s: view %s: %w", l.name, t.name, err)
		}
	}
	// The day rollups are not sealed (a shard's are of its facts alone):
	// in a lake they are empty, and the analyses compute every day from
	// the facts (queries/include/rollup_split.sql).
	for _, q := range noRollups {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("lake %s: %w", l.name, err)
		}
	}
	vs, err := queries.Views()
	if err != nil {
		return err
	}
	for _, v := range vs {
		if _, err := db.ExecContext(ctx, v.SQL); err != nil {
			return fmt.Errorf("lake %s: view %s: %w", l.name, v.File, err)
		}
	}
	return nil
}

// completeFiles returns the data files of the table's current snapshot
// that complete seals wrote: of each shard, the files of seals up to its
// last complete one (complete). A seal stopped half-way has committed some
// tables and not the seals table: its files are left out, and of a
// replaced table, whose current snapshot no longer holds the shard's file
// before it, that file is taken from the snapshot that did. The seal that
// completes next takes the same number, and the files it leaves in place
// are seen then.
func completeFiles(ctx context.Context, tbl *table.Table, mode mode, complete map[string]int64) ([]iceberg.DataFile, error) {
	var out []iceberg.DataFile
	missing := map[string]bool{} // shards of a replaced table whose file is of a seal not complete
	snap := tbl.CurrentSnapshot()
	for first := true; snap != nil; first = false {
		tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		// A file larger than the table's read.split.target-size (128 MiB
		// by default) is planned as several tasks, one per range of its
		// row groups: the views read each file once, whole.
		seen := map[string]bool{}
		for _, task := range tasks {
			if len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) > 0 {
				return nil, errors.New("it has delete files, which this evosignal does not write nor read")
			}
			p := task.File.FilePath()
			if seen[p] {
				continue
			}
			seen[p] = true
			shard, no, ok := fileSeal(p)
			if !ok {
				if first {
					out = append(out, task.File) // not an evosignal seal's: read as it is
				}
				continue
			}
			switch {
			case first && no <= complete[shard]:
				out = append(out, task.File)
			case first && mode == replaced:
				missing[shard] = true
			case !first && missing[shard] && no <= complete[shard]:
				out = append(out, task.File)
				delete(missing, shard)
			}
		}
		if len(missing) == 0 || snap.ParentSnapshotID == nil {
			break
		}
		snap = tbl.SnapshotByID(*snap.ParentSnapshotID)
	}
	return out, nil
}

// localFiles returns the files on this machine DuckDB reads the data
// files from: in a local warehouse, the files themselves; of a remote one,
// their copies in the cache, fetched where missing (a few at a time).
func (l *Lake) localFiles(ctx context.Context, dfs []iceberg.DataFile) ([]string, error) {
	out := make([]string, len(dfs))
	if l.fs == nil {
		for i, df := range dfs {
			p, ok := strings.CutPrefix(df.FilePath(), "file://")
			if !ok {
				return nil, fmt.Errorf("data file %s: not in the lake's file warehouse", df.FilePath())
			}
			out[i] = p
		}
		return out, nil
	}
	errs := make([]error, len(dfs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, df := range dfs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = l.fetch(ctx, df.FilePath(), df.FileSizeBytes())
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// fetch returns the cache's copy of the remote data file loc of size
// bytes, copying it first when the cache has none of that size.
func (l *Lake) fetch(ctx context.Context, loc string, size int64) (string, error) {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" || strings.Contains(u.Path, "..") {
		return "", fmt.Errorf("data file %s: not a warehouse location", loc)
	}
	to := filepath.Join(l.cache, u.Scheme, u.Host, filepath.FromSlash(u.Path))
	if fi, err := os.Stat(to); err == nil && fi.Size() == size {
		return to, nil
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	src, err := l.fs.Open(loc)
	if err != nil {
		return "", fmt.Errorf("data file %s: %w", loc, err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(to), ".fetch-*")
	if err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	n, err := io.Copy(tmp, src)
	if err == nil && n != size {
		err = fmt.Errorf("got %d bytes, the lake says %d", n, size)
	}
	if err = errors.Join(err, tmp.Close(), ctx.Err()); err == nil {
		err = os.Rename(tmp.Name(), to)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("data file %s: %w", loc, err)
	}
	return to, nil
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

// noRollups are empty views of the day rollups' tables
// (queries/migrations/0012_rollups.sql), of their columns and types.
var noRollups = []string{
	`CREATE OR REPLACE VIEW rollups AS SELECT CAST(NULL AS VARCHAR) AS classifier WHERE false`,
	`CREATE OR REPLACE VIEW hint_days AS SELECT CAST(NULL AS DATE) AS day, CAST(NULL AS DATE) AS week,
		CAST(NULL AS VARCHAR) AS agent, CAST(NULL AS VARCHAR) AS agent_version, CAST(NULL AS VARCHAR) AS model,
		CAST(NULL AS VARCHAR) AS ruleset, CAST(NULL AS VARCHAR) AS task_type, CAST(NULL AS VARCHAR) AS hint,
		0::BIGINT AS calls, 0::BIGINT AS failed, 0::BIGINT AS followed, 0::BIGINT AS followed_failed,
		0::BIGINT AS deviated, 0::BIGINT AS deviated_failed, 0::BIGINT AS planned, 0::BIGINT AS dropped,
		0::BIGINT AS stripped WHERE false`,
	`CREATE OR REPLACE VIEW replace_days AS SELECT CAST(NULL AS DATE) AS day, CAST(NULL AS VARCHAR) AS agent,
		CAST(NULL AS VARCHAR) AS model, CAST(NULL AS VARCHAR) AS task_type, CAST(NULL AS VARCHAR) AS from_hint,
		CAST(NULL AS VARCHAR) AS to_hint, 0::BIGINT AS replans, 0::BIGINT AS added, 0::BIGINT AS completed,
		0::BIGINT AS succeeded WHERE false`,
}
