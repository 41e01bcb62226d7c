package ingest_test

import (
	"github.com/evosignal/evosignal/internal/workshop/testkit"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
)

// Each dead letter is logged with its code, reason, file and line, up to
// a burst; the rest are counted in one line.
func TestDeadLettersAreLoggedRateLimited(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "dead.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs testkit.SyncBuffer
	in, err := ingest.New(ingest.DefaultConfig(), st, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Repeat("{bad\n", 25)
	if _, err := in.LoadFile(ctx, strings.NewReader(lines), "bad.jsonl"); err != nil {
		t.Fatal(err)
	}
	log := logs.String()
	if got := strings.Count(log, `msg="dead letter" code=malformed_json reason=`); got != 20 {
		t.Errorf("%d dead letters logged one by one, want 20:\n%s", got, log)
	}
	for _, want := range []string{"file=bad.jsonl line=1\n", "file=bad.jsonl line=20", `msg="more dead letters, not logged one by one`, "count=5"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if got := in.Stats().Snapshot().DeadLettersByReason["malformed_json"]; got != 25 {
		t.Errorf("dead letters counted by reason malformed_json = %d, want 25", got)
	}
}
