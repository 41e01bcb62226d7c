package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/otlpin"
	"github.com/evosignal/evosignal/internal/query"
	"github.com/evosignal/evosignal/internal/store"
)

const usage = `Usage: ingest [flags]

Moves agent events (CloudEvents v1, see schema/README.md) from NATS JetStream
into a DuckDB file: the event log, typed tables, dead letters. Every event is
stored exactly once; bad input is dead-lettered with its reason.

  ingest                          embedded nats-server on 127.0.0.1:4222, db evosignal.duckdb
  ingest -nats nats://host:4222   an existing server or cluster
  ingest -file events.jsonl       load a JSON-lines file (- for stdin) and exit
  ingest -rebuild                 derive the typed tables and stored facts again from the event log and exit

Flags:
`

type options struct {
	db, file, natsURL, listen, storeDir, httpAddr string
	otlp                                          string
	conn                                          bus.ConnConfig
	stream                                        bus.StreamConfig
	cfg                                           ingest.Config
	rebuild                                       bool
	taxonomy                                      string
	logLevel, logFormat                           string
	queryOn                                       bool
	query                                         query.Config
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{stream: bus.DefaultStream(), cfg: ingest.DefaultConfig(), query: query.DefaultConfig()}
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.db, "db", "evosignal.duckdb", "DuckDB database `file` to write (created if missing)")
	fs.StringVar(&o.file, "file", "", "load events from a JSON-lines `file` (- for stdin) instead of NATS, then exit")
	fs.BoolVar(&o.rebuild, "rebuild", false, "rebuild the typed tables and stored facts from the events table, then exit")
	fs.StringVar(&o.natsURL, "nats", "", "NATS server `URL`(s), comma-separated; empty runs an embedded server")
	cli.ConnFlags(fs, &o.conn)
	fs.StringVar(&o.listen, "listen", bus.DefaultListen, "embedded server: client `address` (host:port; port 0 picks one)")
	fs.StringVar(&o.storeDir, "store", "", "embedded server: JetStream store `dir` (default: <db>.jetstream beside the db)")
	fs.StringVar(&o.stream.Name, "stream", o.stream.Name, "JetStream stream `name`")
	fs.StringVar(&o.stream.Prefix, "prefix", o.stream.Prefix, "subject `prefix`: agents publish on <prefix>.<agent>[.…]")
	fs.DurationVar(&o.stream.MaxAge, "max-age", o.stream.MaxAge, "stream retention: drop messages older than this (0 = no limit)")
	fs.Int64Var(&o.stream.MaxBytes, "max-bytes", o.stream.MaxBytes, "stream retention: size limit in bytes (-1 = none)")
	fs.DurationVar(&o.stream.Duplicates, "dup-window", o.stream.Duplicates, "JetStream duplicate window for Nats-Msg-Id (later re-sends are still skipped by the ingester)")
	fs.IntVar(&o.stream.Replicas, "replicas", o.stream.Replicas, "stream replicas (3 or 5 on a cluster)")
	fs.StringVar(&o.cfg.Durable, "consumer", o.cfg.Durable, "durable consumer `name` (one per database)")
	fs.IntVar(&o.cfg.BatchSize, "batch", o.cfg.BatchSize, "messages per transaction at most")
	fs.DurationVar(&o.cfg.FlushInterval, "flush", o.cfg.FlushInterval, "commit a partial batch this long after its first message")
	fs.IntVar(&o.cfg.MaxEventBytes, "max-event-bytes", o.cfg.MaxEventBytes, "dead-letter events larger than this")
	fs.DurationVar(&o.cfg.AckWait, "ack-wait", o.cfg.AckWait, "JetStream ack wait before a redelivery")
	fs.DurationVar(&o.cfg.Progress, "progress", o.cfg.Progress, "log progress this often")
	fs.StringVar(&o.taxonomy, "taxonomy", "", "task-type taxonomy `file` the stored facts are classified with (JSON, as analyze -taxonomy; default: the embedded one). Analyses with another taxonomy classify on the fly")
	fs.DurationVar(&o.cfg.FactsEvery, "facts-every", o.cfg.FactsEvery, "store the analysis facts of the sessions written this often while keeping up: 12 times as long through a backlog, also on catching up, idle and stop, never sooner than 9× the last refresh's duration (docs/sql.md, \"Stored facts\")")
	fs.StringVar(&o.otlp, "otlp", "", "receive OpenTelemetry GenAI traces over OTLP/HTTP on this `address` (e.g. :4318), POST /v1/traces (docs/otel.md); off when empty")
	fs.StringVar(&o.httpAddr, "http", "", "serve /metrics and /healthz on this `address` (e.g. :9090); off when empty")
	fs.BoolVar(&o.queryOn, "query", true, "answer read-only SQL over NATS (docs/query-service.md); the database is then locked down: no files, extensions or settings changes")
	fs.StringVar(&o.query.Subject, "query-subject", o.query.Subject, "NATS `subject` the query service answers on (one per database)")
	fs.DurationVar(&o.query.Timeout, "query-timeout", o.query.Timeout, "query service: longest a query may run (a request may ask for less)")
	fs.Int64Var(&o.query.MaxRows, "query-max-rows", o.query.MaxRows, "query service: most rows in an answer; more are cut off and the answer says so")
	cli.LogFlags(fs, &o.logLevel, &o.logFormat, "info")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, flag.ErrHelp
		}
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ingest: unexpected arguments %q\n", fs.Args())
		return nil, errUsage
	}
	o.cfg.Stream, o.cfg.Prefix = o.stream.Name, o.stream.Prefix
	o.conn.URL, o.conn.Name = o.natsURL, "evosignal-ingest"
	if o.storeDir == "" {
		o.storeDir = strings.TrimSuffix(o.db, filepath.Ext(o.db)) + ".jetstream"
	}
	var errs []error
	if o.file != "" && o.rebuild {
		errs = append(errs, errors.New("-file and -rebuild exclude each other"))
	}
	errs = append(errs, o.cfg.Validate())
	if o.file == "" && !o.rebuild {
		errs = append(errs, o.stream.Validate())
		if o.queryOn {
			errs = append(errs, o.query.Validate())
		}
		if o.natsURL != "" {
			errs = append(errs, o.conn.Validate())
		}
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(stderr, "ingest: %v\n", err)
		return nil, errUsage
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log, err := cli.NewLogger(stderr, o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	tax := metrics.DefaultTaxonomy()
	if o.taxonomy != "" {
		if tax, err = metrics.LoadTaxonomy(o.taxonomy); err != nil {
			return err
		}
	}
	st, err := store.OpenWith(ctx, o.db, store.Options{Taxonomy: tax})
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return fmt.Errorf("%w\n(only one process can write %s; stop the other ingester, or read through it)", err, o.db)
		}
		return err
	}
	defer st.Close()
	in, err := ingest.New(o.cfg, st, log)
	if err != nil {
		return err
	}
	switch {
	case o.rebuild:
		t0 := time.Now()
		if err := st.Rebuild(ctx); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rebuilt the typed tables and analysis facts of %s from the event log in %s\n", o.db, time.Since(t0).Round(time.Millisecond))
		return nil
	case o.file != "":
		return loadFile(ctx, in, o.file, stdin, stdout)
	}
	if o.httpAddr != "" {
		stopHTTP, err := serveHTTP(o.httpAddr, in.Handler(), log)
		if err != nil {
			return err
		}
		defer stopHTTP()
	}
	return runNATS(ctx, o, st, in, log)
}

