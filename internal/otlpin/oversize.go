package otlpin

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// DeadLetterFunc stores raw, an event that cannot be published, as a dead
// letter with code and reason; subject is where it was to go. The
// ingester's (ingest.Ingester.DeadLetter with from "otlp") is one.
type DeadLetterFunc func(ctx context.Context, raw []byte, subject, code, reason string) error

// ReasonOversize is the dead-letter code of an event over the NATS max
// payload, as the ingester names events over its own size limit.
const ReasonOversize = "oversize"

// headerRoom is what a message needs beyond its payload: subject and the
// Nats-Msg-Id header.
const headerRoom = 1 << 10

// ErrTooLarge is returned (wrapped in a *TooLargeError) by the receiver's
// sink for an event over the NATS max payload when no DeadLetterFunc is
// set: permanent, answered 400.
var ErrTooLarge = errors.New("event over the NATS max payload")

// TooLargeError says which event could not be published and why.
type TooLargeError struct {
	ID         string
	Bytes, Max int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("event %s of %d bytes is over the NATS max payload of %d bytes", e.ID, e.Bytes, e.Max)
}

func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// oversize is the sink in front of the publisher: an event the server would
// refuse for its size is dead-lettered (or refused, permanently) instead of
// failing its delivery after the sender was told to retry.
type oversize struct {
	pub  *agent.Publisher
	max  int // payload bytes at most
	dead DeadLetterFunc
	n    atomic.Int64 // dead-lettered
}

var _ agent.Sink = (*oversize)(nil)

func (o *oversize) Send(ctx context.Context, e *events.Event) error {
	b, err := e.MarshalJSON()
	if err != nil || len(b) <= o.max {
		return o.pub.Send(ctx, e) // it reports its own encoding errors
	}
	tl := &TooLargeError{ID: e.ID, Bytes: len(b), Max: o.max}
	if o.dead == nil {
		return tl
	}
	if err := o.dead(ctx, b, o.pub.Subject(e.Source), ReasonOversize, tl.Error()+" (received over OTLP, not published)"); err != nil {
		return fmt.Errorf("dead-letter event %s: %w", e.ID, err)
	}
	o.n.Add(1)
	return nil
}
