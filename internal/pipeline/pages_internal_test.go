package pipeline

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/sqlservice"
)

// When the store opens its file again (after a fatal error), the pages'
// next query locks the new database down before it runs: no setting can
// be changed on it then, as on the first.
func TestPagesLockDownTheStoresNewDatabase(t *testing.T) {
	open := func(name string) *sql.DB {
		db, err := sql.Open("duckdb", filepath.Join(t.TempDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	first, second := open("a.duckdb"), open("b.duckdb")
	current := first
	q := &storeQuerier{current: func() *sql.DB { return current }, timeout: pagesTimeout}
	query := func() {
		t.Helper()
		if _, err := q.Query(t.Context(), sqlservice.Request{SQL: "SELECT 42 AS answer", Format: sqlservice.FormatJSON}); err != nil {
			t.Fatal(err)
		}
	}
	locked := func(db *sql.DB) bool {
		t.Helper()
		_, err := db.ExecContext(t.Context(), "SET threads = 1")
		if err != nil && !strings.Contains(err.Error(), "locked") {
			t.Fatalf("SET threads: %v; want success or a locked configuration", err)
		}
		return err != nil
	}
	if locked(second) {
		t.Fatal("the second database is locked before the pages used it: the test tests nothing")
	}
	query()
	if !locked(first) {
		t.Fatal("the first database is not locked down after a page's query")
	}
	current = second // the store opened its file again
	query()
	if !locked(second) {
		t.Fatal("the store's new database is not locked down after a page's query")
	}
}
