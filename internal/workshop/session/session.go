// Package session is the one model of a generated foreign-agent session —
// what the agent did, step by step, in time — that the renderers turn into
// a wire format: Claude Code hook inputs (ClaudeCodeHooks here), OTLP spans
// (internal/workshop/oteltest). A generator builds Sessions with a Recorder
// and keeps its own truth beside them, in a type that embeds Session
// (adaptertest.GenSession); the renderers take either (Source), so that a
// new renderer serves every generator and a new generator every renderer.
//
// The model holds what the envelopes have in common; what the agent wrote
// (a plan tool's arguments, a file edit) is already in its dialect in
// Step.Args. The simulators do not use it: sim drives the reference planner
// and synth evosignal's own agent.Session, and rpcsim simulates SkillLite's
// execution loop (skipped calls, refusals, results it does not repeat);
// what they emit is what their model decides, not a rendering of steps.
package session

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Session is one generated session.
type Session struct {
	ID           string // the session (conversation) id, a UUID
	Agent, Model string
	Goal         string // the user's prompt
	Start, End   time.Time
	Failed       bool // the agent run failed (OTLP: invoke_agent status error)
	Steps        []Step

	// What one envelope says of a session and the others do not.
	Conversation bool // OTLP: the spans carry gen_ai.conversation.id
	StopOnly     bool // Claude Code: the session stops but never gets SessionEnd
}

// Step is one tool call of a generated session.
type Step struct {
	At   time.Time
	Dur  time.Duration
	Tool string
	ID   string // tool call id
	Args []byte // the call's arguments; nil when not captured
	OK   bool
	Err  string // what the tool said when it failed
	Plan bool   // a plan-tool or plan-file call
}

// Source is what the renderers take: a Session, or a generator's session
// type that embeds one beside its truth.
type Source interface {
	// Script is the Session (embedding promotes it).
	Script() Session
}

// Script returns s.
func (s Session) Script() Session { return s }

var _ Source = Session{}

// Recorder appends tool calls to a session in time, drawing from the
// generator's random source: each call starts 1–3 s after the previous one
// ended (the first after the session's start) and lasts 0.1–1 s, and the
// calls are numbered call_0001, call_0002, …
type Recorder struct {
	rng   *rand.Rand
	s     *Session
	at    time.Time
	calls int
}

// Record returns a Recorder of s, which must have its Start.
func Record(rng *rand.Rand, s *Session) *Recorder {
	return &Recorder{rng: rng, s: s, at: s.Start}
}

func (r *Recorder) next() time.Time {
	r.at = r.at.Add(time.Duration(1000+r.rng.IntN(2000)) * time.Millisecond)
	return r.at
}

// Call appends st with its time, duration and id.
func (r *Recorder) Call(st Step) {
	r.calls++
	st.At, st.Dur = r.next(), time.Duration(100+r.rng.IntN(900))*time.Millisecond
	st.ID = fmt.Sprintf("call_%04d", r.calls)
	r.at = st.At.Add(st.Dur)
	r.s.Steps = append(r.s.Steps, st)
}

// End ends the session 1–3 s after its last call.
func (r *Recorder) End() { r.s.End = r.next() }
