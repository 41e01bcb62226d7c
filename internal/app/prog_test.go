package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/app/agentsim"
	"github.com/evosignal/evosignal/internal/app/analyze"
	"github.com/evosignal/evosignal/internal/app/ingest"
	"github.com/evosignal/evosignal/internal/cli"
)

// runAlone runs m as its own command (cmd/<name>), outside evosignal.
func runAlone(tb testing.TB, m cli.MainFunc, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	var out, errOut bytes.Buffer
	code = m(tb.Context(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// The texts that tell a user what to type name the command as the user ran
// it: through evosignal with evosignal first (an install has no other
// command), alone as itself.
func TestTextsNameCommandAsRun(t *testing.T) {
	t.Chdir(t.TempDir()) // no evosignal-demo* here: the hint names none
	missing := filepath.Join(t.TempDir(), "missing.duckdb")
	tests := []struct {
		name string
		args []string
		main cli.MainFunc // the command alone: args without args[0]
		code int
		// want are in evosignal's output; the same texts without
		// "evosignal " are in the command's alone, and none of these is.
		want []string
	}{
		{"analyze -h", []string{"analyze", "-h"}, analyze.Main, 0,
			[]string{"Usage: evosignal analyze <command> [flags]"}},
		{"analyze replans -h", []string{"analyze", "replans", "-h"}, analyze.Main, 0,
			[]string{"Usage: evosignal analyze replans [flags]"}},
		{"analyze sql -h", []string{"analyze", "sql", "-h"}, analyze.Main, 0,
			[]string{"Usage: evosignal analyze sql [flags]", "\n  evosignal analyze sql -f my.sql"}},
		{"flags before the command", []string{"analyze", "-db", missing, "replans"}, analyze.Main, 2,
			[]string{"usage: evosignal analyze <command> [flags]  (run 'evosignal analyze -h' for the commands)",
				"flags go after the command: evosignal analyze replans -db " + missing}},
		{"missing database", []string{"analyze", "replans", "-db", missing}, analyze.Main, 1,
			[]string{"the ingester writes one: evosignal ingest -db " + missing, "; evosignal demo writes its own"}},
		{"unknown flag", []string{"analyze", "replans", "-nope"}, analyze.Main, 2,
			[]string{"usage: evosignal analyze replans [flags]  (run 'evosignal analyze replans -h' for the flags)\nanalyze: flag provided but not defined: -nope"}},
		{"demo -h", []string{"demo", "-h"}, nil, 0,
			[]string{"Usage: evosignal demo [flags]", "'evosignal analyze trend -every day' on the database", "(evosignal agentsim scenario prints it)"}},
		{"agentsim -h", []string{"agentsim", "-h"}, agentsim.Main, 0,
			[]string{"\n  evosignal agentsim [flags]\n", "\n  evosignal demo [flags]\n", "\n  evosignal agentsim truth [flags]\n",
				"a later 'evosignal ingest'", "\n  evosignal agentsim -out - | head"}},
		{"demo, unknown flag", []string{"demo", "-nope"}, nil, 2,
			[]string{"usage: evosignal demo [flags]  (run 'evosignal demo -h' for the flags)\nagentsim: flag provided but not defined: -nope"}},
		{"ingest -h", []string{"ingest", "-h"}, nil, 0,
			[]string{"Usage: evosignal ingest [flags]", "\n  evosignal ingest -file events.jsonl"}},
		{"ingest, unknown flag", []string{"ingest", "-nope"}, nil, 2,
			[]string{"usage: evosignal ingest [flags]  (run 'evosignal ingest -h' for the flags)\ningest: flag provided but not defined: -nope"}},
		{"bridge -h", []string{"bridge", "-h"}, nil, 0,
			[]string{"Usage: evosignal bridge -agent NAME", "\n  evosignal bridge -agent skilllite -in agent-rpc.jsonl -out - | evosignal ingest -file -"}},
		{"validate -h", []string{"validate", "-h"}, nil, 0,
			[]string{"Usage: evosignal validate [flags]", "| evosignal validate\n"}},
		{"bench -h", []string{"bench", "-h"}, nil, 0, []string{"Usage: evosignal bench [flags]"}},
		{"inferbench -h", []string{"inferbench", "-h"}, nil, 0, []string{"Usage: evosignal inferbench [flags]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, "", tt.args...)
			if code != tt.code {
				t.Fatalf("evosignal %q = %d, want %d\n%s%s", tt.args, code, tt.code, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("evosignal %q printed\n%s%s\nwant it to contain %q", tt.args, out, errOut, w)
				}
			}

			// Alone: the command's own Main (demo is agentsim demo).
			m, args := tt.main, tt.args[1:]
			if m == nil {
				c, _ := lookup(tt.args[0])
				m = c.Main
				if c.For != "" {
					w := strings.Fields(c.For)
					c, _ = lookup(w[0])
					m, args = c.Main, append(w[1:], args...)
				}
			}
			code, out, errOut = runAlone(t, m, args...)
			if code != tt.code {
				t.Fatalf("%s alone = %d, want %d\n%s%s", tt.args, code, tt.code, out, errOut)
			}
			for _, w := range tt.want {
				alone := strings.ReplaceAll(strings.ReplaceAll(w, "evosignal demo", "agentsim demo"), "evosignal ", "")
				if !strings.Contains(out+errOut, alone) {
					t.Errorf("%q alone printed\n%s%s\nwant it to contain %q", tt.args, out, errOut, alone)
				}
			}
			for _, c := range Commands {
				if strings.Contains(out+errOut, Name+" "+c.Name) {
					t.Errorf("%q alone printed\n%s%s\nwhich names %s %s", tt.args, out, errOut, Name, c.Name)
				}
			}
		})
	}
}

// Every command's help names it with evosignal first when run through
// evosignal.
func TestEveryHelpNamesEvosignal(t *testing.T) {
	for _, c := range Commands {
		code, out, errOut := runMain(t, "", c.Name, "-h")
		if code != 0 || !strings.Contains(out+errOut, Name+" "+c.Name+" ") {
			t.Errorf("evosignal %s -h = %d, printed\n%s%s\nwant 0 and %q", c.Name, code, out, errOut, Name+" "+c.Name)
		}
	}
}

// A short command's For names a command: run finds what it stands for.
func TestShortCommandsStandForCommands(t *testing.T) {
	for _, c := range Commands {
		if c.For == "" {
			if c.Main == nil {
				t.Errorf("command %s has neither Main nor For", c.Name)
			}
			continue
		}
		if target, ok := lookup(strings.Fields(c.For)[0]); !ok || target.Main == nil {
			t.Errorf("command %s stands for %q, which is no command", c.Name, c.For)
		}
	}
}

// The demo's closing lines name the trend command as the user runs it.
func TestDemoExploreLine(t *testing.T) {
	scenario, err := filepath.Abs("../../testdata/agentsim/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(scenario); err != nil {
		t.Fatal(err)
	}
	args := []string{"-generations", "1", "-sessions", "20", "-scenario", scenario}
	code, out, errOut := runMain(t, "", append([]string{"demo", "-dir", filepath.Join(t.TempDir(), "d")}, args...)...)
	if code != 0 || !strings.Contains(out, "\nexplore:   evosignal analyze trend -db ") {
		t.Fatalf("evosignal demo = %d, printed\n%s%s\nwant 0 and the explore line with evosignal", code, out, errOut)
	}
	code, out, errOut = runAlone(t, agentsim.Main, append([]string{"demo", "-dir", filepath.Join(t.TempDir(), "d")}, args...)...)
	if code != 0 || !strings.Contains(out, "\nexplore:   analyze trend -db ") {
		t.Fatalf("agentsim demo = %d, printed\n%s%s\nwant 0 and the explore line without evosignal", code, out, errOut)
	}
}

// ingest -file's closing hint names validate as the user runs it.
func TestIngestFileValidateHint(t *testing.T) {
	args := func() []string { return []string{"-file", "-", "-db", filepath.Join(t.TempDir(), "e.duckdb")} }
	code, _, errOut := runMain(t, "{cut\n", append([]string{"ingest"}, args()...)...)
	if code != 1 || !strings.Contains(errOut, "(evosignal validate - lists every violation") {
		t.Fatalf("evosignal ingest -file - (malformed) = %d, printed\n%s\nwant 1 and the hint with evosignal", code, errOut)
	}
	var out, stderr bytes.Buffer
	code = ingest.Main(t.Context(), args(), strings.NewReader("{cut\n"), &out, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "(validate - lists every violation") {
		t.Fatalf("ingest -file - (malformed) = %d, printed\n%s\nwant 1 and the hint without evosignal", code, stderr.String())
	}
}
