package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemoPaths(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		name, dir, db            string
		wantDir, wantDB, wantErr string
	}{
		{name: "fresh default", wantDir: "evosignal-demo", wantDB: filepath.Join("evosignal-demo", "evosignal.duckdb")},
		{name: "default taken", wantDir: "evosignal-demo-2", wantDB: filepath.Join("evosignal-demo-2", "evosignal.duckdb")},
		{name: "own dir and db", dir: "x", db: "y.duckdb", wantDir: "x", wantDB: "y.duckdb"},
		{name: "db exists", dir: "z", db: "exists.duckdb", wantErr: "exists"},
	}
	os.WriteFile("exists.duckdb", nil, 0o644)
	for _, tt := range tests {
		dir, store, db, err := Paths(tt.dir, tt.db)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: Paths = %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || dir != tt.wantDir || db != tt.wantDB || store != filepath.Join(tt.wantDir, "jetstream") {
			t.Errorf("%s: Paths(%q, %q) = %q, %q, %q, %v; want %q, %q", tt.name, tt.dir, tt.db, dir, store, db, err, tt.wantDir, tt.wantDB)
		}
	}
}
