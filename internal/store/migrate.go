package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/queries"
)

// ErrMigrationChanged is returned by Open when a migration the database
// applied no longer has the text it had: migrations are never edited once
// committed, so either this binary or the database comes from an edited
// history. The error names the migration and both checksums; for a
// database written before checksums were recorded, the migration and how
// its tables differ from those the embedded text builds.
var ErrMigrationChanged = errors.New("applied migration changed")

// migrate brings the database's schema up to date: it checks the recorded
// checksum of every applied migration against the embedded text (recording
// it first for databases written before checksums were), applies the
// migrations not applied yet, in order and each in its own transaction,
// and then (re)creates every view from queries/views in one transaction.
//
// The migrator owns schema_migrations and adds its checksum column itself
// (queries/migrate/add_checksum.sql) rather than in a numbered migration:
// the checks must run before any migration is trusted or applied, and a
// migration cannot record its own checksum in a column it creates.
func migrate(ctx context.Context, db *sql.DB) error {
	for _, f := range []string{"migrate/table.sql", "migrate/add_checksum.sql"} {
		if _, err := db.ExecContext(ctx, queries.MustRead(f)); err != nil {
			return fmt.Errorf("schema_migrations (%s): %w", f, err)
		}
	}
	ms, err := queries.Migrations()
	if err != nil {
		return err
	}
	applied, err := appliedMigrations(ctx, db)
	if err != nil {
		return err
	}
	if err := checkApplied(ctx, db, ms, applied); err != nil {
		return err
	}
	for _, m := range ms {
		if _, ok := applied[m.Version]; ok {
			continue
		}
		if err := apply(ctx, db, m); err != nil {
			return fmt.Errorf("migration %s: %w", m.File, err)
		}
	}
	return createViews(ctx, db)
}

// appliedMigrations reads schema_migrations: the recorded checksum by
// version, "" where none was recorded.
func appliedMigrations(ctx context.Context, db *sql.DB) (map[int]string, error) {
	rows, err := db.QueryContext(ctx, queries.MustRead("migrate/applied.sql"))
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var v int
		var name string
		var sum sql.NullString
		if err := rows.Scan(&v, &name, &sum); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		out[v] = sum.String
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return out, nil
}

