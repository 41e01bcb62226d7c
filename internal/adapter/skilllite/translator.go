package skilllite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// Counts are a Translator's totals.
type Counts struct {
	Lines     int64 // lines read, blank ones included
	Events    int64 // events emitted
	Sessions  int64
	Ignored   int64
	Malformed int64
	// PlainAnswers are turns that ended with neither a task nor a tool call:
	// the agent answered in text. They are not sessions (see doc.go).
	PlainAnswers int64
	// Skipped are tool calls SkillLite skipped, not executed, after a task
	// transition in the same batch: not tool calls.
	Skipped int64
	// Suppressed are tool calls whose tool_result SkillLite did not emit, as
	// a duplicate of an earlier one in the turn.
	Suppressed int64
	// CountMismatches are turns whose done line gives a tool_calls count
	// other than the bridge's (data quality: the two should agree).
	CountMismatches int64
	// Quality counts the plan-file operations that were not read as plans
	// (planfile.go); its Notes are the data-quality sentences.
	Quality foreign.Quality
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
	cfg     Config
	sink    agent.Sink
	now     func() time.Time
	dialect plandialect.Dialect
	reg     *plandialect.Registry
	files   *plandialect.Files

	tools []string // cfg.Tools, then the names seen
	seen  map[string]bool
	turn  *turn
	at    time.Time // the time of the line being translated
	ts    bool      // whether that line carries a timestamp
	line  int       // that line's number
	n     Counts
}

// NewTranslator returns a Translator sending the events of cfg's agent to
// sink; now is the clock for lines without a timestamp. cfg.Files must be
// valid (Config.Validate checks it).
func NewTranslator(cfg Config, sink agent.Sink, now func() time.Time) *Translator {
	if cfg.DepthLimit <= 0 {
		cfg.DepthLimit = DefaultDepthLimit
	}
	reg, err := plandialect.New(plandialect.Config{
		Tools: map[string]string{"update_task_plan": plandialect.SkillLite}, SoftCap: replanCap,
		RewordThreshold: plandialect.DefaultConfig().RewordThreshold,
	})
	if err != nil {
		panic(fmt.Sprintf("skilllite: plan dialect registry: %v", err)) // a constant configuration
	}
	d, _ := reg.Lookup("update_task_plan")
	files, err := plandialect.NewFiles(cfg.files())
	if err != nil {
		panic(fmt.Sprintf("skilllite: %v (Config.Validate reports it)", err))
	}
	t := &Translator{cfg: cfg, sink: sink, now: now, seen: map[string]bool{}, reg: reg, dialect: d, files: files}
	for _, name := range cfg.Tools {
		t.see(name)
	}
	return t
}

// Stats returns the totals so far.
func (t *Translator) Stats() Counts { return t.n }

// Line translates line n (from 1) of the input. It returns a *LineError for
// a line it skipped as malformed; any other error comes from the sink.
func (t *Translator) Line(ctx context.Context, n int, raw []byte) error {
	t.n.Lines++
	t.line = n
	l, err := parseLine(raw)
	if err != nil {
		t.n.Malformed++
		return &LineError{Line: n, Err: err}
	}
	if l.at.IsZero() {
		t.transcriptTime(&l)
	}
	t.at, t.ts = l.at, !l.at.IsZero()
	if !t.ts {
		t.at = t.now()
	}
	l.raw = bytes.TrimSpace(raw)
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
	return t.end(ctx, events.OutcomeAborted, endCut)
}

func (t *Translator) apply(ctx context.Context, l rpcLine) error {
	switch l.kind {
	case kindBlank:
		return nil
	case kindOtherRequest, kindUnknownEvent:
		t.n.Ignored++
		if t.turn != nil {
			t.turn.hash.add(l.raw)
		}
		return nil
	case kindChat:
		if t.turn != nil {
			if err := t.end(ctx, events.OutcomeAborted, endCut); err != nil {
				return err
			}
		}
		t.begin(l.chat.model)
		t.turn.hash.add(l.raw)
		t.turn.goal, t.turn.hasGoal = l.chat.message, l.chat.hasMessage
		t.turn.sessionKey = l.chat.sessionKey
		return nil
	case kindError:
		if t.turn == nil {
			t.n.Ignored++
			return nil
		}
		t.turn.hash.add(l.raw)
		return t.end(ctx, events.OutcomeFailure, endError)
	case kindToolCall:
		t.see(l.call.name)
	case kindToolResult:
		t.see(l.res.name)
	}
	if t.turn == nil {
		t.begin("")
	}
	t.turn.hash.add(l.raw)
	switch l.kind {
	case kindTaskPlan:
		return t.taskPlan(l.tasks)
	case kindTaskProgress:
		return t.progress(l.prog)
	case kindToolCall:
		return t.toolCall(l.call)
	case kindToolResult:
		return t.toolResult(l.res)
	case kindLLMUsage:
		t.endBatch()
		t.modelCall(l.usage)
		return nil
	default: // kindDone
		if d := l.done; d.toolCalls >= 0 {
			t.turn.agentToolCalls = d.toolCalls
		}
		t.turn.completionType = l.done.completionType
		return t.end(ctx, outcomeOf(l.done, t.turn.track.Plan()), endDone)
	}
}

