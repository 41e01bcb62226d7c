package pipeline

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/otlpin"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
)

// Pipeline is a running evosignal. Its Close stops it in order.
type Pipeline struct {
	cfg    Config
	log    *slog.Logger
	srv    *bus.Server // nil with an external server
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	kv     jetstream.KeyValue
	st     *store.Store
	in     *ingest.Ingester
	qsMu   sync.Mutex          // guards qs: the store may reopen its database (restartQuery)
	qs     *sqlservice.Service // nil when none runs
	http   *httpServer
	otlp   *otlpin.Receiver // nil unless Config.OTLP
	sealer *sealer          // nil unless Config.Lake

	ran    bool // an ingester ran: the next Ingest starts a fresh one
	closed bool
	cancel context.CancelFunc // stops the running ingester; nil when none runs
	done   chan struct{}      // closed when the ingester returned
	err    error              // what it returned; read after done
}

// Start opens the pipeline (Open) and starts the ingester (Ingest).
func Start(ctx context.Context, cfg Config) (*Pipeline, error) {
	p, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := p.Ingest(); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}

// Open starts everything but the ingester: the store, the embedded server
// (or the connection to the given one), the stream, the rules bucket,
// the query service and HTTP. Ingest then starts the ingester. Whatever
// Open started is stopped again when it fails.
func Open(ctx context.Context, cfg Config) (_ *Pipeline, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pipeline{cfg: cfg, log: cfg.Log, done: make(chan struct{})}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.Close())
		}
	}()
	// The store first: a second pipeline on the same database stops here,
	// before its server would share the first one's JetStream store.
	so := cfg.Store
	so.Reopened = func(ctx context.Context, db *sql.DB) {
		p.restartQuery(ctx, db)
		if cfg.Store.Reopened != nil {
			cfg.Store.Reopened(ctx, db)
		}
	}
	if so.Progress == nil {
		so.Progress = logProgress(p.log)
	}
	if so.OnCheckpoint == nil {
		so.OnCheckpoint = logCheckpoint(p.log)
	}
	if p.st, err = store.OpenWith(ctx, cfg.DB, so); err != nil {
		return nil, err
	}
	conn := cfg.NATS
	if cfg.Embedded() {
		slog := cfg.ServerLog
		if slog == nil {
			slog = cfg.Log
		}
		if p.srv, err = bus.StartServer(cfg.Server, slog); err != nil {
			return nil, err
		}
		p.log.Info("embedded nats-server ready", "url", p.srv.ClientURL(), "store", cfg.Server.StoreDir)
		conn.InProcess = p.srv.NATS()
	}
	if p.nc, err = bus.Connect(conn, cfg.Log); err != nil {
		return nil, err
	}
	if p.js, err = jetstream.New(p.nc); err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	// The ingester and HTTP before the stream: /healthz reports unhealthy
	// while the stream's set-up waits out a cluster electing a leader or
	// missing a node (retried with backoff until ctx ends).
	if p.in, err = ingest.New(cfg.ingestConfig(), p.st, cfg.Log); err != nil {
		return nil, err
	}
	if cfg.Lake != nil {
		if err := p.startSealer(ctx); err != nil {
			return nil, err
		}
	}
	otlpMetrics := &otlpin.Metrics{}
	if cfg.HTTP != "" {
		var extra []prometheus.Collector
		if cfg.OTLP != "" {
			extra = otlpMetrics.Collectors()
		}
		var h http.Handler
		if p.sealer != nil {
			mux := http.NewServeMux()
			mux.Handle("/", p.in.Handler(append(extra, p.sealer.collectors()...)...))
			mux.HandleFunc("POST /seal", p.sealer.handleSeal)
			h = mux
		} else {
			h = p.in.Handler(extra...)
		}
		if cfg.Pages != nil {
			if h, err = p.withPages(ctx, h); err != nil {
				return nil, err
			}
		}
		if p.http, err = serveHTTP(cfg.HTTP, h, p.log); err != nil {
			return nil, err
		}
	}
	if p.stream, err = p.in.SetupRetry("create or update stream "+cfg.Stream.Name).EnsureStream(ctx, p.js, cfg.Stream); err != nil {
		return nil, err
	}
	p.in.Healthy()
	if cfg.OTLP != "" {
		oc := cfg.otlpConfig()
		oc.DeadLetter = func(ctx context.Context, raw []byte, subject, code, reason string) error {
			return p.in.DeadLetter(ctx, raw, "otlp", subject, code, reason)
		}
		if p.otlp, err = otlpin.Start(oc, p.js, p.log.With("component", "otlp")); err != nil {
			return nil, err
		}
		otlpMetrics.Attach(p.otlp)
	}
	if cfg.Rules != nil {
		if p.kv, err = bus.EnsureRulesBucket(ctx, p.js, *cfg.Rules); err != nil {
			return nil, err
		}
	}
	if cfg.Query != nil {
		if p.qs, err = sqlservice.Start(ctx, p.nc, p.st.DB(), *cfg.Query, p.log.With("component", "query")); err != nil {
			return nil, err
		}
		p.log.Info("answering read-only SQL", "subject", p.qs.Subject(), "timeout", cfg.Query.Timeout, "max_rows", cfg.Query.MaxRows)
	}
	return p, nil
}

