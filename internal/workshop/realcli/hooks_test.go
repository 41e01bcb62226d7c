package realcli

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestHookScriptLines: hooks running in parallel with inputs far longer
// than a pipe buffer still append one whole line each.
func TestHookScriptLines(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "hooks.jsonl")
	if _, err := writeHooks(dir, log, []string{"PostToolUse"}); err != nil {
		t.Fatal(err)
	}
	// All started before any gets its input, so that they write at once.
	const n = 64
	cmds := make([]*exec.Cmd, n)
	stdins := make([]io.WriteCloser, n)
	for i := range n {
		cmds[i] = exec.Command(filepath.Join(dir, "evosignal-hook.sh"), log)
		w, err := cmds[i].StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdins[i] = w
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(stdins[i], `{"n":%d,"pad":%q}`, i, strings.Repeat(fmt.Sprint(i%10), 200_000))
			stdins[i].Close()
		}()
	}
	wg.Wait()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("hook %d: %v", i, err)
		}
	}
	recs, err := ReadJSONLines[HookRecord](log)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, r := range recs {
		var in struct{ N int }
		if err := json.Unmarshal(r.Hook, &in); err != nil {
			t.Fatal(err)
		}
		seen[in.N] = true
	}
	if len(recs) != n || len(seen) != n {
		t.Errorf("%d lines of %d hooks, want %d", len(recs), len(seen), n)
	}
}
