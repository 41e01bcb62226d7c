package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
	buildDir   string
)

// BuildCmd builds the command package pkg (e.g. "./cmd/ingest", relative to
// the module root) once per test binary and returns the executable's path.
func BuildCmd(tb testing.TB, pkg string) string {
	tb.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := buildCache[pkg]; ok {
		return p
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "evosignal-bin-")
		if err != nil {
			tb.Fatal(err)
		}
		buildDir = d
	}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		tb.Fatalf("find module root: %v", err)
	}
	out := filepath.Join(buildDir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = strings.TrimSpace(string(root))
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	buildCache[pkg] = out
	return out
}
