package skilllite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// Counts are a Translator's totals.
type Counts struct {
	Lines     int64 // lines read, blank ones included
	Events    int64 // events emitted
	Sessions  int64
	Ignored   int64
	Malformed int64
}

// LineError is a malformed line, reported and skipped: Translator.Line
// returns it, and ReadLines hands it to its caller.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Translator turns agent-rpc lines into events for a sink, keeping the state
// of the stream: the open turn and the tool names seen. Not safe for
// concurrent use.
type Translator struct {
	cfg  Config
	sink agent.Sink
	now  func() time.Time

	tools []string // cfg.Tools, then the names seen
	seen  map[string]bool
	turn  *turn
	at    time.Time // the time of the line being translated
	ts    bool      // whether that line carries a timestamp
	n     Counts
}

// NewTranslator returns a Translator sending the events of cfg's agent to
// sink; now is the clock for lines without a timestamp.
func NewTranslator(cfg Config, sink agent.Sink, now func() time.Time) *Translator {
	t := &Translator{cfg: cfg, sink: sink, now: now, seen: map[string]bool{}}
	for _, name := range cfg.Tools {
		t.see(name)
	}
	return t
}

// turn is the state of one session.
type turn struct {
	s         *agent.Session
	start     time.Time
	planned   bool
	plan      plan
	calls     []*call        // tool calls awaiting their result, in call order
	replan    *replanCall    // the update_task_plan call in progress
	pending   []completion   // task completions waiting for the open calls
	completed map[int64]bool // tasks whose agent.task.completed is out
	taskCalls map[int64]int64
	taskFails map[int64]int64 // failed work calls per task

	replans, toolCalls, failed, iterations int64
}

// Stats returns the totals so far.
func (t *Translator) Stats() Counts { return t.n }

// Line translates line n (from 1) of the input. It returns a *LineError for
// a line it skipped as malformed; any other error comes from the sink.
func (t *Translator) Line(ctx context.Context, n int, raw []byte) error {
	t.n.Lines++
	l, err := parseLine(raw)
	if err != nil {
		t.n.Malformed++
		return &LineError{Line: n, Err: err}
	}
	t.at, t.ts = l.at, !l.at.IsZero()
	if !t.ts {
		t.at = t.now()
	}
	err = t.apply(ctx, l)
	if ee := (*events.Error)(nil); errors.As(err, &ee) {
		// A value the contract cannot carry: a bug of the bridge rather
		// than of the line, but the line is what can be skipped.
		t.n.Malformed++
		return &LineError{Line: n, Err: fmt.Errorf("cannot translate %s: %w", l.name, err)}
	}
	return err
}

// tooLong counts line n, longer than max bytes, as malformed.
func (t *Translator) tooLong(n, max int) error {
	t.n.Lines++
	t.n.Malformed++
	return &LineError{Line: n, Err: fmt.Errorf("longer than %d bytes", max)}
}

// Close ends the open turn, if any, as aborted: the input ended mid-turn.
func (t *Translator) Close(ctx context.Context) error {
	if t.turn == nil {
		return nil
	}
	// The session ends at the last line read, whose time t.at still is.
	return t.end(ctx, events.OutcomeAborted)
}

func (t *Translator) apply(ctx context.Context, l rpcLine) error {
	switch l.kind {
	case kindBlank:
		return nil
	case kindOtherRequest, kindUnknownEvent:
		t.n.Ignored++
		return nil
	case kindChat:
		if t.turn != nil {
			if err := t.end(ctx, events.OutcomeAborted); err != nil {
				return err
			}
		}
		goal, model := l.chat.message, l.chat.model
		if !l.chat.hasMessage {
			goal = "unknown"
		}
		if model == "" {
			model = t.cfg.Model
		}
		return t.begin(ctx, goal, model)
	case kindError:
		if t.turn == nil {
			t.n.Ignored++
			return nil
		}
		return t.end(ctx, events.OutcomeFailure)
	case kindToolCall:
		t.see(l.call.name)
	case kindToolResult:
		t.see(l.res.name)
	}
	if t.turn == nil {
		goal := "unknown"
		if l.kind == kindTaskPlan && len(l.tasks) > 0 && l.tasks[0].Description != "" {
			goal = l.tasks[0].Description
		}
		if err := t.begin(ctx, goal, t.cfg.Model); err != nil {
			return err
		}
	}
	if r := t.turn.replan; r != nil && r.resultSeen && l.kind != kindTaskPlan {
		// An accepted update_task_plan call no task_plan followed.
		if err := t.finishReplan(ctx, ""); err != nil {
			return err
		}
	}
	switch l.kind {
	case kindTaskPlan:
		return t.taskPlan(ctx, l.tasks)
	case kindTaskProgress:
		return t.progress(ctx, l.prog)
	case kindToolCall:
		return t.toolCall(ctx, l.call)
	case kindToolResult:
		return t.toolResult(ctx, l.res)
	default: // kindDone
		return t.done(ctx, l.done)
	}
}

// see records a tool name for the next sessions' tools.
func (t *Translator) see(name string) {
	if name == "" || t.seen[name] {
		return
	}
	t.seen[name] = true
	t.tools = append(t.tools, name)
}

func (t *Translator) emit(ctx context.Context, typ events.Type, data any) error {
	if err := t.turn.s.Emit(ctx, typ, data); err != nil {
		return err
	}
	t.n.Events++
	return nil
}

func (t *Translator) begin(ctx context.Context, goal, model string) error {
	s := agent.NewSession(t.sink, t.cfg.Source, "").WithClock(func() time.Time { return t.at })
	t.turn = &turn{
		s: s, start: t.at,
		completed: map[int64]bool{}, taskCalls: map[int64]int64{}, taskFails: map[int64]int64{},
	}
	t.n.Sessions++
	return t.emit(ctx, events.SessionStarted, agent.SessionStarted{
		Goal: goal, Agent: t.cfg.Agent, AgentVersion: t.cfg.AgentVersion, Model: model,
		Tools: slices.Clone(t.tools),
	})
}

// end settles what is open and ends the turn with outcome.
func (t *Translator) end(ctx context.Context, outcome events.Outcome) error {
	tr := t.turn
	defer func() { t.turn = nil }()
	if tr.replan != nil {
		if err := t.finishReplan(ctx, "no tool_result before the turn ended"); err != nil {
			return err
		}
	}
	for len(tr.calls) > 0 {
		c := tr.calls[0]
		tr.calls = tr.calls[1:]
		if err := t.emitCall(ctx, c, noResult("no tool_result before the turn ended")); err != nil {
			return err
		}
	}
	if err := t.drain(ctx); err != nil {
		return err
	}
	return t.emit(ctx, events.SessionEnded, agent.SessionEnded{
		Outcome: outcome, Replans: tr.replans, ToolCalls: tr.toolCalls, FailedToolCalls: tr.failed,
		Iterations: tr.iterations, DurationMS: max(0, t.at.Sub(tr.start).Milliseconds()),
	})
}
