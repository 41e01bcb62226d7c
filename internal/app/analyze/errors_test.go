package analyze

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Errors say what to do: flags before the command are moved after it, a
// flag error is restated under a one-line usage, a missing database says
// where databases come from, -memory-limit reaches DuckDB.
func TestErrorsSayWhatToDo(t *testing.T) {
	db := buildEventsDB(t, nil, validSessions(t)...)
	missing := filepath.Join(t.TempDir(), "none.duckdb")
	tests := []struct {
		name       string
		args       []string
		wantErr    error
		wantStderr []string // lines of stderr, exactly
		wantInErr  string
	}{
		{"flags before the command", []string{"-db", "x.duckdb", "replans", "-by", "agent"}, errUsage,
			[]string{"usage: analyze <command> [flags]  (run 'analyze -h' for the commands)",
				"analyze: flags go after the command: analyze replans -db x.duckdb -by agent"}, ""},
		{"a flag and no command", []string{"-db", "x.duckdb"}, errUsage,
			[]string{"usage: analyze <command> [flags]  (run 'analyze -h' for the commands)",
				"analyze: -db is a flag: the command comes first, analyze <command> -db x.duckdb; the commands are cost, effect, export, hints, mappings, replans, report, rules, sql, stuck, trend"}, ""},
		{"unknown flag", []string{"replans", "-nope"}, errUsage,
			[]string{"usage: analyze replans [flags]  (run 'analyze replans -h' for the flags)",
				"analyze: flag provided but not defined: -nope"}, ""},
		{"missing database", []string{"replans", "-db", missing}, fs.ErrNotExist, nil, "the ingester writes one: ingest -db " + missing},
		{"missing database, export", []string{"export", "-db", missing, "-out", t.TempDir()}, fs.ErrNotExist, nil, "agentsim demo writes its own"},
		{"memory limit DuckDB cannot read", []string{"replans", "-db", db, "-memory-limit", "lots"}, nil, nil, `memory limit "lots"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if err == nil {
				t.Fatalf("analyze %q succeeded, want an error", tt.args)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("analyze %q = %v, want %v", tt.args, err, tt.wantErr)
			}
			if tt.wantInErr != "" && !strings.Contains(err.Error(), tt.wantInErr) {
				t.Fatalf("analyze %q = %v, want it to say %q", tt.args, err, tt.wantInErr)
			}
			if tt.wantStderr != nil {
				if got := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tt.wantStderr, "\n") {
					t.Fatalf("analyze %q printed\n%s\nwant\n%s", tt.args, stderr.String(), strings.Join(tt.wantStderr, "\n"))
				}
			}
		})
	}
}

// -memory-limit and -temp-dir open the database with those settings, and
// the command still reads it.
func TestReadOptions(t *testing.T) {
	db := buildEventsDB(t, nil, validSessions(t)...)
	out := runForOutput(t, "replans", "-db", db, "-format", "json", "-memory-limit", "256MiB", "-temp-dir", t.TempDir())
	if !strings.Contains(out, `"analysis": "replans"`) {
		t.Fatalf("replans with -memory-limit printed %s", out)
	}
}

// -version prints the build and does nothing else, before or after the
// command.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"-version"}, {"replans", "-version", "-db", "none.duckdb"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("analyze %q = %v\n%s", args, err, stderr.String())
		}
		if !strings.HasPrefix(stdout.String(), "analyze") || stdout.Len() > 200 {
			t.Fatalf("analyze %q printed %q, want one version line", args, stdout.String())
		}
	}
}
