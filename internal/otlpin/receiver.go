package otlpin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
)

// DefaultMaxBody is the default limit of a request body (decompressed).
const DefaultMaxBody = 16 << 20

// Config configures a Receiver.
type Config struct {
	Addr    string // listen address, e.g. ":4318" (port 0 picks one)
	Prefix  string // subject prefix: events go to <Prefix>.<agent>
	MaxBody int64
	// Sweep is how often traces waiting for their agent run's end are
	// checked against Mapper.Linger.
	Sweep  time.Duration
	Mapper otelad.Config
}

// DefaultConfig returns the defaults for a receiver on addr publishing
// under prefix.
func DefaultConfig(addr, prefix string) Config {
	return Config{Addr: addr, Prefix: prefix, MaxBody: DefaultMaxBody, Sweep: time.Second, Mapper: otelad.DefaultConfig()}
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	errs := []error{c.Mapper.Validate()}
	if c.Addr == "" {
		errs = append(errs, errors.New("otlp: empty listen address"))
	}
	if c.MaxBody < 1 {
		errs = append(errs, fmt.Errorf("otlp: max body %d is below 1", c.MaxBody))
	}
	if c.Sweep <= 0 {
		errs = append(errs, fmt.Errorf("otlp: sweep interval %v is not positive", c.Sweep))
	}
	return errors.Join(errs...)
}

// Receiver is a running OTLP/HTTP trace receiver. Close stops it.
type Receiver struct {
	ln     net.Listener
	srv    *http.Server
	mapper *otelad.Mapper
	pub    *agent.Publisher
	log    *slog.Logger
	stop   chan struct{}
	wg     sync.WaitGroup
}

// Start listens on cfg.Addr and serves POST /v1/traces, publishing the
// mapped events to js.
func Start(cfg Config, js jetstream.JetStream, log *slog.Logger) (*Receiver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{Prefix: cfg.Prefix})
	if err != nil {
		return nil, err
	}
	m, err := otelad.New(cfg.Mapper, pub)
	if err != nil {
		pub.Close(context.Background())
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		pub.Close(context.Background())
		return nil, fmt.Errorf("otlp listen on %s: %w", cfg.Addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, NewHandler(m, pub.Flush, cfg.MaxBody))
	r := &Receiver{ln: ln, mapper: m, pub: pub, log: log, stop: make(chan struct{}),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		if err := r.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("otlp receiver", "err", err)
		}
	}()
	go r.sweep(cfg.Sweep)
	log.Info("receiving OTLP/HTTP traces", "addr", ln.Addr().String(), "path", Path)
	return r, nil
}

// Addr is the address the receiver listens on.
func (r *Receiver) Addr() net.Addr { return r.ln.Addr() }

// Stats returns the mapper's totals.
func (r *Receiver) Stats() otelad.Stats { return r.mapper.Stats() }

func (r *Receiver) sweep(every time.Duration) {
	defer r.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := r.mapper.Sweep(ctx, now)
			if err == nil {
				err = r.pub.Flush(ctx)
			}
			cancel()
			if err != nil {
				r.log.Warn("otlp: map lingering traces", "err", err)
			}
		}
	}
}

// Close stops taking requests, maps the traces still waiting that have an
// agent span, and delivers the events in flight, within ctx.
func (r *Receiver) Close(ctx context.Context) error {
	err := r.srv.Shutdown(ctx)
	close(r.stop)
	r.wg.Wait()
	err = errors.Join(err, r.mapper.Flush(ctx), r.pub.Close(ctx))
	s := r.mapper.Stats()
	r.log.Info("otlp receiver stopped", "spans", s.Spans, "rejected", s.Rejected, "sessions", s.Sessions, "events", s.Events)
	for _, n := range s.Notes() {
		r.log.Warn("otlp data quality: " + n)
	}
	return err
}
