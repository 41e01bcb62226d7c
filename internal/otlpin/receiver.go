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

// Defaults of Config.
const (
	// DefaultMaxBody is the default limit of a request body (decompressed).
	DefaultMaxBody = 16 << 20
	// DefaultMaxRequests is how many requests are served at once by
	// default.
	DefaultMaxRequests = 4
)

// RequestCost is how many times its body's size a request in flight holds
// at most: the body, the decoded pdata (several times the protobuf), the
// spans copied out of it. Measured: a 14.9 MB request of 1 MB tool
// arguments peaks near 5 times its body; 8 leaves room.
const RequestCost = 8

// Config configures a Receiver.
type Config struct {
	Addr string // listen address, e.g. ":4318" (port 0 picks one)
	// Listener, when set, is served instead of listening on Addr (a
	// listener opened in another network namespace, as the tests that run
	// real agents in one do); Close closes it.
	Listener net.Listener
	Prefix   string // subject prefix: events go to <Prefix>.<agent>
	Limits
	// Sweep is how often the waiting traces are checked against
	// Mapper.Settle, Mapper.Linger and Mapper.MaxIdle (200 ms).
	Sweep  time.Duration
	Mapper otelad.Config
	// DeadLetter, when set, stores the events too large to publish (over
	// the NATS max payload) as dead letters; without it the request
	// carrying one is refused with 400.
	DeadLetter DeadLetterFunc
}

// DefaultConfig returns the defaults for a receiver on addr publishing
// under prefix.
func DefaultConfig(addr, prefix string) Config {
	return Config{Addr: addr, Prefix: prefix, Limits: Limits{MaxBody: DefaultMaxBody, MaxRequests: DefaultMaxRequests},
		Sweep: 200 * time.Millisecond, Mapper: otelad.DefaultConfig()}
}

// MemoryBound is the most memory the receiver holds, in bytes, by its
// limits: the buffered traces (Mapper.MaxBytes) and the requests in flight
// (MaxRequests of MaxBody, RequestCost times over). The defaults give
// 256 MiB + 4 × 16 MiB × 8 = 768 MiB.
func (c Config) MemoryBound() int64 {
	return c.Mapper.MaxBytes + int64(c.MaxRequests)*c.MaxBody*RequestCost
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	errs := []error{c.Mapper.Validate()}
	if c.Addr == "" && c.Listener == nil {
		errs = append(errs, errors.New("otlp: empty listen address"))
	}
	if c.MaxBody < 1 {
		errs = append(errs, fmt.Errorf("otlp: max body %d is below 1", c.MaxBody))
	}
	if c.MaxRequests < 1 {
		errs = append(errs, fmt.Errorf("otlp: max requests %d is below 1", c.MaxRequests))
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
	h      *Handler
	mapper *otelad.Mapper
	pub    *agent.Publisher
	big    *oversize
	log    *slog.Logger
	stop   chan struct{}
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// Start listens on cfg.Addr (or serves cfg.Listener) and serves POST
// /v1/traces and /v1/logs, publishing the mapped events to js.
func Start(cfg Config, js jetstream.JetStream, log *slog.Logger) (*Receiver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{Prefix: cfg.Prefix})
	if err != nil {
		return nil, err
	}
	big := &oversize{pub: pub, max: int(js.Conn().MaxPayload()) - headerRoom, dead: cfg.DeadLetter}
	mcfg := cfg.Mapper
	mcfg.Permanent = permanent
	m, err := otelad.New(mcfg, big)
	if err != nil {
		pub.Close(context.Background())
		return nil, err
	}
	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			pub.Close(context.Background())
			return nil, fmt.Errorf("otlp listen on %s: %w", cfg.Addr, err)
		}
	}
	mux := http.NewServeMux()
	h := NewHandler(m, pub.Flush, cfg.Limits)
	mux.Handle(Path, h)
	mux.Handle(LogsPath, h)
	r := &Receiver{ln: ln, h: h, mapper: m, pub: pub, big: big, log: log, stop: make(chan struct{}),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		if err := r.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("otlp receiver", "err", err)
		}
	}()
	go r.sweep(cfg.Sweep)
	log.Info("receiving OTLP/HTTP traces and logs", "addr", ln.Addr().String(), "traces", Path, "logs", LogsPath,
		"max_body", cfg.MaxBody, "max_requests", cfg.MaxRequests, "max_buffer_bytes", cfg.Mapper.MaxBytes,
		"max_buffer_spans", cfg.Mapper.MaxSpans, "max_idle", cfg.Mapper.MaxIdle)
	return r, nil
}