// see records a tool name for the sessions' tools.
func (t *Translator) see(name string) {
	if name == "" || t.seen[name] {
		return
	}
	t.seen[name] = true
	t.tools = append(t.tools, name)
}

// transcriptTime gives a tool_call or tool_result line the time the
// transcripts hold for it.
func (t *Translator) transcriptTime(l *rpcLine) {
	switch l.kind {
	case kindToolCall:
		if c, ok := t.cfg.Transcripts.Lookup(l.call.id, l.call.name); ok {
			l.at = c.Called
		}
	case kindToolResult:
		if c, ok := t.cfg.Transcripts.Lookup(l.res.id, l.res.name); ok {
			l.at, l.res.elapsedMS = c.Returned, c.ElapsedMS
		}
	}
}

// record queues an event of the open turn, made now; a turn's events are
// sent when it ends, under ids derived from its content.
func (t *Translator) record(typ events.Type, data any) {
	t.turn.out = append(t.turn.out, pending{typ: typ, data: data, at: t.at, known: t.ts})
}

func (t *Translator) begin(model string) {
	if model == "" {
		model = t.cfg.Model
	}
	t.turn = newTurn(t.reg.NewTracker(), t.at, model)
	t.turn.startKnown = t.ts
}

// endKind is how a turn ended.
type endKind int

const (
	endDone  endKind = iota // a done line
	endError                // an error line
	endCut                  // the input ended, or a new request came
)

// end settles what is open and sends the turn's events, ended with outcome.
func (t *Translator) end(ctx context.Context, outcome events.Outcome, how endKind) error {
	tr := t.turn
	defer func() { t.turn = nil }()
	if c := tr.open; c != nil {
		if how == endCut {
			// The input stopped mid-call: the result is not known.
			r := noResult("no tool_result before the turn ended")
			t.settle(c, &r)
		} else {
			t.settle(c, nil)
		}
	}
	t.endBatch()
	t.drain()
	if how == endDone && tr.agentToolCalls >= 0 && tr.agentToolCalls != tr.toolCalls {
		t.n.CountMismatches++
	}
	plain := how == endDone && !tr.hasTasks && !tr.anyCall
	if how == endDone && t.cfg.OnTurn != nil {
		t.cfg.OnTurn(t.turnCounts(plain))
	}
	if plain {
		t.n.PlainAnswers++
		return nil
	}
	return t.flush(ctx, outcome)
}

// turnCounts are the open turn's figures, ended by a done line.
func (t *Translator) turnCounts(plain bool) TurnCounts {
	tr := t.turn
	c := TurnCounts{
		Line: t.line, SessionKey: tr.sessionKey, AgentToolCalls: tr.agentToolCalls,
		CompletionType: tr.completionType, ToolCalls: tr.toolCalls, Failed: tr.failed,
		Replans: tr.counted,
	}
	if !plain {
		c.Session = tr.hash.sessionID()
	}
	// SkillLite's task_completed is about its own list, which has no task
	// while a plan file is the session's plan.
	plan := tr.track.Plan()
	c.TaskCompleted = tr.source != sourceFile && len(plan) > 0 && !slices.ContainsFunc(plan, func(task plandialect.Task) bool { return !task.Done() })
	if tr.startKnown {
		c.End = tr.start
	}
	for _, p := range tr.out {
		if p.known && p.at.After(c.End) {
			c.End = p.at
		}
	}
	if t.ts && t.at.After(c.End) {
		c.End = t.at
	}
	return c
}

