package ingest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// pullFixture is a stream P with n messages and a durable consumer on it.
func pullFixture(t *testing.T, n int) (jetstream.JetStream, jetstream.Stream, jetstream.Consumer) {
	t.Helper()
	_, _, js := testkit.Embedded(t)
	ctx := t.Context()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "P", Subjects: []string{"p.>"}})
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, js, 0, n)
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "pull", AckPolicy: jetstream.AckAllPolicy, MaxAckPending: 100_000,
	})
	if err != nil {
		t.Fatal(err)
	}
	return js, st, cons
}

func publishN(t *testing.T, js jetstream.JetStream, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := js.PublishAsync("p.x", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(10 * time.Second):
		t.Fatal("publish not acknowledged")
	}
}

// Every message comes once, in stream order, across many pull requests;
// an empty stream times out after the wait.
func TestPullDeliversInOrderAndTimesOut(t *testing.T) {
	const n = 3000
	_, _, cons := pullFixture(t, n)
	p, err := pull(cons, 100) // 30 pull requests at least
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	for want := uint64(1); want <= n; want++ {
		// More than a pull's expiry (5 s) and the missed-heartbeat
		// recovery after it: on a loaded machine a pull request can be
		// lost, and jetstream pulls again (seen once: message 2600 of a
		// full -race run timed out at 5 s).
		m, err := p.next(20 * time.Second)
		if err != nil {
			t.Fatalf("message %d: %v", want, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		if meta.Sequence.Stream != want {
			t.Fatalf("got stream seq %d, want %d", meta.Sequence.Stream, want)
		}
	}
	t0 := time.Now()
	if _, err := p.next(200 * time.Millisecond); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("next on an empty stream: %v, want a timeout", err)
	}
	if el := time.Since(t0); el < 200*time.Millisecond {
		t.Fatalf("timed out after %s, before its wait", el)
	}
}

// Stop ends the consumption even while its handler waits to hand over a
// message (more were delivered than the loop took): the subscription
// closes, and next says it stopped.
func TestPullStopWhileHandOverIsFull(t *testing.T) {
	_, _, cons := pullFixture(t, 3*handed)
	p, err := pull(cons, 3*handed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.next(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	// Let the hand-over fill and the handler block on it.
	deadline := time.Now().Add(5 * time.Second)
	for len(p.msgs) < handed && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(p.msgs) < handed {
		t.Fatalf("hand-over holds %d, want %d", len(p.msgs), handed)
	}
	p.Stop()
	p.Stop() // twice is fine
	select {
	case <-p.cc.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("the consumption did not end: its handler is still blocked")
	}
	if _, err := p.next(time.Second); !errors.Is(err, errPullStopped) {
		t.Fatalf("next after Stop: %v, want %v", err, errPullStopped)
	}
}

// A consumer deleted under a waiting next ends it with the stream's
// error, not a timeout.
func TestPullConsumerDeleted(t *testing.T) {
	_, st, cons := pullFixture(t, 0)
	p, err := pull(cons, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	go func() {
		time.Sleep(200 * time.Millisecond)
		st.DeleteConsumer(t.Context(), "pull")
	}()
	_, err = p.next(10 * time.Second)
	if err == nil || errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("next while the consumer is deleted: %v, want the deletion", err)
	}
}
