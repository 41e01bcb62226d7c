package foreign

import (
	"context"
	"fmt"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// RecordError is a hook record skipped as malformed; Record is its
// 1-based position in the input, Line the line it began on.
type RecordError struct {
	Record, Line int
	Err          error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("record %d (line %d): %v", e.Record, e.Line, e.Err)
}
func (e *RecordError) Unwrap() error { return e.Err }

// CountingSink counts the events that reach Next in *N.
type CountingSink struct {
	Next agent.Sink
	N    *int64
}

var _ agent.Sink = CountingSink{}

func (c CountingSink) Send(ctx context.Context, e *events.Event) error {
	*c.N++
	return c.Next.Send(ctx, e)
}