// flush sends the session's events.
func (t *Translator) flush(ctx context.Context, outcome events.Outcome) error {
	tr := t.turn
	goal := "unknown"
	switch {
	case tr.hasGoal:
		goal = tr.goal
	case len(tr.firstTasks) > 0 && tr.firstTasks[0].Description != "":
		goal = tr.firstTasks[0].Description
	}
	sd := agent.SessionStarted{
		Goal: goal, Agent: t.cfg.Agent, AgentVersion: t.cfg.AgentVersion, Model: tr.model,
		Tools: slices.Clone(t.tools),
	}
	if t.cfg.Workspace != "" {
		wa, err := ReadAssignment(t.cfg.Workspace)
		if err != nil {
			return err
		}
		if wa != nil {
			a := wa.Assignment
			a.Rules = slices.Clone(a.Rules)
			sd.Ruleset, sd.Rules, sd.Assignment = wa.Ruleset, slices.Clone(wa.Rules), &a
		}
	}
	started := pending{typ: events.SessionStarted, at: tr.start, known: tr.startKnown, data: sd}
	ended := pending{typ: events.SessionEnded, at: t.at, known: t.ts}
	session := tr.hash.sessionID()
	all := append(append([]pending{started}, tr.out...), ended)
	fillTimes(all)
	ended.at = all[len(all)-1].at
	all[len(all)-1].data = agent.SessionEnded{
		Outcome: outcome, Replans: tr.attempts, ToolCalls: tr.toolCalls, FailedToolCalls: tr.failed,
		Iterations: tr.iterations, DurationMS: max(0, ended.at.Sub(all[0].at).Milliseconds()), Usage: tr.usage.total(),
	}
	for i, p := range all {
		seq := int64(i + 1)
		e, err := events.New(t.cfg.Source, session, seq, p.typ, p.at, p.data)
		if err != nil {
			return fmt.Errorf("session %s: build %s #%d: %w", session, p.typ, seq, err)
		}
		e.ID = eventID(session, seq)
		if p.toolCallID != "" {
			e.Extensions = map[string]any{ToolCallIDExtension: p.toolCallID}
		}
		if err := t.sink.Send(ctx, e); err != nil {
			return err
		}
		t.n.Events++
	}
	t.n.Sessions++
	return nil
}

// ToolCallIDExtension is the CloudEvents extension attribute of
// agent.tool.called that carries SkillLite's tool_call_id, for joins with
// its transcripts.
const ToolCallIDExtension = "toolcallid"

// pending is an event of the open turn, waiting for the turn to end.
type pending struct {
	typ        events.Type
	data       any
	at         time.Time
	known      bool // at is the time of a line (a timestamp, a transcript), not the clock's
	toolCallID string
}

// fillTimes gives the events whose time is the clock's, in a turn where
// some have a known time, the known time before them (the first known one
// for those before it): a backfill with transcripts keeps the real times.
func fillTimes(ps []pending) {
	first := slices.IndexFunc(ps, func(p pending) bool { return p.known })
	if first < 0 {
		return
	}
	last := ps[first].at
	for i := range ps {
		if ps[i].known {
			last = ps[i].at
		} else {
			ps[i].at = last
		}
	}
}

// modelCall records an llm_usage line: one model response, an iteration,
// for SkillLite's current task. SkillLite does not time its responses:
// duration 0.
func (t *Translator) modelCall(u llmUsage) {
	tr := t.turn
	tr.iterations++
	var task *int64
	if id, _ := tr.current(); id != 0 {
		task = &id
	}
	var model string
	if tr.model != "unknown" {
		model = tr.model
	}
	t.record(events.ModelCalled, events.ModelCalledData{TaskID: task, Model: model,
		InputTokens: u.input, OutputTokens: u.output, CachedInputTokens: u.cached})
	tr.usage.add(u)
}

// usage sums a turn's model calls; a count is known once a call gave it.
type usage struct {
	calls                 int64
	input, output, cached *int64
}

func (s *usage) add(u llmUsage) {
	s.calls++
	for _, c := range []struct{ sum, n **int64 }{{&s.input, &u.input}, {&s.output, &u.output}, {&s.cached, &u.cached}} {
		if *c.n != nil {
			v := **c.n
			if *c.sum != nil {
				v += **c.sum
			}
			*c.sum = &v
		}
	}
}

// total is agent.session.ended's usage: nil without a model call.
func (s usage) total() *events.Usage {
	if s.calls == 0 {
		return nil
	}
	return &events.Usage{ModelCalls: s.calls, InputTokens: s.input, OutputTokens: s.output, CachedInputTokens: s.cached}
}
