package cli

import (
	"bytes"
	"errors"
	"flag"
	"runtime/debug"
	"strings"
	"testing"
)

func newTestFlags(stderr *bytes.Buffer) *flag.FlagSet {
	fs := flag.NewFlagSet("analyze replans", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		stderr.WriteString("Usage: analyze replans [flags]\n\nlong help\n")
		fs.PrintDefaults()
	}
	fs.String("db", "", "database")
	for i := range 40 {
		fs.Bool(strings.Repeat("x", i+1), false, "a flag of the long list")
	}
	return fs
}

// A flag error is two lines, the error last; -h prints the full help.
func TestParseShortUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := Parse(t.Context(), newTestFlags(&stderr), []string{"-nope"}, &stdout)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Parse(-nope) = %v, want a flag error", err)
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "run 'analyze replans -h'") ||
		lines[1] != "analyze: flag provided but not defined: -nope" {
		t.Fatalf("Parse(-nope) printed\n%s\nwant a usage line, then the error", stderr.String())
	}

	stderr.Reset()
	if err := Parse(t.Context(), newTestFlags(&stderr), []string{"-h"}, &stdout); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Parse(-h) = %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(stderr.String(), "long help") || !strings.Contains(stderr.String(), "a flag of the long list") {
		t.Fatalf("Parse(-h) printed\n%s\nwant the full help", stderr.String())
	}
}

func TestParseVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := Parse(t.Context(), newTestFlags(&stderr), []string{"-version"}, &stdout); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Parse(-version) = %v, want flag.ErrHelp (nothing more to do)", err)
	}
	if !strings.HasPrefix(stdout.String(), "analyze replans ") {
		t.Fatalf("Parse(-version) printed %q, want the version", stdout.String())
	}
}

func TestVersionOf(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionOf("ingest", bi), "ingest v1.2.3 revision abc123 (dirty) committed 2026-11-30T10:00:00Z go1.26.0"; got != want {
		t.Fatalf("versionOf = %q, want %q", got, want)
	}
	if got, want := versionOf("ingest", &debug.BuildInfo{GoVersion: "go1.26.0"}), "ingest (devel) go1.26.0"; got != want {
		t.Fatalf("versionOf = %q, want %q", got, want)
	}
}

// Under a program, the usage line names the command as the program runs
// it; the error keeps the command's own name as its prefix.
func TestParseShortUsageProg(t *testing.T) {
	var stdout, stderr bytes.Buffer
	ctx := WithProg(t.Context(), Prog{Name: "evosignal"})
	if err := Parse(ctx, newTestFlags(&stderr), []string{"-nope"}, &stdout); err == nil {
		t.Fatal("Parse(-nope) = nil, want a flag error")
	}
	want := "usage: evosignal analyze replans [flags]  (run 'evosignal analyze replans -h' for the flags)\n" +
		"analyze: flag provided but not defined: -nope\n"
	if got := stderr.String(); got != want {
		t.Fatalf("Parse(-nope) under evosignal printed\n%s\nwant\n%s", got, want)
	}
	stdout.Reset()
	if err := Parse(ctx, newTestFlags(&stderr), []string{"-version"}, &stdout); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Parse(-version) = %v, want flag.ErrHelp", err)
	}
	if !strings.HasPrefix(stdout.String(), "evosignal analyze replans ") {
		t.Fatalf("Parse(-version) under evosignal printed %q, want the command as evosignal runs it", stdout.String())
	}
}
