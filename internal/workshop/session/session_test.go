package session

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// The Recorder numbers the calls and lays them out as it says: each starts
// 1–3 s after the previous one ended and lasts 0.1–1 s; the session ends
// 1–3 s after the last.
func TestRecorder(t *testing.T) {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s := Session{Start: start}
	r := Record(rand.New(rand.NewPCG(1, 2)), &s)
	for range 50 {
		r.Call(Step{Tool: "Read", OK: true})
	}
	r.End()
	prev := start
	for i, st := range s.Steps {
		if want := fmt.Sprintf("call_%04d", i+1); st.ID != want {
			t.Fatalf("step %d: id %q, want %q", i, st.ID, want)
		}
		if gap := st.At.Sub(prev); gap < time.Second || gap >= 3*time.Second {
			t.Errorf("step %d starts %v after the previous one ended, want [1s, 3s)", i, gap)
		}
		if st.Dur < 100*time.Millisecond || st.Dur >= time.Second {
			t.Errorf("step %d lasts %v, want [100ms, 1s)", i, st.Dur)
		}
		prev = st.At.Add(st.Dur)
	}
	if gap := s.End.Sub(prev); gap < time.Second || gap >= 3*time.Second {
		t.Errorf("the session ends %v after its last call, want [1s, 3s)", gap)
	}
}

// withTruth is a generator's session: the model with a truth beside it.
type withTruth struct {
	Session
	Replans int64
}

// A renderer draws a generator's session as it draws the Session it embeds.
func TestRenderersTakeEmbedding(t *testing.T) {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s := Session{ID: "0000002a-0000-4000-8000-000000000000", Agent: "a", Model: "m", Goal: "g", Start: start}
	r := Record(rand.New(rand.NewPCG(3, 4)), &s)
	r.Call(Step{Tool: "TodoWrite", Args: []byte(`{"todos":[]}`), OK: true, Plan: true})
	r.Call(Step{Tool: "Bash", OK: false, Err: "exit status 1"})
	r.End()
	plain := ClaudeCodeHooks([]Session{s, s})
	embedded := ClaudeCodeHooks([]withTruth{{Session: s, Replans: 1}, {Session: s}})
	if !bytes.Equal(plain, embedded) {
		t.Errorf("ClaudeCodeHooks of an embedding type:\n%s\nwant\n%s", embedded, plain)
	}
	if n := bytes.Count(plain, []byte("\n")); n != 2*(2+2*2+3) {
		t.Errorf("%d hook lines for two sessions of two calls, want %d", n, 2*(2+2*2+3))
	}
}
