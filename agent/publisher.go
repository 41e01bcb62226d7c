package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/events"
)

// Sink receives an agent's events: a Publisher, or a JSONLWriter.
type Sink interface {
	Send(ctx context.Context, e *events.Event) error
}

// PublisherConfig tunes a Publisher. The zero value is usable.
type PublisherConfig struct {
	// Prefix of the subjects: events go to <Prefix>.<agent>.<token>, where
	// agent is the first path segment of the event's source and token the
	// first 8 hex digits of the SHA-256 of the source (schema/README.md,
	// "NATS"): one subject per source, which a partitioned stream keeps
	// in one partition. Default "evo".
	Prefix string
	// MaxInFlight bounds the events sent and not yet acknowledged by
	// JetStream; Send blocks (back-pressure) while it is reached. Default
	// 1024; keep it at or below the JetStream context's async max pending
	// (jetstream.WithPublishAsyncMaxPending, 4000 unless set).
	MaxInFlight int
	// AckTimeout is how long to wait for JetStream's acknowledgement before
	// sending again. Default 5s.
	AckTimeout time.Duration
	// Retries is how many times an event is sent again after a timeout or
	// when no server answered. Re-sends carry the same Nats-Msg-Id, so
	// JetStream (and the ingester, after the window) drops the copies.
	// Default 5.
	Retries int
	// OnError, if set, is called (from the publisher's goroutine) for each
	// event that could not be delivered, as it happens.
	OnError func(*DeliveryError)
}

func (c *PublisherConfig) defaults() {
	if c.Prefix == "" {
		c.Prefix = "evo"
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 1024
	}
	if c.AckTimeout <= 0 {
		c.AckTimeout = 5 * time.Second
	}
	if c.Retries < 0 {
		c.Retries = 0
	} else if c.Retries == 0 {
		c.Retries = 5
	}
}

