package store

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/evosignal/evosignal/queries"
)

// A database written before dead letters were replayable gets its dead
// letters numbered, in table order, by the migration; new ones follow.
func TestMigrationNumbersExistingDeadLetters(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, queries.MustRead("migrate/table.sql")); err != nil {
		t.Fatal(err)
	}
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version >= 5 {
			break
		}
		if err := apply(ctx, db, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO dead_letters VALUES
		(now(), 'file', NULL, NULL, NULL, 'a.jsonl', 1, 'malformed_json', 'r', NULL, NULL, NULL, 'x'::BLOB),
		(now(), 'file', NULL, NULL, NULL, 'a.jsonl', 2, 'unknown_type', 'r', NULL, NULL, NULL, 'y'::BLOB)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Raw: []byte("z"), File: "b.jsonl", Line: 1,
		Dead: &Dead{Code: "malformed_json", Reason: "r"}}}}); err != nil {
		t.Fatal(err)
	}
	dls, err := s.DeadLetters(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, d := range dls {
		got += string(d.Raw)
		if d.ID != int64(len(got)) {
			t.Errorf("dead letter %q numbered %d, want %d", d.Raw, d.ID, len(got))
		}
	}
	if got != "xyz" {
		t.Fatalf("dead letters to replay: %q, want xyz", got)
	}
	if dls, err := s.DeadLetters(ctx, 2, 10); err != nil || len(dls) != 1 || dls[0].File != "b.jsonl" || dls[0].Line != 1 {
		t.Fatalf("dead letters after 2: %+v, %v; want the one of b.jsonl line 1", dls, err)
	}
}

// copyFile copies src to dst, if src exists.
func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	b, err := os.ReadFile(src)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// A database whose migration and dead letters are only in the write-ahead
// log (the writer was killed before a checkpoint) opens again: DuckDB
// replays the log. (A column DEFAULT nextval() added by ALTER TABLE made
// that replay fail, and the database unusable.)
func TestDeadLettersSurviveACrash(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "live.duckdb")
	live, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	for range 2 {
		if _, err := live.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Raw: []byte("x"), File: "a.jsonl", Line: 1,
			Dead: &Dead{Code: "malformed_json", Reason: "r"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + ".wal"); err != nil {
		t.Fatalf("no write-ahead log to replay: %v", err)
	}
	// The files as a crash leaves them.
	crashed := filepath.Join(dir, "crashed.duckdb")
	copyFile(t, path, crashed)
	copyFile(t, path+".wal", crashed+".wal")
	c, err := Open(ctx, crashed)
	if err != nil {
		t.Fatalf("open after a crash: %v", err)
	}
	defer c.Close()
	if _, err := c.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Raw: []byte("y"), Dead: &Dead{Code: "malformed_json", Reason: "r"}}}}); err != nil {
		t.Fatal(err)
	}
	var ids string
	if err := c.DB().QueryRow(`SELECT string_agg(dead_id::VARCHAR, ',' ORDER BY dead_id) FROM dead_letters`).Scan(&ids); err != nil || ids != "1,2,3" {
		t.Fatalf("dead letters after a crash numbered %q (%v), want 1,2,3", ids, err)
	}
}
