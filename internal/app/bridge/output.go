package bridge

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/output"
)

// openOutput opens -out, or a connection to -nats and a publisher on it.
func openOutput(o *options, stdout io.Writer, log *slog.Logger) (*output.Output, error) {
	if o.out != "" {
		return output.JSONL(o.out, stdout)
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
	out, err := output.Publish(js, nc, agent.PublisherConfig{Prefix: o.prefix}, o.natsURL)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return out, nil
}
