package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// pacer passes events on to sink at most rate per second (wall clock),
// evenly spaced. A sender that falls behind does not earn a burst: the
// schedule restarts from now.
type pacer struct {
	sink  agent.Sink
	every time.Duration

	mu   sync.Mutex
	next time.Time // when the next event may go
}

func newPacer(sink agent.Sink, rate float64) *pacer {
	return &pacer{sink: sink, every: time.Duration(float64(time.Second) / rate)}
}

// Send waits for the event's slot, then sends it.
func (p *pacer) Send(ctx context.Context, e *events.Event) error {
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.every)
	p.mu.Unlock()
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("pace event %s: %w", e.ID, context.Cause(ctx))
		}
	}
	return p.sink.Send(ctx, e)
}

var _ agent.Sink = (*pacer)(nil)