// DeliveryError says which event JetStream did not take, and why.
type DeliveryError struct {
	ID      string
	Source  string
	Subject string
	Tries   int
	Err     error
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("event %s from %s on %s not delivered after %d tries: %v", e.ID, e.Source, e.Subject, e.Tries, e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// ErrClosed is returned by Send after Close.
var ErrClosed = errors.New("publisher closed")

// Publisher sends events to JetStream asynchronously with a bounded number in
// flight, re-sends on timeouts, and reports every event it could not deliver.
type Publisher struct {
	js  jetstream.JetStream
	cfg PublisherConfig

	slots   chan struct{}  // one per event in flight
	pending chan *inflight // in send order, to the collector
	done    chan struct{}  // collector exited

	sending sync.WaitGroup // Sends between their closed check and handing over to collect

	mu     sync.Mutex
	closed bool
	// lastSource and lastSubject: the source Send saw last and its
	// subject, kept as events come in runs of one source.
	lastSource, lastSubject string
	errs                    []error
	idle                    *sync.Cond // signalled when in-flight drops to zero
	count                   int        // events in flight
}

type inflight struct {
	subject  string
	body     []byte
	id       string
	idHeader []string // the Nats-Msg-Id header's value: id
	source   string
	fut      jetstream.PubAckFuture
	err      error // send error, when the message never left
	tries    int
	due      time.Time // when the acknowledgement is late
}

// NewPublisher returns a publisher on js. Close it to wait for the events in
// flight and stop its goroutine.
func NewPublisher(js jetstream.JetStream, cfg PublisherConfig) (*Publisher, error) {
	if js == nil {
		return nil, errors.New("new publisher: nil JetStream")
	}
	cfg.defaults()
	p := &Publisher{
		js:      js,
		cfg:     cfg,
		slots:   make(chan struct{}, cfg.MaxInFlight),
		pending: make(chan *inflight, cfg.MaxInFlight),
		done:    make(chan struct{}),
	}
	p.idle = sync.NewCond(&p.mu)
	go p.collect()
	return p, nil
}

// Subject is where p sends the events of source:
// <Prefix>.<agent>.<token> (events.SourceSubject).
func (p *Publisher) Subject(source string) string {
	return events.SourceSubject(p.cfg.Prefix, source)
}

// Send publishes e without waiting for its acknowledgement. It blocks while
// MaxInFlight events are unacknowledged, until ctx is done.
func (p *Publisher) Send(ctx context.Context, e *events.Event) error {
	body, err := encode(e)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("send event %s: %w", e.ID, ctx.Err())
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return ErrClosed
	}
	p.count++
	p.sending.Add(1)
	if e.Source != p.lastSource || p.lastSubject == "" {
		// Events come in runs of one source: its subject is kept.
		p.lastSource, p.lastSubject = e.Source, p.Subject(e.Source)
	}
	subject := p.lastSubject
	p.mu.Unlock()
	defer p.sending.Done()
	f := &inflight{subject: subject, body: body, id: e.ID, idHeader: []string{e.ID}, source: e.Source}
	p.publish(f)
	p.pending <- f
	return nil
}

func (p *Publisher) publish(f *inflight) {
	f.tries++
	f.due = time.Now().Add(p.cfg.AckTimeout)
	// A fresh message each try: the JetStream client may still read the
	// previous one's headers. The Nats-Msg-Id header is set here rather
	// than with jetstream.WithMsgID, which costs an options record and a
	// header map more per message.
	msg := &nats.Msg{Subject: f.subject, Data: f.body, Header: nats.Header{jetstream.MsgIDHeader: f.idHeader}}
	f.fut, f.err = p.js.PublishMsgAsync(msg)
}

// collect waits for the acknowledgements in send order, re-sends what timed
// out, and records what could not be delivered.
func (p *Publisher) collect() {
	defer close(p.done)
	timer := time.NewTimer(p.cfg.AckTimeout)
	defer timer.Stop()
	for f := range p.pending {
		for {
			err := f.err
			if err == nil {
				// Each event's own deadline: when a burst of acks is lost,
				// they all time out together, not one after the other.
				timer.Reset(max(time.Until(f.due), 0))
				select {
				case <-f.fut.Ok():
				case err = <-f.fut.Err():
				case <-timer.C:
					err = nats.ErrTimeout
				}
			}
			if err == nil {
				break
			}
			if retryable(err) && f.tries <= p.cfg.Retries {
				if f.err != nil {
					// The send itself failed (no connection): wait before
					// trying again. A timed-out ack is re-sent at once;
					// its timeout was the wait.
					time.Sleep(backoff(f.tries))
				}
				p.publish(f)
				continue
			}
			p.fail(&DeliveryError{ID: f.id, Source: f.source, Subject: f.subject, Tries: f.tries, Err: err})
			break
		}
		<-p.slots
		p.mu.Lock()
		p.count--
		if p.count == 0 {
			p.idle.Broadcast()
		}
		p.mu.Unlock()
	}
}

// retryable reports whether sending again may succeed: everything but a
// closed connection, a message the server can never take, and a refusal by
// JetStream itself (an API error: wrong stream, message too large, …).
// Timeouts, no responders and the transport errors of a server restart
// (disconnected, reconnecting, broken pipe) are retried.
func retryable(err error) bool {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrBadSubject),
		errors.Is(err, nats.ErrMaxPayload), errors.Is(err, nats.ErrInvalidMsg):
		return false
	case errors.As(err, &apiErr):
		return false
	}
	return true
}

func backoff(try int) time.Duration {
	return min(time.Duration(try)*100*time.Millisecond, 2*time.Second)
}

func (p *Publisher) fail(e *DeliveryError) {
	if p.cfg.OnError != nil {
		p.cfg.OnError(e)
	}
	p.mu.Lock()
	p.errs = append(p.errs, e)
	p.mu.Unlock()
}

// Flush waits until every event sent so far is acknowledged or given up on,
// and returns (and forgets) the delivery errors since the last Flush.
func (p *Publisher) Flush(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.idle.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.count > 0 && ctx.Err() == nil {
		p.idle.Wait()
	}
	errs := p.errs
	p.errs = nil
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("flush: %d events still in flight: %w", p.count, ctx.Err()))
	}
	return errors.Join(errs...)
}

// Close flushes, then stops the publisher. Send fails with ErrClosed after.
func (p *Publisher) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.Flush(ctx)
	p.sending.Wait()
	close(p.pending)
	select {
	case <-p.done:
	case <-ctx.Done():
		// Events still in flight keep being retried in the background and
		// reported to OnError; Close stops waiting for them.
		return errors.Join(err, fmt.Errorf("close: stopped waiting for %d events in flight: %w", p.inFlight(), ctx.Err()))
	}
	// Errors recorded after Flush returned.
	p.mu.Lock()
	late := p.errs
	p.errs = nil
	p.mu.Unlock()
	return errors.Join(append([]error{err}, late...)...)
}

func (p *Publisher) inFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}

var _ Sink = (*Publisher)(nil)
