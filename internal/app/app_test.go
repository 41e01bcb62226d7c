package app

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func runMain(tb testing.TB, stdin string, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	var out, errOut bytes.Buffer
	code = Main(tb.Context(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// -h lists every subcommand, one line each within 80 columns.
func TestHelpListsCommands(t *testing.T) {
	code, out, _ := runMain(t, "", "-h")
	if code != 0 {
		t.Fatalf("evosignal -h = %d, want 0", code)
	}
	for _, c := range Commands {
		if !strings.Contains(out, "\n  "+c.Name+" ") || !strings.Contains(out, c.Summary) {
			t.Errorf("evosignal -h does not list %s:\n%s", c.Name, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("evosignal -h: line of %d columns: %q", n, l)
		}
	}
	if code, _, errOut := runMain(t, ""); code != 2 || !strings.Contains(errOut, "Commands:") {
		t.Fatalf("evosignal without a command = %d, %q; want 2 and the list of commands", code, errOut)
	}
}

// An unknown command, or a flag in its place, says which commands exist.
func TestUnknownCommand(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"-db", "x", "analyze"}, {"help", "nope"}} {
		code, out, errOut := runMain(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "the commands are ingest, analyze, validate") ||
			!strings.Contains(errOut, "run 'evosignal -h'") {
			t.Errorf("evosignal %q = %d, stdout %q, stderr %q; want 2 and the commands", args, code, out, errOut)
		}
	}
}

// help <command> [subcommand] is <command> [subcommand] -h; demo is agentsim
// demo.
func TestHelpCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"ingest", []string{"help", "ingest"}, "Usage: evosignal ingest [flags]"},
		{"analyze subcommand", []string{"help", "analyze", "replans"}, "Usage: evosignal analyze replans [flags]"},
		{"demo", []string{"help", "demo"}, "Usage: evosignal demo [flags]"},
		{"demo -h", []string{"demo", "-h"}, "Usage: evosignal demo [flags]"},
		{"validate -h", []string{"validate", "-h"}, "Usage: evosignal validate [flags] [file ...]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, "", tt.args...)
			if code != 0 || !strings.Contains(out+errOut, tt.want) {
				t.Fatalf("evosignal %q = %d, printed\n%s%s\nwant 0 and %q", tt.args, code, out, errOut, tt.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runMain(t, "", "-version")
	if code != 0 || !strings.HasPrefix(out, "evosignal ") {
		t.Fatalf("evosignal -version = %d, %q; want 0 and the build", code, out)
	}
}

// A subcommand gets its arguments, standard input and exit status through:
// validate reads stdin and fails on an invalid event.
func TestDispatch(t *testing.T) {
	good, err := os.ReadFile("../../testdata/events/valid/coder_aborted.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runMain(t, string(good), "validate", "-"); code != 0 || out != "" || !strings.Contains(errOut, "events valid") {
		t.Fatalf("evosignal validate - (valid) = %d, %q, %q; want 0", code, out, errOut)
	}
	if code, out, _ := runMain(t, "{cut\n", "validate"); code != 1 || !strings.Contains(out, "-:1: malformed_json") {
		t.Fatalf("evosignal validate (malformed) = %d, %q; want 1 and the line", code, out)
	}
	if code, _, errOut := runMain(t, "", "analyze", "nope"); code != 2 || !strings.Contains(errOut, `unknown command "nope"`) {
		t.Fatalf("evosignal analyze nope = %d, %q; want 2", code, errOut)
	}
}
