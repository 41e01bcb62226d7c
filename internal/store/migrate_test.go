package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/queries"
)

// execFile runs statements on the database file path with no Store open.
func execFile(tb testing.TB, path string, stmts ...string) {
	tb.Helper()
	db, err := sql.Open("duckdb", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			tb.Fatalf("%.60s: %v", s, err)
		}
	}
}

// createClosed creates a database with Open and closes it.
func createClosed(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "s.duckdb")
	s, err := Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

func recordedChecksums(tb testing.TB, s *Store) map[int]string {
	tb.Helper()
	got, err := appliedMigrations(context.Background(), s.DB())
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

func embeddedMigrations(tb testing.TB) []queries.Migration {
	tb.Helper()
	ms, err := queries.Migrations()
	if err != nil {
		tb.Fatal(err)
	}
	return ms
}

// Open records the checksum of every migration it applies.
func TestOpenRecordsChecksums(t *testing.T) {
	s := openTemp(t)
	got := recordedChecksums(t, s)
	for _, m := range embeddedMigrations(t) {
		if got[m.Version] != m.Checksum {
			t.Errorf("recorded checksum of %s = %q, want %q", m.File, got[m.Version], m.Checksum)
		}
	}
}

// A database whose recorded text of a migration differs from the embedded
// one (the migration was edited after the database applied it) is refused,
// with a message naming the migration and both checksums.
func TestOpenRefusesAnEditedMigration(t *testing.T) {
	path := createClosed(t)
	const old = "0000000000000000000000000000000000000000000000000000000000000000"
	execFile(t, path, "UPDATE schema_migrations SET checksum = '"+old+"' WHERE version = 2")
	_, err := Open(t.Context(), path)
	if !errors.Is(err, ErrMigrationChanged) {
		t.Fatalf("Open = %v, want ErrMigrationChanged", err)
	}
	m := embeddedMigrations(t)[1]
	for _, want := range []string{"migrations/0002_analysis_views.sql", old, m.Checksum} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error %q does not name %s", err, want)
		}
	}
}

// history builds a database as an earlier version of evosignal left it:
// schema_migrations without checksums, and each migration applied from the
// given text (a file of testdata/history, or "" for the embedded text).
func history(tb testing.TB, texts ...string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "old.duckdb")
	stmts := []string{`CREATE TABLE schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
)`}
	for i, m := range embeddedMigrations(tb)[:len(texts)] {
		text := m.SQL
		if texts[i] != "" {
			b, err := os.ReadFile(filepath.Join("testdata", "history", texts[i]))
			if err != nil {
				tb.Fatal(err)
			}
			text = string(b)
		}
		stmts = append(stmts, text, "INSERT INTO schema_migrations VALUES ("+
			strconv.Itoa(m.Version)+", '"+m.Name+"', '"+time.Now().UTC().Format(time.RFC3339)+"')")
	}
	execFile(tb, path, stmts...)
	return path
}

// A database written before checksums were recorded gets them on its first
// open when its tables are what the embedded migrations build. Its views are
// replaced by the current definitions (queries/views), so the view fixes of
// 370e374 reach it: 0003 as of 7ec2d2d created session_facts_pending with
// any_value and task_facts with UNION ALL.
func TestOpenBackfillsChecksums(t *testing.T) {
	path := history(t, "", "0002_analysis_views.444753a.sql", "0003_stored_facts.7ec2d2d.sql")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := recordedChecksums(t, s)
	for _, m := range embeddedMigrations(t) {
		if got[m.Version] != m.Checksum {
			t.Errorf("recorded checksum of %s = %q, want %q", m.File, got[m.Version], m.Checksum)
		}
	}
	var def string
	if err := s.DB().QueryRow(`SELECT sql FROM duckdb_views() WHERE view_name = 'session_facts_pending'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "ORDER BY seq, event_id") {
		t.Errorf("session_facts_pending is not the current definition:\n%s", def)
	}
	if n := count(t, s, "SELECT count(*) FROM session_signals"); n != 0 {
		t.Errorf("session_signals has %d rows, want 0", n)
	}
}

// A database written before checksums were recorded whose tables were built
// by an earlier text of a migration (0001 before b1cb029, 0003 before
// 7ec2d2d) is refused: its checksum cannot be recorded as the embedded
// text's.
func TestOpenRefusesTablesOfAnEarlierText(t *testing.T) {
	for _, tc := range []struct {
		name  string
		texts []string
		want  []string
	}{
		{"0001 of a74ed64", []string{"0001_init.a74ed64.sql"},
			[]string{"migrations/0001_init.sql", "no column ingest_position.stream_created", "session_ends.replans is INTEGER, not BIGINT"}},
		{"0003 of d79d6e3", []string{"", "", "0003_stored_facts.d79d6e3.sql"},
			[]string{"migrations/0003_stored_facts.sql", "no table facts_classifier", "no column task_facts_stored.class_type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := history(t, tc.texts...)
			_, err := Open(t.Context(), path)
			if !errors.Is(err, ErrMigrationChanged) {
				t.Fatalf("Open = %v, want ErrMigrationChanged", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open error %q does not say %q", err, w)
				}
			}
		})
	}
}

// The views are created in an order in which each comes after those it
// reads: every view answers a query on a fresh database.
func TestViewsAnswer(t *testing.T) {
	s := openTemp(t)
	vs, err := queries.Views()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		name := strings.TrimSuffix(filepath.Base(v.File), ".sql")
		count(t, s, "SELECT count(*) FROM "+name)
	}
}
