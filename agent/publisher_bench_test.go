package agent_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// collect keeps the events sent to it.
type collect struct{ evs []*events.Event }

func (c *collect) Send(_ context.Context, e *events.Event) error {
	c.evs = append(c.evs, e)
	return nil
}

// BenchmarkPublisher sends pre-generated synth events through a default
// Publisher to an embedded JetStream server, waiting for every ack: the
// publisher's own cost, without generating the events.
func BenchmarkPublisher(b *testing.B) {
	_, _, js := testkit.Embedded(b)
	ctx := b.Context()
	if _, err := bus.EnsureStream(ctx, js, bus.DefaultStream()); err != nil {
		b.Fatal(err)
	}
	var pool collect
	g := synth.New(1, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	for len(pool.evs) < 20000 {
		if _, err := g.Session(ctx, &pool); err != nil {
			b.Fatal(err)
		}
	}
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{})
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		// Every event once: JetStream drops repeated ids as duplicates,
		// which would cost less than storing them.
		e := *pool.evs[i%len(pool.evs)]
		e.ID = e.ID[:len(e.ID)-8] + string(rune('a'+i/len(pool.evs)%26)) + e.ID[len(e.ID)-7:]
		if err := pub.Send(ctx, &e); err != nil {
			b.Fatal(err)
		}
	}
	if err := pub.Close(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	// The process's CPU time an event took (the publisher, the client and
	// the embedded server): steadier than the rate on a busy machine.
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/event")
}

func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