// Ingest starts the ingester. It runs until StopIngest or Close, or until
// it fails (Done is then closed). It does nothing while one runs; after
// StopIngest it starts a fresh ingester (new counters) on the same store.
func (p *Pipeline) Ingest() error {
	if p.closed || p.cancel != nil {
		return nil
	}
	if p.ran {
		in, err := ingest.New(p.cfg.ingestConfig(), p.st, p.cfg.Log)
		if err != nil {
			return err
		}
		p.in = in
	}
	p.ran = true
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done, p.err = cancel, make(chan struct{}), nil
	in, done := p.in, p.done
	go func() {
		defer close(done)
		p.err = in.Run(ctx, p.js)
	}()
	return nil
}

// Done is closed when the running ingester has returned: after StopIngest
// or Close, or when it failed on its own (they then return its error).
func (p *Pipeline) Done() <-chan struct{} { return p.done }

// WaitIngested waits until the store's committed position reaches the
// stream's last sequence as it is when called: every event published (and
// acknowledged) before is in the database. It returns that sequence. It
// fails when the ingester stopped first, or when ctx is done.
func (p *Pipeline) WaitIngested(ctx context.Context) (uint64, error) {
	info, err := p.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream %s info: %w", p.cfg.Stream.Name, err)
	}
	last := info.State.LastSeq
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		pos, err := p.st.Position(ctx, p.cfg.Stream.Name)
		if err != nil {
			return 0, err
		}
		if pos >= last {
			return last, nil
		}
		select {
		case <-tick.C:
		case <-p.done:
			err := p.err
			if err == nil {
				err = errors.New("it returned without an error")
			}
			return 0, fmt.Errorf("ingester stopped at seq %d of %d: %w", pos, last, err)
		case <-ctx.Done():
			return 0, fmt.Errorf("wait for ingest of seq %d (at %d): %w", last, pos, ctx.Err())
		}
	}
}

// StopIngest stops the ingester, which commits and acks the batch in hand,
// and returns what it returned. The rest keeps running until Close.
func (p *Pipeline) StopIngest() error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	<-p.done
	p.cancel = nil
	// Stopped before it got going (still opening the stream): that is
	// the stop asked for, not a failure.
	if p.err != nil && !errors.Is(p.err, context.Canceled) {
		return fmt.Errorf("ingester: %w", p.err)
	}
	return nil
}

