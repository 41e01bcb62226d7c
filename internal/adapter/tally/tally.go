// Package tally is what the OpenTelemetry and Claude Code adapters share:
// one session of a foreign agent, fed its plan-tool calls, ordinary tool
// calls and boundaries in order, emitting evosignal events with ids and seqs
// the caller derives from the foreign record, so that translating the same
// record twice gives the same events (and the store keeps them once).
//
// The plan-tool calls go through the plan-dialect core
// (internal/plandialect), which decides what each one was; a Session only
// emits what the core's Result names and keeps the session's own totals for
// agent.session.ended, as every adapter does. It judges nothing else.
package tally

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// maxError is the longest error text agent.tool.called takes.
const maxError = 4096

// Quality counts what a translation could not use, for the caller's report.
type Quality struct {
	// PlanCallsWithoutArguments: plan-tool calls whose arguments were not
	// recorded (OpenTelemetry content capture off); the plan is not guessed.
	PlanCallsWithoutArguments int64
	// PlanCallsUnreadable: plan-tool calls whose arguments their dialect
	// could not read (plandialect.ErrArguments); the plan stays as it was.
	PlanCallsUnreadable int64
	// PlanCallsFailed: plan-tool calls the agent reported as failed; the plan
	// stays as it was.
	PlanCallsFailed int64
}

// Add adds o to q.
func (q *Quality) Add(o Quality) {
	q.PlanCallsWithoutArguments += o.PlanCallsWithoutArguments
	q.PlanCallsUnreadable += o.PlanCallsUnreadable
	q.PlanCallsFailed += o.PlanCallsFailed
}

// Notes returns q as data-quality sentences, none when q is zero.
func (q Quality) Notes() []string {
	var n []string
	if q.PlanCallsWithoutArguments > 0 {
		n = append(n, fmt.Sprintf("%d plan-tool calls carried no arguments and were not read as plans (the plan is never guessed); with OpenTelemetry, enable content capture so that gen_ai.tool.call.arguments is recorded (e.g. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)", q.PlanCallsWithoutArguments))
	}
	if q.PlanCallsUnreadable > 0 {
		n = append(n, fmt.Sprintf("%d plan-tool calls had arguments their dialect could not read; the plan in force was kept", q.PlanCallsUnreadable))
	}
	if q.PlanCallsFailed > 0 {
		n = append(n, fmt.Sprintf("%d plan-tool calls failed in the agent; the plan in force was kept", q.PlanCallsFailed))
	}
	return n
}

// At is where an event of a session goes: its id and its time, and the seq
// it asks for. The session gives it max(Seq, the last seq + 1), so seqs
// increase whatever the caller asks, and a caller keying Seq on time (as the
// OpenTelemetry adapter does) keeps the order across restarts.
type At struct {
	ID   string
	Time time.Time
	Seq  int64
}

// Call is one tool call as the foreign record states it.
type Call struct {
	Tool     string
	Args     []byte // the call's arguments (JSON); nil when not recorded
	OK       bool
	Error    string // why it failed
	Kind     string // class of the failure (error_kind)
	Duration time.Duration
}

// Session translates one session. Not safe for concurrent use.
type Session struct {
	sink   agent.Sink
	source string
	id     string
	reg    *plandialect.Registry
	tr     *plandialect.Tracker

	seq       int64
	started   bool
	calls     int64 // agent.tool.called events
	failed    int64
	taskCalls map[int64]int64 // work calls per task id
	taskFails map[int64]int64
	quality   Quality
	emitted   int64
}

// New returns the Session id of source, emitting to sink. An id longer
// than a session id may be (128 characters) is replaced by its hash.
func New(sink agent.Sink, source, id string, reg *plandialect.Registry) *Session {
	if id == "" || utf8.RuneCountInString(id) > maxKey {
		id = hashed(id)
	}
	return &Session{sink: sink, source: source, id: id, reg: reg, tr: reg.NewTracker(),
		taskCalls: map[int64]int64{}, taskFails: map[int64]int64{}}
}

// ID is the session id.
func (s *Session) ID() string { return s.id }

// Started reports whether Start was called.
func (s *Session) Started() bool { return s.started }

// Quality returns what the session could not use so far.
func (s *Session) Quality() Quality { return s.quality }

// Emitted returns the number of events sent.
func (s *Session) Emitted() int64 { return s.emitted }

// Plan returns the plan in force.
func (s *Session) Plan() []plandialect.Task { return s.tr.Plan() }

