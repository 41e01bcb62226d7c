package store

import (
	"bufio"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// holdWriter makes TestOpenReadOnlyLocked the writer process: it opens the
// store at this path, says "ready" and holds it until its stdin closes.
var holdWriter = flag.String("hold-writer", "", "(test helper) hold this database open for writing until stdin closes")

// A reader gets a *LockedError, which says to read through the ingester,
// while another process (here this test binary again, as a real ingester
// would) holds the file for writing; once the writer is gone it reads.
func TestOpenReadOnlyLocked(t *testing.T) {
	if *holdWriter != "" {
		s, err := Open(t.Context(), *holdWriter)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		os.Stdout.WriteString("ready\n")
		io.Copy(io.Discard, os.Stdin)
		return
	}
	path := filepath.Join(t.TempDir(), "held.duckdb")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestOpenReadOnlyLocked$", "-hold-writer="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("writer process said %q, %v; want ready", line, err)
	}

	_, err = OpenReadOnly(t.Context(), path)
	var locked *LockedError
	if !errors.As(err, &locked) || !errors.Is(err, ErrLocked) || locked.Path != path {
		t.Errorf("OpenReadOnly while a writer holds the file = %v, want a *LockedError matching ErrLocked", err)
	} else if !strings.Contains(err.Error(), "-nats URL") {
		t.Errorf("error %q does not tell to read through the ingester with -nats URL", err)
	}

	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("writer process: %v", err)
	}
	db, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenReadOnly after the writer stopped: %v", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE x (i INTEGER)"); err == nil {
		t.Error("a read-only database accepted CREATE TABLE")
	}
}

func TestOpenReadOnlyMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.duckdb")
	if _, err := OpenReadOnly(t.Context(), path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenReadOnly(missing) = %v, want os.ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("OpenReadOnly created the missing database")
	}
}

// TestOpenReadOnlyCurrentViews: a file whose stored views are an earlier
// writer's (one missing, one with another definition) is read with this
// binary's views.
func TestOpenReadOnlyCurrentViews(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.duckdb")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"DROP VIEW session_signals",
		"CREATE OR REPLACE VIEW sessions AS SELECT 1 AS stale",
	} {
		if _, err := st.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(2) // every connection gets the views, not only the first
	for range 3 {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM session_signals").Scan(&n); err != nil {
			t.Fatalf("session_signals on a file that lacks it: %v", err)
		}
		if err := db.QueryRowContext(ctx, "SELECT count(has_end) FROM sessions").Scan(&n); err != nil {
			t.Fatalf("sessions with the stored stale definition: %v", err)
		}
	}
}
