package store

import (
	"path/filepath"
	"testing"
)

// OpenReadOnlyWith applies the memory limit and temp directory to the
// read-only database, and refuses a limit DuckDB cannot read.
func TestOpenReadOnlyWith(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.duckdb")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	spill := filepath.Join(dir, "spill")
	db, err := OpenReadOnlyWith(t.Context(), path, ReadOptions{MemoryLimit: "300MiB", TempDir: spill})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var limit, temp string
	if err := db.QueryRowContext(t.Context(), "SELECT current_setting('memory_limit'), current_setting('temp_directory')").Scan(&limit, &temp); err != nil {
		t.Fatal(err)
	}
	if limit != "300.0 MiB" {
		t.Errorf("memory_limit = %q, want 300 MiB", limit)
	}
	if temp != spill {
		t.Errorf("temp_directory = %q, want %q", temp, spill)
	}
	if _, err := OpenReadOnlyWith(t.Context(), path, ReadOptions{MemoryLimit: "lots"}); err == nil {
		t.Fatal("OpenReadOnlyWith(memory limit lots) succeeded, want an error")
	}
}
