package ingest

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/store"
)

// A plan dead-lettered by -max-plan-tasks is stored by a replay with a
// higher limit: a dry run says so and writes nothing, the replay stores it
// once, a second replay finds nothing to do.
func TestReplayDeadLettersCommand(t *testing.T) {
	tasks := make([]events.Task, 6)
	for i := range tasks {
		tasks[i] = events.Task{ID: int64(i + 1), Description: "t"}
	}
	e, err := events.New("coder/h/w1", "s1", 1, events.PlanCreated, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
		events.PlanCreatedData{Tasks: tasks, Origin: events.OriginModel})
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(e)
	dir := t.TempDir()
	file, db := filepath.Join(dir, "plans.jsonl"), filepath.Join(dir, "r.duckdb")
	if err := os.WriteFile(file, append(line, []byte("\n{not json\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	ingest := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(t.Context(), append(args, "-db", db), nil, &out, &errOut); err != nil {
			t.Fatalf("ingest %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	countEvents := func() int {
		t.Helper()
		c, err := sql.Open("duckdb", db)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var n int
		if err := c.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if out := ingest("-file", file, "-max-plan-tasks", "5", "-allow-dead-letters"); !strings.Contains(out, "accepted 0, duplicates 0, dead-lettered 2") {
		t.Fatalf("load printed %q, want 2 dead letters", out)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-replay-dead-letters", "-dry-run", "-max-plan-tasks", "5"}, []string{
			"dead letter 1 (file " + file + " line 1, plan_too_large): would stay dead (plan_too_large): the plan lists 6 tasks",
			"dead letter 2 (file " + file + " line 2, malformed_json): would stay dead (malformed_json)",
			"dry run, nothing written: of 2 dead letters, 0 would be stored, 0 are duplicates, 2 would stay dead"}},
		{[]string{"-replay-dead-letters", "-dry-run"}, []string{
			"dead letter 1 (file " + file + " line 1, plan_too_large): would be stored",
			"of 2 dead letters, 1 would be stored, 0 are duplicates, 1 would stay dead"}},
		{[]string{"-replay-dead-letters"}, []string{
			"dead letter 1 (file " + file + " line 1, plan_too_large): stored",
			"dead letter 2 (file " + file + " line 2, malformed_json): still dead (malformed_json)",
			"replayed 2 dead letters: stored 1, duplicates 0, still dead 1"}},
		{[]string{"-replay-dead-letters"}, []string{
			"dead letter 2 (file " + file + " line 2, malformed_json): still dead",
			"replayed 1 dead letters: stored 0, duplicates 0, still dead 1"}},
	} {
		before := countEvents()
		out := ingest(c.args...)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("ingest %s printed\n%s\nwant it to contain %q", strings.Join(c.args, " "), out, w)
			}
		}
		stored := strings.Contains(out, "stored 1")
		if n := countEvents(); stored && n != before+1 || !stored && n != before {
			t.Errorf("ingest %s: events %d → %d", strings.Join(c.args, " "), before, n)
		}
	}
	if n := countEvents(); n != 1 {
		t.Fatalf("events = %d, want the plan once", n)
	}
}

func TestReplayFlagsConflict(t *testing.T) {
	for _, args := range [][]string{
		{"-replay-dead-letters", "-file", "x.jsonl"},
		{"-replay-dead-letters", "-rebuild"},
		{"-dry-run"},
	} {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), args, nil, &out, &errOut); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("ingest %s = %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// A 900 KB line is dead-lettered with its first store.MaxDeadLetterRaw
// bytes, its size and SHA-256; a replay refuses it with that reason, and
// -dead-letter-retention deletes it on the next start once it is old.
func TestOversizeDeadLetterBounded(t *testing.T) {
	dir := t.TempDir()
	file, db := filepath.Join(dir, "big.jsonl"), filepath.Join(dir, "r.duckdb")
	line := []byte(`{"pad":"` + strings.Repeat("x", 900_000) + `"}`)
	if err := os.WriteFile(file, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	ingest := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(t.Context(), append(args, "-db", db), nil, &out, &errOut); err != nil {
			t.Fatalf("ingest %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	ingest("-file", file, "-allow-dead-letters")
	query := func(q string, dest ...any) {
		t.Helper()
		c, err := sql.Open("duckdb", db)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.QueryRow(q).Scan(dest...); err != nil {
			t.Fatal(err)
		}
	}
	var raw, size int64
	var sum string
	query(`SELECT octet_length(raw), raw_size, raw_sha256 FROM dead_letters`, &raw, &size, &sum)
	whole := sha256.Sum256(line)
	if raw != store.MaxDeadLetterRaw || size != int64(len(line)) || sum != hex.EncodeToString(whole[:]) {
		t.Fatalf("dead letter raw %d bytes, raw_size %d, raw_sha256 %s; want %d, %d, %x", raw, size, sum, store.MaxDeadLetterRaw, len(line), whole)
	}
	out := ingest("-replay-dead-letters")
	if want := "still dead (truncated): cannot be replayed: only the first 65536 of its 900010 bytes were kept"; !strings.Contains(out, want) {
		t.Fatalf("replay printed\n%s\nwant it to contain %q", out, want)
	}
	ingest("-replay-dead-letters", "-dead-letter-retention", "1ns")
	var n int
	query(`SELECT (SELECT count(*) FROM dead_letters) + (SELECT count(*) FROM dead_letter_replays)`, &n)
	if n != 0 {
		t.Fatalf("%d dead letters and replays left past their retention, want none", n)
	}
}
