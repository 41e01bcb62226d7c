package main

// The README's promise: every example runs as written after the install
// line. This test holds it to that. It reads the README's ```sh blocks in
// order, runs the install block in the module root with GOBIN set to a
// temporary directory, then every other block with bash (-e -u -o pipefail)
// in one empty temporary directory, with that GOBIN first on PATH, so that
// later blocks see what earlier ones wrote (the demo's database).
//
// Every ```sh block runs unless the line before it marks it otherwise, in
// an HTML comment that GitHub does not show:
//
//	<!-- readme-test: install -->          the install line: runs in the module root
//	<!-- readme-test: exit N -->           runs, and must exit with status N
//	<!-- readme-test: skip (why) -->       illustrative: not run; the reason is required
//
// Skipped blocks are those that need what a test cannot have here: a
// server that runs until Ctrl-C, a NATS cluster, an agent, the network.
// No block may use `go run ./cmd/...`: the examples use the installed
// command.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// block is one ```sh block of a Markdown file.
type block struct {
	line   int    // of the opening fence, from 1
	mark   string // "", "install", "exit N" or "skip (why)"
	script string
}

var markRE = regexp.MustCompile(`^<!-- readme-test: (.*) -->$`)

// shellBlocks returns the ```sh blocks of a Markdown text and their marks.
func shellBlocks(md []byte) ([]block, error) {
	var blocks []block
	var cur *block
	var prev string // the last non-blank line outside a block
	sc := bufio.NewScanner(bytes.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur != nil && strings.TrimSpace(l) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.script += l + "\n"
		case strings.TrimSpace(l) == "```sh":
			cur = &block{line: n}
			if m := markRE.FindStringSubmatch(prev); m != nil {
				cur.mark = m[1]
			}
		case strings.HasPrefix(l, "<!-- readme-test"):
			if !markRE.MatchString(l) {
				return nil, fmt.Errorf("line %d: malformed mark %q, want <!-- readme-test: install|exit N|skip (why) -->", n, l)
			}
			prev = l
		case strings.TrimSpace(l) != "":
			prev = l
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: block not closed", cur.line)
	}
	return blocks, sc.Err()
}

// check reports what is wrong with the blocks as a whole: marks, go run,
// and examples before the install.
func check(blocks []block) error {
	install := false
	for _, b := range blocks {
		switch {
		case strings.Contains(b.script, "go run ./cmd"):
			return fmt.Errorf("line %d: an example uses go run ./cmd/…; use the installed command, evosignal", b.line)
		case b.mark == "install":
			install = true
		case b.mark == "" || strings.HasPrefix(b.mark, "exit "):
			if !install {
				return fmt.Errorf("line %d: an example runs before the install line", b.line)
			}
			if _, err := wantStatus(b); err != nil {
				return err
			}
		case strings.HasPrefix(b.mark, "skip (") && strings.HasSuffix(b.mark, ")") && len(b.mark) > len("skip ()"):
		default:
			return fmt.Errorf("line %d: unknown mark %q, want install, exit N or skip (why)", b.line, b.mark)
		}
	}
	if !install {
		return fmt.Errorf("no block marked install")
	}
	return nil
}

func wantStatus(b block) (int, error) {
	if b.mark == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(b.mark, "exit "))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("line %d: mark %q: want exit and a status above 0", b.line, b.mark)
	}
	return n, nil
}

func TestREADMEExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := shellBlocks(md)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if err := check(blocks); err != nil {
		t.Fatalf("README.md: %v", err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash runs the README's examples: %v", err)
	}

	tmp := t.TempDir()
	gobin, work := filepath.Join(tmp, "bin"), filepath.Join(tmp, "work")
	for _, d := range []string{gobin, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"GOBIN=" + gobin, "PATH=" + gobin + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		// The examples see a plain environment: no NATS_* settings of the
		// machine running the test, and no GOBIN or PATH but the test's.
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "NATS_") && k != "GOBIN" && k != "PATH" {
			env = append(env, kv)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for _, b := range blocks {
		if strings.HasPrefix(b.mark, "skip") {
			continue
		}
		dir := work
		if b.mark == "install" {
			dir = root
		}
		want, _ := wantStatus(b)
		t0 := time.Now()
		cmd := exec.CommandContext(ctx, bash, "-euo", "pipefail", "-c", b.script)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		got := 0
		if ee, ok := err.(*exec.ExitError); ok {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("README.md line %d: %v", b.line, err)
		}
		if got != want {
			t.Fatalf("README.md line %d: the example exited with status %d, want %d:\n%s\noutput:\n%s", b.line, got, want, b.script, out)
		}
		t.Logf("README.md line %d: status %d, as it should, in %s:\n%s", b.line, got, time.Since(t0).Round(time.Millisecond), b.script)
		if b.mark == "install" {
			if _, err := os.Stat(filepath.Join(gobin, "evosignal")); err != nil {
				t.Fatalf("README.md line %d: the install line did not install evosignal into GOBIN: %v", b.line, err)
			}
		}
	}
}

// The checks of the README's blocks themselves.
func TestShellBlocksCheck(t *testing.T) {
	tests := []struct {
		name, md, want string // want: part of the error; "" for none
	}{
		{"fine", "<!-- readme-test: install -->\n```sh\ngo install ./cmd/evosignal\n```\n\ntext\n```sh\nevosignal -h\n```\n<!-- readme-test: exit 1 -->\n```sh\nevosignal validate x\n```\n", ""},
		{"go run", "<!-- readme-test: install -->\n```sh\ngo install ./cmd/evosignal\n```\n```sh\ngo run ./cmd/ingest\n```\n", "go run"},
		{"before the install", "```sh\nevosignal demo\n```\n<!-- readme-test: install -->\n```sh\ngo install ./cmd/evosignal\n```\n", "before the install"},
		{"no install", "```sh\nevosignal demo\n```\n", "before the install"},
		{"skip without a reason", "<!-- readme-test: install -->\n```sh\ngo install ./cmd/evosignal\n```\n<!-- readme-test: skip -->\n```sh\nevosignal ingest\n```\n", "unknown mark"},
		{"the mark is only for the next block", "<!-- readme-test: install -->\n```sh\ngo install ./cmd/evosignal\n```\n<!-- readme-test: skip (x) -->\nprose\n```sh\nevosignal ingest\n```\n", ""},
		{"exit 0", "<!-- readme-test: install -->\n```sh\ngo install ./cmd/evosignal\n```\n<!-- readme-test: exit 0 -->\n```sh\nevosignal ingest\n```\n", "status above 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks, err := shellBlocks([]byte(tt.md))
			if err == nil {
				err = check(blocks)
			}
			if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("check(%q) = %v, want an error with %q", tt.md, err, tt.want)
			}
		})
	}
	// A mark applies to the next block only when nothing but blank lines is
	// between them.
	blocks, _ := shellBlocks([]byte("<!-- readme-test: skip (x) -->\nprose\n```sh\nevosignal ingest\n```\n"))
	if len(blocks) != 1 || blocks[0].mark != "" {
		t.Fatalf("shellBlocks with prose between mark and block = %+v, want an unmarked block", blocks)
	}
}
