package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// following is a bridge -follow running in the background.
type following struct {
	cancel context.CancelFunc
	done   chan error
	stderr *testkit.SyncBuffer
}

func startFollow(tb testing.TB, args ...string) *following {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &following{cancel: cancel, done: make(chan error, 1), stderr: &testkit.SyncBuffer{}}
	go func() { f.done <- run(ctx, args, nil, &bytes.Buffer{}, f.stderr) }()
	tb.Cleanup(func() { f.stop(tb) })
	return f
}

// stop interrupts the bridge and waits for it; it returns its stderr.
func (f *following) stop(tb testing.TB) string {
	tb.Helper()
	if f.done == nil {
		return f.stderr.String()
	}
	f.cancel()
	err := <-f.done
	f.done = nil
	if err != nil {
		tb.Errorf("bridge -follow = %v\n%s", err, f.stderr.String())
	}
	return f.stderr.String()
}

// bridged is the events bridge makes of in (a file or directory) in one
// ordinary run, to its end: their JSON lines, sorted.
func bridged(tb testing.TB, in string) []string {
	tb.Helper()
	return bridgedAs(tb, "codex", in)
}

// bridgedAs is bridged for -agent agent.
func bridgedAs(tb testing.TB, agent, in string) []string {
	tb.Helper()
	var out, errOut bytes.Buffer
	if err := run(tb.Context(), []string{"-agent", agent, "-source", agent + "/bridge/test", "-in", in, "-out", "-"}, nil, &out, &errOut); err != nil {
		tb.Fatalf("bridge -in %s: %v\n%s", in, err, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// lines splits b after each newline.
func lines(b []byte) [][]byte {
	ls := bytes.SplitAfter(b, []byte("\n"))
	if len(ls[len(ls)-1]) == 0 {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// waitMsgs waits until the stream holds want messages; it fails the test
// after a while, saying what the bridge logged.
func waitMsgs(tb testing.TB, s jetstream.Stream, want uint64, f *following) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := s.Info(tb.Context())
		if err != nil {
			tb.Fatal(err)
		}
		if info.State.Msgs == want {
			return
		}
		if info.State.Msgs > want || time.Now().After(deadline) {
			tb.Fatalf("the stream holds %d messages, want %d\n%s", info.State.Msgs, want, f.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stored is the bodies of every message of the stream, sorted.
func stored(tb testing.TB, s jetstream.Stream) []string {
	tb.Helper()
	info, err := s.Info(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	var got []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(tb.Context(), seq)
		if err != nil {
			tb.Fatal(err)
		}
		got = append(got, string(m.Data))
	}
	slices.Sort(got)
	return got
}

func appendFile(tb testing.TB, name string, parts ...[]byte) {
	tb.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range parts {
		if _, err := f.Write(p); err != nil {
			tb.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// stateEvents is the events the state file says were published, 0 while
// it is not written.
func stateEvents(tb testing.TB, name string) int64 {
	tb.Helper()
	b, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	var st followState
	if err := json.Unmarshal(b, &st); err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, e := range st.Files {
		n += e.Events
	}
	return n
}

// TestFollowCodex follows a Codex sessions directory while the real
// rollouts are appended to it in chunks (a partial last line among them)
// and a second rollout appears; the bridge is then stopped, more is
// appended, and it is started again on the same -state. Every event a
// single bridge of the finished files makes is in the stream exactly once:
// the stream's duplicate window is JetStream's least, 100ms, and the
// restart comes after it, so a restart that sent anything again would show. "crash" restarts from the state saved while
// files were being read (as after a kill), not the one saved at the stop.
func TestFollowCodex(t *testing.T) {
	a, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "realcli", "codex", "rollout-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "realcli", "codex-code-mode", "rollout-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	la := lines(a)
	const k1, k2 = 30, 60
	partial := len(la[k1]) / 2
	prefix := func(tb testing.TB, k int) string {
		name := filepath.Join(tb.TempDir(), "rollout-prefix.jsonl")
		appendFile(tb, name, bytes.Join(la[:k], nil))
		return name
	}

	for _, crash := range []bool{false, true} {
		name := "clean stop"
		if crash {
			name = "crash"
		}
		t.Run(name, func(t *testing.T) {
			srv, _, js := testkit.Embedded(t)
			cfg := bus.DefaultStream()
			cfg.Duplicates = 100 * time.Millisecond
			stream, err := bus.EnsureStream(t.Context(), js, cfg)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			day := filepath.Join(root, "2026", "12", "01")
			if err := os.MkdirAll(day, 0o755); err != nil {
				t.Fatal(err)
			}
			fa, fb := filepath.Join(day, "rollout-a.jsonl"), filepath.Join(root, "2026", "12", "02", "rollout-b.jsonl")
			state := filepath.Join(t.TempDir(), "follow.json")
			args := []string{"-agent", "codex", "-source", "codex/bridge/test", "-in", root, "-follow", "-poll", "10ms",
				"-state", state, "-nats", srv.ClientURL(), "-log-level", "debug"}

			appendFile(t, fa, bytes.Join(la[:k1], nil), la[k1][:partial])
			f1 := startFollow(t, args...)
			waitMsgs(t, stream, uint64(len(bridged(t, prefix(t, k1)))), f1)

			// the partial line completed, more lines, a new rollout in a new directory
			appendFile(t, fa, la[k1][partial:], bytes.Join(la[k1+1:k2], nil))
			if err := os.MkdirAll(filepath.Dir(fb), 0o755); err != nil {
				t.Fatal(err)
			}
			appendFile(t, fb, b)
			want := uint64(len(bridged(t, prefix(t, k2))) + len(bridged(t, fb)))
			waitMsgs(t, stream, want, f1)
			var saved []byte
			if crash {
				deadline := time.Now().Add(30 * time.Second)
				for stateEvents(t, state) != int64(want) {
					if time.Now().After(deadline) {
						t.Fatalf("the state never recorded the %d events published", want)
					}
					time.Sleep(5 * time.Millisecond)
				}
				if saved, err = os.ReadFile(state); err != nil {
					t.Fatal(err)
				}
			}
			log1 := f1.stop(t)
			if crash {
				if !strings.Contains(string(saved), `"settled": false`) {
					t.Errorf("the state saved while reading has no file being read:\n%s", saved)
				}
				if err := os.WriteFile(state, saved, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			appendFile(t, fa, bytes.Join(la[k2:], nil))
			time.Sleep(2 * cfg.Duplicates) // what run 1 published is out of the window
			f2 := startFollow(t, args...)
			all := bridged(t, root)
			waitMsgs(t, stream, uint64(len(all)), f2)
			time.Sleep(100 * time.Millisecond) // ten polls more: nothing else comes
			log2 := f2.stop(t)
			if got := stored(t, stream); !slices.Equal(got, all) {
				t.Errorf("the stream holds %d events, want the %d of one bridge of the files, each once", len(got), len(all))
			}
			for i, log := range []string{log1, log2} {
				if strings.Contains(log, "level=WARN") || !strings.Contains(log, " malformed=0") {
					t.Errorf("run %d warned, or read a malformed line (the partial one?):\n%s", i+1, log)
				}
			}
			for _, w := range []string{"file resumed", "skipped_as_sent_before="} {
				if !strings.Contains(log2, w) {
					t.Errorf("the restarted bridge's log lacks %q:\n%s", w, log2)
				}
			}
		})
	}
}

// TestFollowClaudeCodeTranscript follows a ~/.claude/projects tree while
// the real transcript is appended to it in chunks: cut inside the first
// request (a partial line among them), between the two runs, and the rest
// after a restart on the same -state. The stream ends up holding exactly
// the events one ordinary bridge of the finished file makes: a request
// ends at its final answer, which a growing transcript writes once, and
// nothing waits for an end of input that never comes.
func TestFollowClaudeCodeTranscript(t *testing.T) {
	tx, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "realcli", "claude-code", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lt := lines(tx)
	const k1, k2 = 50, 95 // inside request 1; after its end, before request 2's end
	partial := len(lt[k1]) / 2
	prefix := func(tb testing.TB, k int) string {
		name := filepath.Join(tb.TempDir(), "prefix.jsonl")
		appendFile(tb, name, bytes.Join(lt[:k], nil))
		return name
	}
	srv, _, js := testkit.Embedded(t)
	cfg := bus.DefaultStream()
	cfg.Duplicates = 100 * time.Millisecond
	stream, err := bus.EnsureStream(t.Context(), js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	project := filepath.Join(root, "-tmp-workspace")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(project, "4299a734-e256-4bb4-bd3b-fa91b82a26c3.jsonl")
	args := []string{"-agent", "claude-code", "-source", "claude-code/bridge/test", "-in", root, "-follow", "-poll", "10ms",
		"-state", filepath.Join(t.TempDir(), "follow.json"), "-nats", srv.ClientURL(), "-log-level", "debug"}

	appendFile(t, file, bytes.Join(lt[:k1], nil), lt[k1][:partial])
	f1 := startFollow(t, args...)
	waitMsgs(t, stream, uint64(len(bridgedAs(t, "claude-code", prefix(t, k1)))), f1)
	appendFile(t, file, lt[k1][partial:], bytes.Join(lt[k1+1:k2], nil))
	waitMsgs(t, stream, uint64(len(bridgedAs(t, "claude-code", prefix(t, k2)))), f1)
	log1 := f1.stop(t)

	appendFile(t, file, bytes.Join(lt[k2:], nil))
	time.Sleep(2 * cfg.Duplicates) // what run 1 published is out of the window
	f2 := startFollow(t, args...)
	all := bridgedAs(t, "claude-code", root)
	waitMsgs(t, stream, uint64(len(all)), f2)
	time.Sleep(100 * time.Millisecond) // ten polls more: nothing else comes
	log2 := f2.stop(t)
	if got := stored(t, stream); !slices.Equal(got, all) {
		t.Errorf("the stream holds %d events, want the %d of one bridge of the file, each once", len(got), len(all))
	}
	for i, log := range []string{log1, log2} {
		if strings.Contains(log, "level=WARN") || !strings.Contains(log, " malformed=0") {
			t.Errorf("run %d warned, or read a malformed line (the partial one?):\n%s", i+1, log)
		}
	}
}

// TestFollowAdopt: a file the state knows is resumed where the last run
// left it only while it is still that file: one truncated (shorter than
// the offset read) or replaced (its first bytes differ) is read as new,
// all its events sent.
func TestFollowAdopt(t *testing.T) {
	root := t.TempDir()
	content := []byte("{\"first\": 1}\n{\"second\": 2}\n")
	n := int64(len(content))
	name := filepath.Join(root, "rollout-x.jsonl")
	appendFile(t, name, content)
	head, err := headOf(name, n)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		now    []byte // the file at the restart
		entry  followedFile
		events int64 // sent before, as adopted
	}{
		{"same file", content, followedFile{Offset: n, Head: head, HeadLen: n, Events: 7, Settled: true}, 7},
		{"grown", append(slices.Clip(content), "{\"third\": 3}\n"...), followedFile{Offset: n, Head: head, HeadLen: n, Events: 7, Settled: true}, 7},
		{"truncated", content[:10], followedFile{Offset: n, Head: head, HeadLen: n, Events: 7, Settled: true}, 0},
		{"replaced", bytes.ToUpper(content), followedFile{Offset: n, Head: head, HeadLen: n, Events: 7, Settled: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(name, tt.now, 0o644); err != nil {
				t.Fatal(err)
			}
			var log testkit.SyncBuffer
			f := &follower{root: root, log: slog.New(slog.NewTextHandler(&log, nil)), prior: map[string]followedFile{"rollout-x.jsonl": tt.entry}}
			got := f.adopt(name)
			if got.sent != tt.events || got.key != "rollout-x.jsonl" {
				t.Errorf("adopt(%s) = key %q, %d events sent before, want %q, %d\n%s", tt.name, got.key, got.sent, "rollout-x.jsonl", tt.events, log.String())
			}
			if replaced := strings.Contains(log.String(), "truncated or replaced"); replaced != (tt.events == 0) {
				t.Errorf("adopt(%s) logged %q", tt.name, log.String())
			}
		})
	}
}
