package bridge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// maxBridgeRSS is the most RSS the bridge may reach on input that never
// ends its sessions (issue 28, row 11).
const maxBridgeRSS = 256 << 20

// neverEnding writes n Claude Code sessions to w as hook log lines, made as
// they are written: each a SessionStart, a UserPromptSubmit and a
// PostToolUse, and never a SessionEnd or Stop.
func neverEnding(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	for i := range n {
		ts := t0.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano)
		sid := fmt.Sprintf("0000%04x-rss0-4000-8000-%012x", i>>16, i)
		fmt.Fprintf(bw, `{"time":%q,"hook":{"session_id":%q,"cwd":"/work","hook_event_name":"SessionStart","source":"startup"}}`+"\n", ts, sid)
		fmt.Fprintf(bw, `{"time":%q,"hook":{"session_id":%q,"cwd":"/work","prompt_id":"p%d","hook_event_name":"UserPromptSubmit","prompt":"Read the config and count the files."}}`+"\n", ts, sid, i)
		if _, err := fmt.Fprintf(bw, `{"time":%q,"hook":{"session_id":%q,"cwd":"/work","prompt_id":"p%d","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/work/config.toml"},"tool_response":{"type":"text","file":{"filePath":"/work/config.toml","content":"port = 8080"}},"tool_use_id":"toolu_%d","duration_ms":3}}`+"\n", ts, sid, i, i); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// bridgeNeverEnding runs cmd/bridge -agent claude-code at its defaults
// over sessions never-ending sessions piped to its stdin, and returns the
// events it wrote, its stderr and its peak RSS in bytes.
func bridgeNeverEnding(tb testing.TB, sessions int) (events int, stderr string, peak int64) {
	tb.Helper()
	bin := testkit.BuildCmd(tb, "./cmd/bridge")
	cmd := exec.Command(bin, "-agent", "claude-code", "-out", "-")
	cmd.Env = testkit.DefaultEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var errOut testkit.SyncBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer cmd.Process.Kill()
	// VmHWM, read while the bridge runs (it only grows): ru_maxrss at
	// exit would not do, as the child of a vfork+exec has the test
	// process's own peak in it (a race-built test binary after many tests).
	var hwm atomic.Int64
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if v, err := testkit.PeakRSS(cmd.Process.Pid); err == nil {
				hwm.Store(max(hwm.Load(), v))
			}
			select {
			case <-stopSampling:
				return
			case <-t.C:
			}
		}
	}()
	wrote := make(chan error, 1)
	go func() {
		err := neverEnding(stdin, sessions)
		stdin.Close()
		wrote <- err
	}()
	buf := make([]byte, 1<<20)
	for {
		k, err := stdout.Read(buf)
		events += bytes.Count(buf[:k], []byte("\n"))
		if err != nil {
			break
		}
	}
	close(stopSampling)
	<-sampled
	if err := <-wrote; err != nil {
		tb.Fatalf("writing the sessions: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("bridge: %v\n%s", err, tail(errOut.String()))
	}
	return events, errOut.String(), hwm.Load()
}

// TestBridgeRSSNeverEndingSessions (row 11): cmd/bridge -agent claude-code
// at its defaults, over 250,000 sessions that never end (25 times
// adapter.DefaultMaxOpen), keeps DefaultMaxOpen of them open, drops the
// rest as abandoned, and stays under maxBridgeRSS (the old code held them
// all: 1.34 GB for 1M, 1.4 KB a session). The 1M sessions take
// 90 s here: BenchmarkBridgeRSSNeverEndingSessions.
func TestBridgeRSSNeverEndingSessions(t *testing.T) {
	const sessions = 250_000
	t0 := time.Now()
	n, stderr, peak := bridgeNeverEnding(t, sessions)
	t.Logf("row 11: %d never-ending sessions (%d hook lines) in %s: %d events out; peak RSS %d MiB",
		sessions, 3*sessions, time.Since(t0).Round(time.Millisecond), n, peak>>20)
	if want := fmt.Sprintf("%d sessions were still open when -max-open newer ones had begun and were dropped as abandoned", sessions-adapter.DefaultMaxOpen); !strings.Contains(stderr, want) {
		t.Errorf("the bridge does not say %q:\n%s", want, tail(stderr))
	}
	// A session start and a tool call each; the prompt makes no event.
	if n != 2*sessions {
		t.Errorf("%d events out, want %d", n, 2*sessions)
	}
	if peak == 0 || peak > maxBridgeRSS {
		t.Errorf("peak RSS %d MiB, want at most %d MiB", peak>>20, maxBridgeRSS>>20)
	}
}

// BenchmarkBridgeRSSNeverEndingSessions is row 11 at the size:
// 1,000,000 never-ending sessions through cmd/bridge at its defaults; it
// reports the bridge's peak RSS (peak-RSS-MiB) and its rate.
//
//	go test -run '^$' -bench BridgeRSSNeverEndingSessions -benchtime 1x ./internal/app/bridge
func BenchmarkBridgeRSSNeverEndingSessions(b *testing.B) {
	const sessions = 1_000_000
	var peak int64
	for b.Loop() {
		_, _, p := bridgeNeverEnding(b, sessions)
		peak = max(peak, p)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(sessions)*float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
}