// checkApplied compares every applied migration's recorded checksum with
// its embedded text. Migrations recorded without a checksum (databases
// written before checksums were) get the embedded text's, once the tables
// they built are checked to be what that text builds (backfill).
func checkApplied(ctx context.Context, db *sql.DB, ms []queries.Migration, applied map[int]string) error {
	var unrecorded []queries.Migration
	for _, m := range ms {
		sum, ok := applied[m.Version]
		switch {
		case !ok:
		case sum == "":
			unrecorded = append(unrecorded, m)
		case sum != m.Checksum:
			return fmt.Errorf("migration %s: %w: the database applied a text with checksum %s, this binary embeds one with checksum %s; "+
				"a committed migration must not be edited: put the change in a new migration (or, for a view, in queries/views)",
				m.File, ErrMigrationChanged, sum, m.Checksum)
		}
	}
	if len(unrecorded) == 0 {
		return nil
	}
	if err := checkTables(ctx, db, ms, applied); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record migration checksums: %w", err)
	}
	defer tx.Rollback()
	for _, m := range unrecorded {
		if _, err := tx.ExecContext(ctx, queries.MustRead("migrate/set_checksum.sql"), m.Checksum, m.Version); err != nil {
			return fmt.Errorf("record checksum of migration %s: %w", m.File, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record migration checksums: %w", err)
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, m queries.Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, queries.MustRead("migrate/record.sql"),
		m.Version, m.Name, time.Now().UTC(), m.Checksum); err != nil {
		return err
	}
	return tx.Commit()
}

// createViews (re)creates every view of queries/views, in order, in one
// transaction: the definitions of this binary replace whatever an earlier
// one (or an earlier migration) created.
func createViews(ctx context.Context, db *sql.DB) error {
	vs, err := queries.Views()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create views: %w", err)
	}
	defer tx.Rollback()
	for _, v := range vs {
		if _, err := tx.ExecContext(ctx, v.SQL); err != nil {
			return fmt.Errorf("create view %s: %w", v.File, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create views: %w", err)
	}
	return nil
}

// checkTables is the check behind a backfill: applied migrations recorded
// without a checksum may have run an earlier text. Migrations 0001 and 0003
// were edited after they were committed (commits b1cb029: BIGINT counts and
// ingest_position.stream_created; 7ec2d2d: facts_classifier and the
// class_type, classified columns of task_facts_stored; 370e374 and the
// edit of 0002 in 6fbe1f8 changed views only), before any database recorded
// a checksum, so no recorded checksum can name those texts: the database's
// tables are what tell. They are compared with the tables the embedded
// text of the same migrations builds in an empty in-memory database. Views
// are left out: createViews replaces them all.
func checkTables(ctx context.Context, db *sql.DB, ms []queries.Migration, applied map[int]string) error {
	ref, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("check tables: %w", err)
	}
	defer ref.Close()
	builtBy := map[string]string{} // table → the last migration that created or changed it
	want := map[string]map[string]string{}
	for _, m := range ms {
		if _, ok := applied[m.Version]; !ok {
			continue
		}
		if _, err := ref.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("check tables: migration %s on an empty database: %w", m.File, err)
		}
		cols, err := tableColumns(ctx, ref)
		if err != nil {
			return fmt.Errorf("check tables: %w", err)
		}
		for t, c := range cols {
			if !maps.Equal(c, want[t]) {
				builtBy[t] = m.File
			}
		}
		want = cols
	}
	got, err := tableColumns(ctx, db)
	if err != nil {
		return fmt.Errorf("check tables: %w", err)
	}
	var diffs, files []string
	for _, t := range slices.Sorted(maps.Keys(want)) {
		d := columnDiff(t, got[t], want[t])
		if len(d) == 0 {
			continue
		}
		diffs = append(diffs, d...)
		if !slices.Contains(files, builtBy[t]) {
			files = append(files, builtBy[t])
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	slices.Sort(files)
	return fmt.Errorf("migration %s: %w: it was recorded before checksums were, and the tables it built differ from what its embedded text builds (%s): "+
		"the database applied an earlier text, edited after it was committed, and cannot be migrated; create a new database from the same events",
		strings.Join(files, ", "), ErrMigrationChanged, strings.Join(diffs, "; "))
}

// tableColumns reads the database's tables: column name → type, by table.
func tableColumns(ctx context.Context, db *sql.DB) (map[string]map[string]string, error) {
	rows, err := db.QueryContext(ctx, queries.MustRead("migrate/table_columns.sql"))
	if err != nil {
		return nil, fmt.Errorf("read table columns: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var table, col, typ string
		var idx int
		if err := rows.Scan(&table, &idx, &col, &typ); err != nil {
			return nil, fmt.Errorf("read table columns: %w", err)
		}
		if out[table] == nil {
			out[table] = map[string]string{}
		}
		out[table][col] = typ
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read table columns: %w", err)
	}
	return out, nil
}

// columnDiff describes how the columns got of table differ from want.
func columnDiff(table string, got, want map[string]string) []string {
	if got == nil {
		return []string{"no table " + table}
	}
	var out []string
	for _, c := range slices.Sorted(maps.Keys(want)) {
		switch g, ok := got[c]; {
		case !ok:
			out = append(out, fmt.Sprintf("no column %s.%s", table, c))
		case g != want[c]:
			out = append(out, fmt.Sprintf("%s.%s is %s, not %s", table, c, g, want[c]))
		}
	}
	for _, c := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[c]; !ok {
			out = append(out, fmt.Sprintf("%s.%s is not in the migration", table, c))
		}
	}
	return out
}
