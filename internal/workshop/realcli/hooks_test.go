package realcli

import (
	"encoding/json"
	"fmt"
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
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			input := fmt.Sprintf(`{"n":%d,"pad":%q}`, i, strings.Repeat(fmt.Sprint(i), 50_000))
			cmd := exec.Command(filepath.Join(dir, "evosignal-hook.sh"), log)
			cmd.Stdin = strings.NewReader(input)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("hook %d: %v: %s", i, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
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
