package ingest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ingest -file shows the first dead letters with their line numbers and
// fails unless -allow-dead-letters; a truncated last line is one of them.
func TestLoadFileWithDeadLettersFails(t *testing.T) {
	file, n := writeSessions(t, 3)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	naive := `{"specversion":"1.0","id":"naive-1","source":"demo/a","type":"agent.session.started","time":"2026-11-03 10:00:00","subject":"s1","datacontenttype":"application/json","seq":1,"data":{}}`
	f.WriteString(naive + "\n" + `{"specversion":"1.0","id":"cut`) // the last line cut off, no newline
	f.Close()
	db := filepath.Join(t.TempDir(), "t.duckdb")
	var out, errOut bytes.Buffer
	err = run(t.Context(), []string{"-file", file, "-db", db}, nil, &out, &errOut)
	if !errors.Is(err, errDeadLetters) {
		t.Fatalf("run = %v, want errDeadLetters\n%s", err, errOut.String())
	}
	for _, want := range []string{
		file + ":" + itoa(n+1) + ": schema_violation: ",
		"is not an RFC 3339 date-time",
		file + ":" + itoa(n+2) + ": malformed_json: ",
		"2 lines of " + file + " were dead-lettered",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	if want := "accepted " + itoa(n) + ", duplicates 0, dead-lettered 2"; !strings.Contains(out.String(), want) {
		t.Errorf("stdout = %q, want it to contain %q", out.String(), want)
	}
	out.Reset()
	errOut.Reset()
	if err := run(t.Context(), []string{"-file", file, "-db", db, "-allow-dead-letters"}, nil, &out, &errOut); err != nil {
		t.Fatalf("run -allow-dead-letters = %v\n%s", err, errOut.String())
	}
}

// More dead letters than are shown one by one end in a count.
func TestLoadFileShowsTheFirstDeadLetters(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(file, []byte(strings.Repeat("{bad\n", shownDeadLetters+5)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"-file", file, "-db", filepath.Join(t.TempDir(), "t.duckdb")}, nil, &out, &errOut)
	if !errors.Is(err, errDeadLetters) {
		t.Fatalf("run = %v, want errDeadLetters", err)
	}
	if got := strings.Count(errOut.String(), ": malformed_json: "); got != shownDeadLetters {
		t.Errorf("%d dead letters shown, want %d:\n%s", got, shownDeadLetters, errOut.String())
	}
	if !strings.Contains(errOut.String(), "… and 5 more dead letters") {
		t.Errorf("stderr lacks the count of the rest:\n%s", errOut.String())
	}
}

// A file that does not exist leaves no database behind.
func TestLoadMissingFileCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"-file", filepath.Join(dir, "missing.jsonl"), "-db", db}, nil, &out, &errOut)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("run = %v, want a not-exist error", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("the directory holds %v after a missing input, want nothing", entries)
	}
}
