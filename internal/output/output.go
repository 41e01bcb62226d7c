// Package output is where a producer's events go: JSON lines in a file or
// on stdout (for ingest -file), or JetStream through an agent.Publisher.
// Close delivers what is in hand within a bound, also after an interrupt,
// so that a command stopped with Ctrl-C still hands over what it made.
package output

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
)

// CloseTimeout bounds how long Close waits to deliver what is in hand.
const CloseTimeout = 30 * time.Second

// Output is an agent.Sink with a buffered writer or a publisher behind it.
type Output struct {
	agent.Sink
	// Where says where the events go, for summaries ("-", a file name, a
	// stream).
	Where   string
	flush   func() error
	deliver func(context.Context) error
	close   func(context.Context) error
}

// JSONL writes JSON lines to the file name, or to stdout for "-".
func JSONL(name string, stdout io.Writer) (*Output, error) {
	if name == "-" {
		w := agent.NewJSONLWriter(stdout)
		return &Output{Sink: w, Where: name, flush: w.Flush, close: func(context.Context) error {
			if err := w.Flush(); err != nil {
				return fmt.Errorf("write events: %w", err)
			}
			return nil
		}}, nil
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	w := agent.NewJSONLWriter(f)
	return &Output{Sink: w, Where: name, flush: w.Flush, close: func(context.Context) error {
		if err := errors.Join(w.Flush(), f.Close()); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		return nil
	}}, nil
}

// Publish sends through an agent.Publisher on js. Close closes nc too when
// it is not nil (the output's own connection).
func Publish(js jetstream.JetStream, nc *nats.Conn, cfg agent.PublisherConfig, where string) (*Output, error) {
	pub, err := agent.NewPublisher(js, cfg)
	if err != nil {
		return nil, err
	}
	return &Output{Sink: pub, Where: where, deliver: pub.Flush, close: func(ctx context.Context) error {
		if nc != nil {
			defer nc.Close()
		}
		if err := pub.Close(ctx); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		return nil
	}}, nil
}

// Flush writes out what a JSON-lines output buffers; a publisher sends
// as it goes.
func (o *Output) Flush() error {
	if o.flush == nil {
		return nil
	}
	return o.flush()
}

// Deliver waits, within ctx, until every event sent so far is delivered:
// written out, or acknowledged by JetStream (or given up on). It returns the
// delivery errors since the last Deliver; nil means every event sent before
// it was taken.
func (o *Output) Deliver(ctx context.Context) error {
	if o.deliver != nil {
		if err := o.deliver(ctx); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		return nil
	}
	return o.Flush()
}

// Buffered reports whether Flush has anything to do.
func (o *Output) Buffered() bool { return o.flush != nil }

// Close delivers what is in hand, waiting at most CloseTimeout, even when
// ctx is already done, and releases the output.
func (o *Output) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CloseTimeout)
	defer cancel()
	return o.close(ctx)
}
