// Package realcli runs the real agent CLIs, Claude Code and Codex, headless
// against a scripted fake model server (internal/workshop/fakemodel), so
// that the files they write (hook logs, Claude Code transcripts, Codex
// rollouts) are the fixtures of the adapters that read them: the real
// client is the fixture.
//
// The CLIs are pinned in npm/package.json (the one place their versions
// are written) and installed by scripts/setup with npm ci; the harness
// refuses a CLI whose --version is not the pinned one. Every run happens in a
// network namespace with nothing but loopback (Namespace), so a switch
// missed and a call out fails at once instead of reaching out; the
// configuration each CLI gets (ClaudeCode, Codex) turns its outbound
// traffic off besides.
//
// A Harness is one namespace and one fake server; its CLIs share the
// server's script, one step per model request, across their prompts.
package realcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
)

// npmDir is the folder of the pinned CLIs' package.json, next to this
// file.
func npmDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("realcli: cannot tell where its source is")
	}
	return filepath.Join(filepath.Dir(file), "npm"), nil
}

// The npm packages of the CLIs.
const (
	ClaudeCodePackage = "@anthropic-ai/claude-code"
	CodexPackage      = "@openai/codex"
)

// Pins returns the pinned version of each CLI package, as npm/package.json
// writes it.
func Pins() (map[string]string, error) {
	dir, err := npmDir()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, fmt.Errorf("read the pinned CLIs: %w", err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return nil, fmt.Errorf("decode %s: %w", filepath.Join(dir, "package.json"), err)
	}
	return pkg.Dependencies, nil
}

// binary returns the path of the installed command name (claude, codex)
// of package pkg, after checking, in the namespace, with env and in dir,
// that its --version reports the pinned version.
func (h *Harness) binary(ctx context.Context, pkg, name, dir string, env []string) (string, error) {
	pins, err := Pins()
	if err != nil {
		return "", err
	}
	want, ok := pins[pkg]
	if !ok {
		return "", fmt.Errorf("realcli: %s is not pinned in npm/package.json", pkg)
	}
	npm, err := npmDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(npm, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("realcli: %s is not installed (scripts/setup installs the pinned CLIs): %w", pkg, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := h.run(ctx, dir, env, bin, "--version")
	if err != nil {
		return "", fmt.Errorf("realcli: %v (scripts/setup installs the pinned CLIs)", err)
	}
	if !strings.Contains(string(out.Stdout), want) {
		return "", fmt.Errorf("realcli: %s --version says %q, but %s is pinned at %s: run scripts/setup", bin, strings.TrimSpace(string(out.Stdout)), pkg, want)
	}
	return bin, nil
}

// Harness is a network namespace, the directory the CLIs run in, and,
// once Serve has started it, a fake model server in the namespace. Start
// makes one; the test's cleanup ends it.
type Harness struct {
	NS *Namespace
	// Dir is the harness's temporary directory: each CLI's home and
	// workspace are below it, known before the server starts (a script
	// names the files its calls write).
	Dir string
	// Server is the fake model server, nil until Serve.
	Server *fakemodel.Server
}

// Start makes a namespace that ends with the test.
func Start(tb testing.TB) *Harness {
	tb.Helper()
	ns, err := NewNamespace()
	if err != nil {
		tb.Fatalf("realcli: %v", err)
	}
	h := &Harness{NS: ns, Dir: tb.TempDir()}
	tb.Cleanup(func() {
		if h.Server != nil {
			if err := h.Server.Close(); err != nil {
				tb.Errorf("close the fake model server: %v", err)
			}
		}
		ns.Close()
	})
	return h
}

// Serve starts the fake model server with cfg in the namespace; the CLIs
// set up on the harness use it from their next prompt on.
func (h *Harness) Serve(tb testing.TB, cfg fakemodel.Config) *fakemodel.Server {
	tb.Helper()
	if h.Server != nil {
		tb.Fatal("realcli: the harness already serves")
	}
	l, err := h.NS.Listen()
	if err != nil {
		tb.Fatalf("realcli: %v", err)
	}
	h.Server = fakemodel.Serve(l, cfg)
	return h.Server
}

// url is the fake server's base URL.
func (h *Harness) url() (string, error) {
	if h.Server == nil {
		return "", errors.New("realcli: no fake model server: call Serve before a prompt")
	}
	return h.Server.URL(), nil
}

// Output is what one run of a CLI printed.
type Output struct {
	Stdout, Stderr []byte
	Took           time.Duration
}

// command is bin with args and env in dir, for the namespace to start:
// its whole process group is killed when ctx ends.
func command(ctx context.Context, dir string, env []string, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs bin with args and env in dir, inside the namespace, and waits
// for it: its whole process group is killed when ctx ends.
func (h *Harness) run(ctx context.Context, dir string, env []string, bin string, args ...string) (Output, error) {
	var stdout, stderr strings.Builder
	cmd := command(ctx, dir, env, bin, args...)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	if err := h.NS.Start(cmd); err != nil {
		return Output{}, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	err := cmd.Wait()
	out := Output{Stdout: []byte(stdout.String()), Stderr: []byte(stderr.String()), Took: time.Since(start)}
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.Stdout, out.Stderr)
	}
	return out, nil
}

// baseEnv is the environment every CLI starts from: a PATH, a shell, a
// UTF-8 locale, and home, nothing else of the test's own environment
// (no API key, no proxy of the machine's).
func baseEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"TMPDIR=" + filepath.Join(home, "tmp"),
	}
}

// mkdirs makes each directory, with its parents.
func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}
