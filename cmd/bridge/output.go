package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
)

// output is where the events go.
type output struct {
	sink  agent.Sink
	flush func() error                // writes out what is buffered; nil if nothing is
	close func(context.Context) error // delivers the rest and releases
}

func openOutput(o *options, stdout io.Writer, log *slog.Logger) (*output, error) {
	if o.out != "" {
		return openJSONL(o.out, stdout)
	}
	nc, err := bus.Connect(o.conn, log)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream on %s: %w", o.natsURL, err)
	}
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{Prefix: o.prefix})
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &output{sink: pub, close: func(ctx context.Context) error {
		defer nc.Close()
		if err := pub.Close(ctx); err != nil {
			return fmt.Errorf("publish to %s: %w", pub.Subject(o.cfg.Source), err)
		}
		return nil
	}}, nil
}

func openJSONL(name string, stdout io.Writer) (*output, error) {
	if name == "-" {
		w := agent.NewJSONLWriter(stdout)
		return &output{sink: w, flush: w.Flush, close: func(context.Context) error {
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
	return &output{sink: w, flush: w.Flush, close: func(context.Context) error {
		err := w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write events to %s: %w", name, err)
		}
		return nil
	}}, nil
}
