package feedbackdb_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/adapter/skilllite"
	"github.com/evosignal/evosignal/internal/adapter/skilllite/feedbackdb"
	"github.com/evosignal/evosignal/internal/workshop/feedbackdbtest"
)

func TestReadDecisions(t *testing.T) {
	path := feedbackdbtest.Write(t, []feedbackdbtest.Row{
		{TS: "2026-06-28 10:00:05", SessionID: "default", TotalTools: 4, TaskCompleted: true,
			CompletionType: "success", Reported: "success", Rules: []string{"rule_a", "rule_b"}},
		{TS: "2026-06-28 10:03:00", TotalTools: 7, FailedTools: 3, Replans: 3,
			CompletionType: "failure", Reported: "partial_success"},
	})
	got, err := feedbackdb.ReadDecisions(t.Context(), path)
	if err != nil {
		t.Fatalf("ReadDecisions: %v", err)
	}
	want := []skilllite.Decision{
		{ID: 1, TS: time.Date(2026, 6, 28, 10, 0, 5, 0, time.UTC), SessionID: "default", TotalTools: 4, TaskCompleted: true,
			CompletionType: "success", CompletionTypeReported: "success", Rules: []string{"rule_a", "rule_b"}},
		{ID: 2, TS: time.Date(2026, 6, 28, 10, 3, 0, 0, time.UTC), TotalTools: 7, FailedTools: 3, Replans: 3,
			CompletionType: "failure", CompletionTypeReported: "partial_success"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadDecisions = %+v, want %+v", got, want)
	}
}

func TestReadDecisionsDefaultTime(t *testing.T) {
	// A row written with the column's default, datetime('now'), parses.
	path := feedbackdbtest.Write(t, []feedbackdbtest.Row{{TotalTools: 1, CompletionType: "success", Reported: "success"}})
	got, err := feedbackdb.ReadDecisions(t.Context(), path)
	if err != nil {
		t.Fatalf("ReadDecisions: %v", err)
	}
	if len(got) != 1 || got[0].TS.IsZero() || time.Since(got[0].TS) > time.Hour {
		t.Errorf("ReadDecisions = %+v, want one row with the time it was written", got)
	}
}

func TestReadDecisionsMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feedback.sqlite")
	if _, err := feedbackdb.ReadDecisions(t.Context(), path); err == nil {
		t.Fatalf("ReadDecisions(%s) of a missing file: no error", path)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after ReadDecisions(%s) of a missing file: stat %v, want it still missing", path, err)
	}
}
