package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// env is the demo's pipeline in one process: an embedded nats-server
// (in-process connections only), the event stream, the rules bucket, and
// the ingester writing the DuckDB file. Its Close stops them in order.
type env struct {
	srv    *bus.Server
	nc     *nats.Conn
	js     jetstream.JetStream
	kv     jetstream.KeyValue
	stream jetstream.Stream
	st     *store.Store
	cfg    ingest.Config

	cancel context.CancelFunc // stops the ingester
	done   chan struct{}      // closed when the ingester returned
	err    error              // what it returned; read after done
}

// openEnv starts the server with its JetStream store in storeDir, creates
// the stream and the rules bucket, opens db and starts the ingester.
func openEnv(ctx context.Context, storeDir, db string, log *slog.Logger) (_ *env, err error) {
	e := &env{cfg: ingest.DefaultConfig()}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	e.cfg.FlushInterval = 50 * time.Millisecond
	if e.srv, err = bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: storeDir}, log); err != nil {
		return nil, err
	}
	if e.nc, err = bus.Connect(bus.ConnConfig{InProcess: e.srv.NATS(), Name: "evosignal-agentsim-demo"}, log); err != nil {
		return nil, err
	}
	if e.js, err = jetstream.New(e.nc); err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	sc := bus.DefaultStream()
	e.cfg.Stream, e.cfg.Prefix = sc.Name, sc.Prefix
	if e.stream, err = bus.EnsureStream(ctx, e.js, sc); err != nil {
		return nil, err
	}
	if e.kv, err = bus.EnsureRulesBucket(ctx, e.js, bus.DefaultRulesBucket()); err != nil {
		return nil, err
	}
	if e.st, err = store.OpenWith(ctx, db, store.Options{Taxonomy: taxonomy.Default()}); err != nil {
		return nil, err
	}
	in, err := ingest.New(e.cfg, e.st, log)
	if err != nil {
		return nil, err
	}
	ictx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.cancel, e.done = cancel, make(chan struct{})
	go func() {
		defer close(e.done)
		e.err = in.Run(ictx, e.js)
	}()
	return e, nil
}

// waitIngested waits until the store's position reaches the stream's last
// sequence: every event published so far is in the database. It returns
// that sequence.
func (e *env) waitIngested(ctx context.Context) (uint64, error) {
	info, err := e.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream %s info: %w", e.cfg.Stream, err)
	}
	last := info.State.LastSeq
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		pos, err := e.st.Position(ctx, e.cfg.Stream)
		if err != nil {
			return 0, err
		}
		if pos >= last {
			return last, nil
		}
		select {
		case <-tick.C:
		case <-e.done:
			err := e.err
			if err == nil {
				err = errors.New("it returned without an error")
			}
			return 0, fmt.Errorf("ingester stopped at seq %d of %d: %w", pos, last, err)
		case <-ctx.Done():
			return 0, fmt.Errorf("wait for ingest of seq %d (at %d): %w", last, pos, ctx.Err())
		}
	}
}

// Close stops the ingester (it commits and acks the batch in hand), sends
// the last acks, then closes the connection, the database and the server.
func (e *env) Close() error {
	var errs []error
	if e.cancel != nil {
		e.cancel()
		<-e.done
		errs = append(errs, e.err)
	}
	if e.nc != nil {
		if err := e.nc.FlushTimeout(5 * time.Second); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, fmt.Errorf("flush acks: %w", err))
		}
		e.nc.Close()
	}
	if e.st != nil {
		errs = append(errs, e.st.Close())
	}
	if e.srv != nil {
		e.srv.Close()
	}
	return errors.Join(errs...)
}
