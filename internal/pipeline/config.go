// Package pipeline owns a running evosignal: the NATS side (an embedded
// nats-server, or a given server or cluster), the event stream, the rules
// key-value bucket, the DuckDB store with its taxonomy, the ingester, and
// optionally the read-only query service and the HTTP endpoints. Commands,
// the demo, the bench and the end-to-end tests start it with one call
// instead of wiring the parts by hand:
//
//	p, err := pipeline.Start(ctx, cfg)
//	…publish…
//	p.WaitIngested(ctx) // everything published so far is committed
//	p.Close()           // ingester, acks, connection, store, server: in order
package pipeline

import (
	"errors"
	"log/slog"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/otlpin"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/web"
)

// Config is one running evosignal. DefaultConfig holds the embedded
// defaults; a caller sets DB and, for the embedded server, Server.StoreDir.
type Config struct {
	// DB is the DuckDB file the ingester writes (created if missing).
	DB string
	// Store tunes the store; Store.Taxonomy classifies the stored facts
	// (DefaultConfig: the embedded default taxonomy).
	Store store.Options

	// NATS says how to reach a NATS server or cluster. With an empty URL the
	// pipeline runs an embedded server (Server) and connects in process.
	NATS bus.ConnConfig
	// Server is the embedded server, used when NATS.URL is empty.
	Server bus.ServerConfig
	// ServerLog receives the embedded server's log lines; nil uses Log.
	ServerLog *slog.Logger

	// Stream is the event stream, created or updated on Start; the ingester
	// reads it (Ingest.Stream, Ingest.Prefix and Ingest.Partitions are
	// taken from it).
	Stream bus.StreamConfig
	// Rules, when set, is the rules key-value bucket ensured on Start
	// (KV returns it).
	Rules *bus.RulesBucketConfig
	// Ingest tunes the ingester.
	Ingest ingest.Config
	// Query, when set, starts the read-only query service on the
	// connection.
	Query *sqlservice.Config
	// OTLP, when set, receives OpenTelemetry GenAI traces over OTLP/HTTP on
	// this address (POST /v1/traces) and publishes the events they map to
	// on the stream, as any agent does.
	OTLP string
	// OTLPReceiver tunes that receiver (its limits); its Addr and Prefix
	// are taken from OTLP and Stream, its DeadLetter is the ingester's.
	OTLPReceiver otlpin.Config
	// HTTP, when set, serves the ingester's /metrics and /healthz on this
	// address (and POST /seal with a Lake).
	HTTP string
	// Pages, when set with HTTP, serves the live pages (internal/web) at /
	// on the same address, read through the query service's guard (the
	// database is locked down); its Querier is the pipeline's, its
	// Taxonomy defaults to Store.Taxonomy (a *taxonomy.Taxonomy).
	Pages *web.Config
	// Lake, when set, seals the database into an Iceberg lake on an
	// interval, on demand and on Close.
	Lake *LakeConfig

	// Log receives the pipeline's and the ingester's log lines; nil
	// discards them.
	Log *slog.Logger
}

// DefaultConfig returns the embedded defaults: an embedded server on
// bus.DefaultListen, the default stream, the ingester's defaults, the
// default taxonomy; no rules bucket, query service or HTTP.
func DefaultConfig() Config {
	return Config{
		Store:  store.Options{Taxonomy: taxonomy.Default()},
		NATS:   bus.ConnConfig{Name: "evosignal-ingest"},
		Server: bus.ServerConfig{Listen: bus.DefaultListen},
		Stream: bus.DefaultStream(),
		Ingest: ingest.DefaultConfig(),

		OTLPReceiver: otlpin.DefaultConfig("", ""),
	}
}

// Embedded reports whether the pipeline runs its own nats-server.
func (c Config) Embedded() bool { return c.NATS.URL == "" }

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if c.DB == "" {
		errs = append(errs, errors.New("pipeline: no database file"))
	}
	if c.Embedded() {
		errs = append(errs, c.Server.Validate())
		if c.Server.ConfigFile != "" {
			// The embedded server then has users: check the credentials
			// the pipeline connects with.
			nc := c.NATS
			nc.URL = "in-process"
			errs = append(errs, nc.Validate())
		}
	} else {
		errs = append(errs, c.NATS.Validate())
		if c.Server.ConfigFile != "" {
			errs = append(errs, errors.New("pipeline: a server configuration file configures the embedded server; with a NATS URL, configure that server instead"))
		}
	}
	errs = append(errs, c.Stream.Validate(), c.ingestConfig().Validate())
	if c.Rules != nil {
		errs = append(errs, c.Rules.Validate())
	}
	if c.Query != nil {
		errs = append(errs, c.Query.Validate())
	}
	if c.OTLP != "" {
		errs = append(errs, c.otlpConfig().Validate())
	}
	if c.Pages != nil && c.HTTP == "" {
		errs = append(errs, errors.New("pipeline: the pages are served on the HTTP address, and none is set"))
	}
	if c.Lake != nil && (c.Lake.Lake == nil || c.Lake.Shard == "") {
		errs = append(errs, errors.New("pipeline: a lake needs the opened lake and the shard's name"))
	}
	return errors.Join(errs...)
}

// ingestConfig is Ingest reading Stream.
func (c Config) ingestConfig() ingest.Config {
	ic := c.Ingest
	ic.Stream, ic.Prefix, ic.Partitions = c.Stream.Name, c.Stream.Prefix, c.Stream.Partitions
	return ic
}

// otlpConfig is OTLPReceiver on OTLP, under Stream's prefix.
func (c Config) otlpConfig() otlpin.Config {
	oc := c.OTLPReceiver
	oc.Addr, oc.Prefix = c.OTLP, c.Stream.Prefix
	return oc
}

// flushAcks bounds how long Close waits to send the last acks.
const flushAcks = 5 * time.Second

// closeOTLP bounds how long Close waits for the OTLP receiver to deliver
// what it mapped.
const closeOTLP = 30 * time.Second
