package export

import (
	"path/filepath"
	"testing"

	"github.com/evosignal/evosignal/internal/store"
)

// TestExportSpills exports a database whose events table, as the COPY
// sorts and buffers it, does not fit the memory limit: the export must
// spill to the temp directory rather than fail, and write every row. With
// spilling turned off (SET GLOBAL temp_directory = ”) this export fails
// with an Out of Memory Error. A much larger database under the same
// limit would fail all the same: what the partitioned Parquet writer
// holds does not spill (docs/operations.md).
func TestExportSpills(t *testing.T) {
	d := newTestDB(t)
	d.loadSynth(t, 7, midnight, 1400)
	var eventBytes int64
	if c := d.counts(t, "SELECT sum(strlen(data::VARCHAR))::BIGINT FROM src.events"); len(c) > 0 {
		eventBytes = c[0]
	}
	const limit = 32 << 20
	if eventBytes < limit/5 {
		t.Fatalf("the events' payloads take %d bytes, want more than a fifth of the limit (the rows the sort holds are larger) (%d): load more", eventBytes, limit)
	}
	db, err := store.OpenReadOnlyWith(t.Context(), d.path, store.ReadOptions{MemoryLimit: "32MiB", TempDir: filepath.Join(t.TempDir(), "spill")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir := filepath.Join(t.TempDir(), "out")
	res, err := Export(t.Context(), db, Config{Dir: dir})
	if err != nil {
		t.Fatalf("Export under a 32MiB memory limit = %v, want it to spill and succeed", err)
	}
	for _, tr := range res.Tables {
		if want := d.sourceRows(t, tr.Table); tr.Rows != want {
			t.Errorf("%s: Rows = %d, want %d", tr.Table, tr.Rows, want)
		}
	}
	d.checkExport(t, dir, nil)
}