func (s *Session) emit(ctx context.Context, at At, suffix string, typ events.Type, data any) error {
	s.seq = max(at.Seq, s.seq+1)
	e, err := events.New(s.source, s.id, s.seq, typ, at.Time, data)
	if err != nil {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	e.ID = EventID(at.ID + suffix)
	if err := e.Validate(); err != nil {
		return fmt.Errorf("session %s: event id %q: %w", s.id, e.ID, err)
	}
	s.emitted++
	return s.sink.Send(ctx, e)
}

// Start emits agent.session.started.
func (s *Session) Start(ctx context.Context, at At, d events.SessionStartedData) error {
	s.started = true
	return s.emit(ctx, at, "", events.SessionStarted, d)
}

// Tool translates one tool call: a plan-tool call goes through the dialect
// core (agent.plan.created or agent.plan.updated, then agent.task.completed
// per completed task, then the call itself as a control call); any other
// call is agent.tool.called for the task in progress, with its hint. Event
// ids are at.ID plus a suffix ("/plan", "/done/<task id>", nothing for the
// call).
func (s *Session) Tool(ctx context.Context, at At, c Call) error {
	d, isPlan := s.reg.Lookup(c.Tool)
	if !isPlan {
		return s.work(ctx, at, c)
	}
	if err := s.plan(ctx, at, d, c); err != nil {
		return err
	}
	return s.called(ctx, at, c, nil, nil, true)
}

func (s *Session) plan(ctx context.Context, at At, d plandialect.Dialect, c Call) error {
	switch {
	case !c.OK:
		s.quality.PlanCallsFailed++
		return nil
	case c.Args == nil:
		s.quality.PlanCallsWithoutArguments++
		return nil
	}
	p, err := d.Parse(c.Args)
	if errors.Is(err, plandialect.ErrArguments) {
		s.quality.PlanCallsUnreadable++
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: parse %s: %w", s.id, c.Tool, err)
	}
	res, err := s.tr.Apply(p)
	if errors.Is(err, plandialect.ErrPlan) {
		s.quality.PlanCallsUnreadable++
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: apply %s: %w", s.id, c.Tool, err)
	}
	switch res.Kind {
	case plandialect.Created:
		err = s.emit(ctx, at, "/plan", events.PlanCreated, res.PlanCreated())
	case plandialect.Replanned:
		err = s.emit(ctx, at, "/plan", events.PlanUpdated, res.PlanUpdated(events.TriggerModel))
	}
	if err != nil {
		return err
	}
	for _, id := range res.Completed {
		d := events.TaskCompletedData{TaskID: id, Completion: events.CompletionSuccess, ToolCalls: s.taskCalls[id]}
		if s.taskFails[id] > 0 {
			d.Completion = events.CompletionPartialSuccess
		}
		if err := s.emit(ctx, at, fmt.Sprintf("/done/%d", id), events.TaskCompleted, d); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) work(ctx context.Context, at At, c Call) error {
	task, ok := s.tr.Current()
	if !ok {
		return s.called(ctx, at, c, nil, nil, false)
	}
	s.taskCalls[task.ID]++
	if !c.OK {
		s.taskFails[task.ID]++
	}
	var hint *string
	if task.Hint != "" {
		hint = &task.Hint
	}
	return s.called(ctx, at, c, &task.ID, hint, false)
}

func (s *Session) called(ctx context.Context, at At, c Call, task *int64, hint *string, control bool) error {
	d := events.ToolCalledData{TaskID: task, Tool: c.Tool, Hint: hint, OK: c.OK,
		DurationMS: max(c.Duration.Milliseconds(), 0), Control: control}
	if !c.OK {
		d.Error, d.ErrorKind = cut(c.Error), c.Kind
		if d.Error == "" {
			d.Error = c.Kind
		}
	}
	s.calls++
	if !c.OK {
		s.failed++
	}
	return s.emit(ctx, at, "", events.ToolCalled, d)
}

// Outcome is the outcome of a session that did not fail by the agent's own
// account, judged by the plan in force: success without a plan or with
// every task completed, partial_success with some completed, failure with
// none.
func (s *Session) Outcome() events.Outcome {
	plan := s.tr.Plan()
	done := 0
	for _, t := range plan {
		if t.Done() {
			done++
		}
	}
	switch {
	case done == len(plan):
		return events.OutcomeSuccess
	case done > 0:
		return events.OutcomePartialSuccess
	}
	return events.OutcomeFailure
}

// End emits agent.session.ended with the session's totals: replans as the
// core counted them, tool calls and failed ones as emitted.
func (s *Session) End(ctx context.Context, at At, outcome events.Outcome, iterations int64, dur time.Duration) error {
	return s.emit(ctx, at, "", events.SessionEnded, events.SessionEndedData{
		Outcome: outcome, Replans: s.tr.Replans(), ToolCalls: s.calls, FailedToolCalls: s.failed,
		Iterations: iterations, DurationMS: max(dur.Milliseconds(), 0),
	})
}

// maxKey is the longest event id and session id of the contract.
const maxKey = 128

// EventID returns id if it is a valid event id (1 to 128 printable ASCII
// characters without spaces), else its hash: foreign ids are used as they
// are when they fit, and stay deterministic when they do not.
func EventID(id string) string {
	if id == "" || len(id) > maxKey || strings.IndexFunc(id, func(r rune) bool { return r < '!' || r > '~' }) >= 0 {
		return hashed(id)
	}
	return id
}

func hashed(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + hex.EncodeToString(h[:])
}

// cut returns s cut to maxError characters.
func cut(s string) string {
	r := []rune(s)
	if len(r) <= maxError {
		return s
	}
	return string(r[:maxError])
}
