package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/evosignal/evosignal/internal/events"
)

// Session numbers and sends the events of one agent session: each event gets
// the session id as subject, the next seq, a UUIDv7 id and the current time.
// Safe for concurrent use.
type Session struct {
	sink   Sink
	source string
	id     string
	now    func() time.Time
	ids    func(seq int64) string // nil: a fresh UUIDv7 per event

	mu  sync.Mutex
	seq int64
}

// NewSession starts numbering events for a session of source on sink. An
// empty id gets a fresh UUIDv7.
func NewSession(sink Sink, source, id string) *Session {
	if id == "" {
		id = uuid.Must(uuid.NewV7()).String()
	}
	return &Session{sink: sink, source: source, id: id, now: time.Now}
}

// WithEventIDs makes the session name its events with id(seq) instead of a
// fresh UUIDv7 each (simulations whose runs must be the same events, ids
// included). The ids must be unique within the source. It returns s.
func (s *Session) WithEventIDs(id func(seq int64) string) *Session {
	s.ids = id
	return s
}

// WithClock makes the session stamp events with now instead of the wall
// clock (simulations, replays). It returns s.
func (s *Session) WithClock(now func() time.Time) *Session {
	s.now = now
	return s
}

// ID is the session id (the events' subject).
func (s *Session) ID() string { return s.id }

// Source is the agent instance the events come from.
func (s *Session) Source() string { return s.source }

// Seq is the seq of the last event emitted.
func (s *Session) Seq() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// Emit builds the next event of the session with data and sends it.
func (s *Session) Emit(ctx context.Context, typ events.Type, data any) error {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	e, err := events.New(s.source, s.id, seq, typ, s.now(), data)
	if err != nil {
		return fmt.Errorf("session %s: build %s #%d: %w", s.id, typ, seq, err)
	}
	if s.ids != nil {
		e.ID = s.ids(seq)
	}
	return s.sink.Send(ctx, e)
}

// Started emits agent.session.started.
func (s *Session) Started(ctx context.Context, d SessionStarted) error {
	return s.Emit(ctx, events.SessionStarted, d)
}

// PlanCreated emits agent.plan.created.
func (s *Session) PlanCreated(ctx context.Context, d PlanCreated) error {
	return s.Emit(ctx, events.PlanCreated, d)
}

// HintStripped emits agent.hint.stripped.
func (s *Session) HintStripped(ctx context.Context, d HintStripped) error {
	return s.Emit(ctx, events.HintStripped, d)
}

// PlanUpdated emits agent.plan.updated (a replan attempt).
func (s *Session) PlanUpdated(ctx context.Context, d PlanUpdated) error {
	return s.Emit(ctx, events.PlanUpdated, d)
}

// ToolCalled emits agent.tool.called.
func (s *Session) ToolCalled(ctx context.Context, d ToolCalled) error {
	return s.Emit(ctx, events.ToolCalled, d)
}

// ModelCalled emits agent.model.called (v1.3): one model call, its tokens
// and time.
func (s *Session) ModelCalled(ctx context.Context, d ModelCalled) error {
	return s.Emit(ctx, events.ModelCalled, d)
}

// TaskCompleted emits agent.task.completed.
func (s *Session) TaskCompleted(ctx context.Context, d TaskCompleted) error {
	return s.Emit(ctx, events.TaskCompleted, d)
}

// DepthLimitReached emits agent.depth_limit.reached.
func (s *Session) DepthLimitReached(ctx context.Context, d DepthLimit) error {
	return s.Emit(ctx, events.DepthLimitReached, d)
}

// Ended emits agent.session.ended.
func (s *Session) Ended(ctx context.Context, d SessionEnded) error {
	return s.Emit(ctx, events.SessionEnded, d)
}