// Addr is the address the receiver listens on.
func (r *Receiver) Addr() net.Addr { return r.ln.Addr() }

// Stats returns the mapper's totals.
func (r *Receiver) Stats() otelad.Stats { return r.mapper.Stats() }

// Requests returns the counts of the answers past the limits.
func (r *Receiver) Requests() RequestStats { return r.h.Stats() }

// DeadLettered is how many events were dead-lettered for their size.
func (r *Receiver) DeadLettered() int64 { return r.big.n.Load() }

// dropLogEvery bounds the warnings about traces dropped unmapped to one in
// this long.
const dropLogEvery = time.Minute

func (r *Receiver) sweep(every time.Duration) {
	defer r.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	var logged otelad.Stats // the totals last logged
	var at time.Time
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
			if s := r.mapper.Stats(); (s.Evicted > logged.Evicted || s.Expired > logged.Expired) && now.Sub(at) >= dropLogEvery {
				r.log.Warn("otlp: traces dropped unmapped (docs/operations.md, \"Limits\")",
					"evicted", s.Evicted-logged.Evicted, "evicted_spans", s.EvictedSpans-logged.EvictedSpans,
					"evicted_bytes", s.EvictedBytes-logged.EvictedBytes, "expired", s.Expired-logged.Expired,
					"waiting", s.Waiting, "waiting_bytes", s.WaitingBytes)
				logged, at = s, now
			}
		}
	}
}

// Close (once; again returns the same) stops taking requests, maps the traces still waiting that have an
// agent span, and delivers the events in flight, within ctx: requests get a
// third of the time left, mapping half of what then remains, delivery the
// rest. What is still waiting
// when mapping's share ends is dropped and logged, not returned as an
// error; an error says events mapped were not delivered.
func (r *Receiver) Close(ctx context.Context) error {
	r.closeOnce.Do(func() { r.closeErr = r.close(ctx) })
	return r.closeErr
}

func (r *Receiver) close(ctx context.Context) error {
	sctx, cancel := context.WithDeadline(ctx, share(ctx, 1, 3))
	err := r.srv.Shutdown(sctx)
	cancel()
	if err != nil {
		// Requests still running: close their connections, which ends
		// their contexts, so that they let go of the mapper.
		r.srv.Close()
		err = nil
	}
	close(r.stop)
	r.wg.Wait()
	mctx, cancel := context.WithDeadline(ctx, share(ctx, 1, 2))
	if ferr := r.mapper.Flush(mctx); ferr != nil {
		r.log.Warn("otlp: stopping before every trace was mapped", "err", ferr)
	}
	cancel()
	err = errors.Join(err, r.pub.Close(ctx))
	s := r.mapper.Stats()
	q := r.h.Stats()
	r.log.Info("otlp receiver stopped", "spans", s.Spans, "rejected", s.Rejected, "sessions", s.Sessions, "events", s.Events,
		"evicted", s.Evicted, "expired", s.Expired, "abandoned", s.Abandoned, "dead_lettered", r.big.n.Load(),
		"busy", q.Busy, "too_large", q.TooLarge, "permanent", q.Permanent, "retryable", q.Retryable)
	for _, n := range s.Notes() {
		r.log.Warn("otlp data quality: " + n)
	}
	return err
}

// share is the time when the fraction num/den of ctx's time left has
// passed; ten seconds from now when ctx has no deadline.
func share(ctx context.Context, num, den int64) time.Time {
	now := time.Now()
	end, ok := ctx.Deadline()
	if !ok {
		end = now.Add(10 * time.Second)
	}
	return now.Add(end.Sub(now) * time.Duration(num) / time.Duration(den))
}
