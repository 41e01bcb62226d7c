package bridge

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/adapter/records"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/oteltest"
)

// hostileInputs are a valid input of each adapter, by -agent.
var hostileInputs = map[string]string{
	"claude-code": filepath.Join("..", "..", "..", "testdata", "realcli", "claude-code", "hooks.jsonl"),
	"cursor":      filepath.Join("..", "..", "..", "internal", "adapter", "cursor", "testdata", "session.jsonl"),
	"codex":       filepath.Join("..", "..", "..", "testdata", "realcli", "codex", "rollout-1.jsonl"),
	"skilllite":   filepath.Join(fixtures, "replans.jsonl"),
	"otel":        filepath.Join(fixtures, "replans.jsonl"), // read, then replaced by otelInput
}

// otelInput is generated OTLP JSON lines of 12 sessions.
func otelInput(tb testing.TB) []byte {
	ss := adaptertest.Generate(31, 12, []string{"TodoWrite", "update_plan"}, genStart, true)
	var b bytes.Buffer
	for _, td := range oteltest.Exports(4, ss) {
		line, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// filler is a reader of prefix, then n bytes of 'a' (made as they are
// read, never held), then suffix.
type filler struct {
	prefix, suffix []byte
	n              int64
}

var as = bytes.Repeat([]byte("a"), 64<<10)

func (f *filler) Read(p []byte) (int, error) {
	switch {
	case len(f.prefix) > 0:
		n := copy(p, f.prefix)
		f.prefix = f.prefix[n:]
		return n, nil
	case f.n > 0:
		n := copy(p[:min(int64(len(p)), f.n)], as)
		f.n -= int64(n)
		return n, nil
	case len(f.suffix) > 0:
		n := copy(p, f.suffix)
		f.suffix = f.suffix[n:]
		return n, nil
	}
	return 0, io.EOF
}

// bridgeEvents runs the bridge over stdin and returns its events' ids and
// stderr; allocated is the Go heap it allocated meanwhile.
func bridgeEvents(t *testing.T, agent string, stdin io.Reader, extra ...string) (ids []string, stderr string, allocated uint64) {
	t.Helper()
	var out, errOut bytes.Buffer
	args := append([]string{"-agent", agent, "-out", "-"}, extra...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := run(t.Context(), args, stdin, &out, &errOut); err != nil {
		t.Fatalf("run(%q): %v\n%s", args, err, tail(errOut.String()))
	}
	runtime.ReadMemStats(&after)
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if i := strings.Index(line, `"id":"`); i >= 0 {
			ids = append(ids, line[i+6:i+6+strings.IndexByte(line[i+6:], '"')])
		}
	}
	return ids, errOut.String(), after.TotalAlloc - before.TotalAlloc
}

func tail(s string) string { return s[max(0, len(s)-2000):] }

// TestBridgeBadRecordHidesNothing: a truncated, binary or oversized record
// between the two halves of a valid input is skipped, counted as one
// malformed record, and every record after it is read: the events are the
// valid input's (issue 28, rows 9 and 10).
func TestBridgeBadRecordHidesNothing(t *testing.T) {
	rnd := rand.New(rand.NewPCG(28, 28))
	binary := make([]byte, 4096)
	for i := range binary {
		if binary[i] = byte(rnd.UintN(256)); binary[i] == '\n' {
			binary[i] = 0
		}
	}
	for agent, file := range hostileInputs {
		valid, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if agent == "otel" {
			valid = otelInput(t)
		}
		lines := strings.SplitAfter(string(valid), "\n")
		half := len(lines) / 2
		want, _, _ := bridgeEvents(t, agent, bytes.NewReader(valid))
		for _, bad := range []struct {
			name string
			in   io.Reader
		}{
			{"truncated", strings.NewReader(strings.Join(lines[:half], "") + `{"session_id": "cut", "hook_event_name": "Sto` + "\n" + strings.Join(lines[half:], ""))},
			{"binary", strings.NewReader(strings.Join(lines[:half], "") + string(binary) + "\n" + strings.Join(lines[half:], ""))},
			{"over -max-record", &filler{prefix: []byte(strings.Join(lines[:half], "") + `{"x": "`), n: records.DefaultMax, suffix: []byte("\"}\n" + strings.Join(lines[half:], ""))}},
		} {
			t.Run(agent+"/"+bad.name, func(t *testing.T) {
				got, stderr, _ := bridgeEvents(t, agent, bad.in)
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%d events, want the valid input's %d\n%s", len(got), len(want), tail(stderr))
				}
				if n := strings.Count(stderr, `level=WARN msg="malformed`); n != 1 {
					t.Errorf("%d records reported skipped, want 1\n%s", n, tail(stderr))
				}
			})
		}
	}
}

// TestBridgeUnterminatedRecordBounded: one record of 1 GiB that never
// closes, after a valid input, costs the bridge at most 256 MiB of heap
// (it cost 3.19 GB for claude-code, 6.34 GB for cursor: issue 28, row 8).
func TestBridgeUnterminatedRecordBounded(t *testing.T) {
	for _, agent := range []string{"claude-code", "cursor", "skilllite", "codex", "otel"} {
		t.Run(agent, func(t *testing.T) {
			valid, err := os.ReadFile(hostileInputs[agent])
			if err != nil {
				t.Fatal(err)
			}
			if agent == "otel" {
				valid = otelInput(t)
			}
			want, _, _ := bridgeEvents(t, agent, bytes.NewReader(valid))
			got, stderr, alloc := bridgeEvents(t, agent, &filler{prefix: append(valid, `{"session_id": "`...), n: 1 << 30})
			if len(got) != len(want) {
				t.Errorf("%d events, want %d", len(got), len(want))
			}
			if !strings.Contains(stderr, `level=WARN msg="malformed`) {
				t.Errorf("the record is not reported skipped\n%s", tail(stderr))
			}
			if alloc > 256<<20 {
				t.Errorf("allocated %d MiB reading it, want at most 256", alloc>>20)
			}
			t.Logf("%s: 1 GiB unterminated record: %d MiB allocated", agent, alloc>>20)
		})
	}
}

// TestBridgeRefusesRandomBytes: random bytes make no event and are
// refused (adapter.Unusable), whatever the adapter.
func TestBridgeRefusesRandomBytes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 16<<20)
	for i := range b {
		b[i] = byte(rnd.UintN(256))
	}
	for _, agent := range []string{"otel", "skilllite", "claude-code", "cursor", "codex"} {
		t.Run(agent, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(t.Context(), []string{"-agent", agent, "-out", "-"}, bytes.NewReader(b), &out, &errOut)
			if err == nil || out.Len() != 0 {
				t.Errorf("run = %v with %d bytes out, want an error and nothing\n%s", err, out.Len(), tail(errOut.String()))
			}
		})
	}
}