// Close stops the pipeline in order: the ingester (it commits and acks the
// batch in hand), the last acks sent, HTTP, the query service, the
// connection, the store, the server. It returns the ingester's error and
// every error of the shutdown. A second Close does nothing more.
func (p *Pipeline) Close() error {
	var errs []error
	if p.otlp != nil {
		// Intake first: the receiver delivers what it mapped while the
		// stream is still reachable.
		ctx, cancel := context.WithTimeout(context.Background(), closeOTLP)
		if err := p.otlp.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop otlp receiver: %w", err))
		}
		cancel()
		p.otlp = nil
	}
	errs = append(errs, p.StopIngest())
	if p.sealer != nil {
		// What the last batches committed, before the store closes.
		errs = append(errs, p.sealer.close())
		p.sealer = nil
	}
	p.closed = true
	if p.http != nil {
		p.http.close()
		p.http = nil
	}
	p.qsMu.Lock()
	if p.qs != nil {
		errs = append(errs, p.qs.Close())
		p.qs = nil
	}
	p.qsMu.Unlock()
	if p.nc != nil {
		if err := p.nc.FlushTimeout(flushAcks); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, fmt.Errorf("flush acks: %w", err))
		}
		p.nc.Close()
	}
	if p.st != nil {
		errs = append(errs, p.st.Close())
	}
	if p.srv != nil {
		p.srv.Close()
		p.srv = nil
	}
	return errors.Join(errs...)
}

// JetStream is the pipeline's JetStream context.
func (p *Pipeline) JetStream() jetstream.JetStream { return p.js }

// Conn is the pipeline's NATS connection.
func (p *Pipeline) Conn() *nats.Conn { return p.nc }

// Stream is the event stream.
func (p *Pipeline) Stream() jetstream.Stream { return p.stream }

// KV is the rules bucket; nil unless Config.Rules was set.
func (p *Pipeline) KV() jetstream.KeyValue { return p.kv }

// Store is the store the ingester writes.
func (p *Pipeline) Store() *store.Store { return p.st }

// Ingester is the current (or last) ingester, for its counters.
func (p *Pipeline) Ingester() *ingest.Ingester { return p.in }

// ClientURL is the URL other processes reach the embedded server at; empty
// with an external server.
func (p *Pipeline) ClientURL() string {
	if p.srv == nil {
		return ""
	}
	return p.srv.ClientURL()
}

// Connect opens another connection to the pipeline's server (in process
// for the embedded one), for agents that should not share the ingester's.
// The caller closes it.
func (p *Pipeline) Connect(name string) (*nats.Conn, error) {
	conn := p.cfg.NATS
	conn.Name = name
	if p.srv != nil {
		conn.InProcess = p.srv.NATS()
	}
	return bus.Connect(conn, nil)
}

// restartQuery moves the query service to db after the store opened its
// file again (DuckDB invalidated the old instance after a fatal error). It
// runs on the writer's goroutine, from store.Options.Reopened.
func (p *Pipeline) restartQuery(ctx context.Context, db *sql.DB) {
	p.qsMu.Lock()
	defer p.qsMu.Unlock()
	if p.qs == nil || p.cfg.Query == nil {
		return // none runs, or Close stopped it
	}
	p.qs.Close()
	qs, err := sqlservice.Start(context.WithoutCancel(ctx), p.nc, db, *p.cfg.Query, p.log.With("component", "query"))
	if err != nil {
		p.qs = nil
		p.log.Error("the database was reopened; the query service could not restart on it", "err", err)
		return
	}
	p.qs = qs
	p.log.Info("the database was reopened; answering read-only SQL on it")
}

// logCheckpoint logs the store's failed checkpoints (the WAL keeps what
// they did not write; the next commit tries again) and, at debug level, the
// others.
func logCheckpoint(log *slog.Logger) func(store.Checkpoint) {
	return func(c store.Checkpoint) {
		if c.Err != nil {
			log.Warn("checkpoint failed", "err", c.Err, "wal_bytes", c.WALBefore)
			return
		}
		log.Debug("checkpoint", "took", c.Took, "wal_before", c.WALBefore, "wal_after", c.WALAfter)
	}
}
