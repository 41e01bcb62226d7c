package agent_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

func session(tb testing.TB, sink agent.Sink) *agent.Session {
	tb.Helper()
	return agent.NewSession(sink, "coder/host-a/worker-1", "")
}

func started() agent.SessionStarted {
	return agent.SessionStarted{Goal: "g", Agent: "coder", AgentVersion: "1", Model: "m", Tools: []string{"grep"}}
}

func TestPublisherDeliversWithMsgID(t *testing.T) {
	_, _, js := testkit.Embedded(t)
	ctx := t.Context()
	st, err := bus.EnsureStream(ctx, js, bus.DefaultStream())
	if err != nil {
		t.Fatal(err)
	}
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{MaxInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := session(t, pub)
	for range 50 {
		if err := s.Started(ctx, started()); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	m, err := st.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The token: the first 8 hex digits of sha256("coder/host-a/worker-1").
	if m.Subject != "evo.coder.3757cae0" {
		t.Errorf("subject = %s, want evo.coder.3757cae0", m.Subject)
	}
	e, err := events.Decode(m.Data)
	if err != nil {
		t.Fatalf("published event does not decode: %v", err)
	}
	if got := m.Header.Get(jetstream.MsgIDHeader); got != e.ID {
		t.Errorf("Nats-Msg-Id = %q, want the event id %q", got, e.ID)
	}
	if e.Seq != 1 || e.Subject != s.ID() {
		t.Errorf("first event seq %d subject %s, want 1 and %s", e.Seq, e.Subject, s.ID())
	}
	// Sending the same event again is dropped by JetStream's duplicate window.
	if err := pub.Send(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := pub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(ctx)
	if info.State.Msgs != 50 {
		t.Errorf("stream holds %d messages, want 50", info.State.Msgs)
	}
	if err := s.Started(ctx, started()); !errors.Is(err, agent.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
}

// With no stream to take them, events are retried, then reported: to
// OnError as it happens and from Flush.
func TestPublisherReportsUndeliverable(t *testing.T) {
	_, _, js := testkit.Embedded(t) // no stream: nobody answers
	var reported atomic.Int64
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{
		AckTimeout: 200 * time.Millisecond, Retries: 2,
		OnError: func(*agent.DeliveryError) { reported.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	s := session(t, pub)
	for range 3 {
		if err := s.Started(t.Context(), started()); err != nil {
			t.Fatal(err)
		}
	}
	err = pub.Flush(t.Context())
	var de *agent.DeliveryError
	if !errors.As(err, &de) {
		t.Fatalf("Flush = %v, want *DeliveryError", err)
	}
	if de.Tries != 3 || de.Subject != "evo.coder.3757cae0" {
		t.Errorf("DeliveryError = %+v, want 3 tries on evo.coder.3757cae0", de)
	}
	if reported.Load() != 3 {
		t.Errorf("OnError called %d times, want 3", reported.Load())
	}
	if err := pub.Flush(t.Context()); err != nil {
		t.Errorf("second Flush = %v, want nil (errors are reported once)", err)
	}
	pub.Close(t.Context())
}

// Send blocks while MaxInFlight events are unacknowledged, until ctx ends.
func TestPublisherBackPressure(t *testing.T) {
	_, _, js := testkit.Embedded(t) // no stream: acks never come
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{MaxInFlight: 1, AckTimeout: time.Minute, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := session(t, pub)
	ctx := t.Context()
	if err := s.Started(ctx, started()); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err = s.Started(short, started())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Send with one slot taken = %v, want deadline exceeded", err)
	}
}

func TestJSONLWriterRoundTrip(t *testing.T) {
	var buf lineBuf
	w := agent.NewJSONLWriter(&buf)
	s := session(t, w)
	s.Started(t.Context(), started())
	s.Ended(t.Context(), agent.SessionEnded{Outcome: events.OutcomeSuccess})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := buf.lines()
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	for i, l := range lines {
		e, err := events.Decode([]byte(l))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if e.Seq != int64(i+1) {
			t.Errorf("line %d seq = %d", i+1, e.Seq)
		}
	}
}
