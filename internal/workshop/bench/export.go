package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/evosignal/evosignal/internal/export"
	"github.com/evosignal/evosignal/internal/store"
)

// phaseExport runs a first, full export (analyze export: the read-only
// open with the export's default memory limit, then export.Export) of the
// ingested database of N events into a fresh directory.
func phaseExport(ctx context.Context, e *env) ([]Result, error) {
	sc, m, err := e.ingestedScenario()
	if err != nil {
		return nil, err
	}
	out := filepath.Join(e.dir, sc, "export")
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	defer os.RemoveAll(out) // as large as the database; nothing reads it
	sp := startSpan()
	db, err := store.OpenReadOnlyWith(ctx, e.dbPath(sc), export.ReadOptions(store.ReadOptions{}))
	if err != nil {
		return nil, err
	}
	res, err := export.Export(ctx, db, export.Config{Dir: out})
	if err := errors.Join(err, db.Close()); err != nil {
		return nil, fmt.Errorf("export %s: %w", e.dbPath(sc), err)
	}
	var events int64
	for _, t := range res.Tables {
		if t.Table == "events" {
			events = t.Rows
		}
	}
	if events != m.Events {
		return nil, fmt.Errorf("export: wrote %d events, want %d", events, m.Events)
	}
	r := sp.row("export", "analyze export of the db of N events (first run: every table), default memory limit",
		events, 0, time.Time{})
	r.Extra = map[string]any{"db": sc, "rows": res.Rows, "files": res.Files, "memory_limit": export.DefaultMemoryLimit}
	return []Result{r}, nil
}