func loadFile(ctx context.Context, in *ingest.Ingester, name string, stdin io.Reader, stdout io.Writer) error {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	t0 := time.Now()
	res, err := in.LoadFile(ctx, r, name)
	fmt.Fprintf(stdout, "%s: accepted %d, duplicates %d, dead-lettered %d (%s)\n",
		name, res.Accepted, res.Duplicates, res.DeadLetters, time.Since(t0).Round(time.Millisecond))
	return err
}

func runNATS(ctx context.Context, o *options, st *store.Store, in *ingest.Ingester, log *slog.Logger) error {
	conn := o.conn
	if o.natsURL == "" {
		srv, err := bus.StartServer(bus.ServerConfig{Listen: o.listen, StoreDir: o.storeDir}, log)
		if err != nil {
			return err
		}
		defer srv.Close()
		log.Info("embedded nats-server ready", "url", srv.ClientURL(), "store", o.storeDir)
		conn.InProcess = srv.NATS()
	}
	nc, err := bus.Connect(conn, log)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if _, err := bus.EnsureStream(ctx, js, o.stream); err != nil {
		return err
	}
	if o.otlp != "" {
		rc, err := otlpin.Start(otlpin.DefaultConfig(o.otlp, o.stream.Prefix), js, log.With("component", "otlp"))
		if err != nil {
			return err
		}
		defer closeOTLP(rc, log)
	}
	if o.queryOn {
		qs, err := query.Start(ctx, nc, st.DB(), o.query, log.With("component", "query"))
		if err != nil {
			return err
		}
		defer qs.Close() // before the connection and the store close
		log.Info("answering read-only SQL", "subject", qs.Subject(), "timeout", o.query.Timeout, "max_rows", o.query.MaxRows)
	}
	runErr := in.Run(ctx, js)
	// Send the last acks before closing.
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		log.Warn("flush acks", "err", err)
	}
	s := in.Stats().Snapshot()
	log.Info("stopped", "messages", s.Messages, "accepted", s.Accepted, "duplicates", s.Duplicates,
		"dead_letters", s.DeadLetters, "last_seq", s.LastSeq)
	return runErr
}

func serveHTTP(addr string, h http.Handler, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-http %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "err", err)
		}
	}()
	log.Info("serving /metrics and /healthz", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}, nil
}

// closeOTLP stops the OTLP receiver and delivers what it mapped, within a
// bound: the stream is still reachable, the consumer has stopped.
func closeOTLP(rc *otlpin.Receiver, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rc.Close(ctx); err != nil {
		log.Warn("stop otlp receiver", "err", err)
	}
}
