package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/synth"
)

// env is what every phase gets: the shared work directory and the sizes.
type env struct {
	dir        string // work directory shared by the phases
	events     int    // N
	pool       int    // pre-generated payloads cycled through by the raw phases
	dupFrac    float64
	seed       uint64
	cpuprofile string // profile the ingest phase into this file
	progress   time.Duration
	memLimit   string // store.Options.MemoryLimit of the ingester; empty: its default
	log        *slog.Logger
	// batch and batchBytes, when set, fix the ingester's batches (its
	// BatchSize and MaxBatchSize, its MaxBatchBytes) and write-steps'.
	batch, batchBytes int
	// duckCheckpoint, when set, is store.Options.DuckDBCheckpointThreshold
	// of the ingester: DuckDB checkpoints inside commits, as before issue 24.
	duckCheckpoint string
	ckThreshold    string // store.Options.CheckpointThreshold; empty: its default
	// commits times the commits of the pipeline startPipeline opened last.
	commits *commitTimes
}

// The work directory: one sub-directory per scenario, each with its own
// JetStream store, database and manifest.
const (
	scRaw        = "raw"
	scRawBoth    = "raw-both" // js-both's own raw stream, so js-consume's stays as js-publish left it
	scBacklog    = "backlog"
	scConcurrent = "concurrent"
)

func (e *env) natsDir(sc string) string { return filepath.Join(e.dir, sc, "nats") }
func (e *env) dbPath(sc string) string  { return filepath.Join(e.dir, sc, "evo.duckdb") }

// fresh empties a scenario's directory: a phase that produces a scenario's
// state starts from nothing, so that it can be run again with -only.
func (e *env) fresh(sc string) error {
	if err := os.RemoveAll(filepath.Join(e.dir, sc)); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(e.dir, sc), 0o755)
}

// removeDB deletes a database file and its write-ahead log.
func removeDB(path string) error {
	for _, p := range []string{path, path + ".wal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// manifest carries what one phase learnt to the next (they may run in
// different processes).
type manifest struct {
	Events      int64  `json:"events"`
	LastSeq     uint64 `json:"last_seq"`
	StreamBytes uint64 `json:"stream_bytes"`
	Ingested    bool   `json:"ingested"`
}

func (e *env) readManifest(sc string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(filepath.Join(e.dir, sc, "manifest.json"))
	if err != nil {
		return m, fmt.Errorf("read manifest of %s (did its publish phase run?): %w", sc, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("read manifest of %s: %w", sc, err)
	}
	return m, nil
}

func (e *env) writeManifest(sc string, m manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(e.dir, sc), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(e.dir, sc, "manifest.json"), b, 0o644)
}

// natsEnv is an embedded server with a file store and one in-process
// connection.
type natsEnv struct {
	srv *bus.Server
	nc  *nats.Conn
	js  jetstream.JetStream
}

// startNATS starts the embedded server on the scenario's store directory,
// exactly as cmd/ingest does (its log at warn level and above), and connects
// in process.
func (e *env) startNATS(ctx context.Context, sc string, opts ...jetstream.JetStreamOpt) (*natsEnv, error) {
	dir := e.natsDir(sc)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	quiet := slog.New(e.log.Handler()).With("component", "nats")
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: dir}, warnOnly(quiet))
	if err != nil {
		return nil, err
	}
	n := &natsEnv{srv: srv}
	if n.nc, n.js, err = n.connect("bench", opts...); err != nil {
		srv.Close()
		return nil, err
	}
	return n, nil
}

// connect opens another in-process client connection.
func (n *natsEnv) connect(name string, opts ...jetstream.JetStreamOpt) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := bus.Connect(bus.ConnConfig{InProcess: n.srv.NATS(), Name: name}, nil)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc, opts...)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream on connection %s: %w", name, err)
	}
	return nc, js, nil
}

func (n *natsEnv) Close() {
	// Best effort: only acks of an already measured section can be pending.
	_ = n.nc.FlushTimeout(5 * time.Second)
	n.nc.Close()
	n.srv.Close()
}

// startPipeline opens the pipeline on the scenario's JetStream store and
// database, as cmd/ingest runs it (the server's log at warn level and
// above), without starting the ingester (startIngest does).
func (e *env) startPipeline(ctx context.Context, sc string) (*pipeline.Pipeline, error) {
	dir := e.natsDir(sc)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg := pipeline.DefaultConfig()
	cfg.DB = e.dbPath(sc)
	cfg.Store.MemoryLimit = e.memLimit
	cfg.Store.DuckDBCheckpointThreshold = e.duckCheckpoint
	cfg.Store.CheckpointThreshold = e.ckThreshold
	e.commits = &commitTimes{}
	cfg.Store.StepTimer = e.commits.step
	cfg.Server = bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: dir}
	cfg.ServerLog = warnOnly(slog.New(e.log.Handler()).With("component", "nats"))
	cfg.NATS.Name = "bench"
	cfg.Log = e.log.With("component", "ingest")
	if e.batch > 0 {
		cfg.Ingest.BatchSize, cfg.Ingest.MaxBatchSize = e.batch, e.batch
	}
	if e.batchBytes > 0 {
		cfg.Ingest.MaxBatchBytes = e.batchBytes
	}
	return pipeline.Open(ctx, cfg)
}

// startWithAgents opens the pipeline (startPipeline) and the agents' own
// connection to its server; stop closes both.
func (e *env) startWithAgents(ctx context.Context, sc string) (_ *pipeline.Pipeline, _ jetstream.JetStream, stop func(), err error) {
	p, err := e.startPipeline(ctx, sc)
	if err != nil {
		return nil, nil, nil, err
	}
	nc, err := p.Connect("bench-agents")
	if err != nil {
		p.Close()
		return nil, nil, nil, err
	}
	stop = func() {
		nc.Close()
		p.Close()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("jetstream on connection bench-agents: %w", err)
	}
	return p, js, stop, nil
}

// warnOnly filters a logger to warnings and errors.
func warnOnly(l *slog.Logger) *slog.Logger {
	return slog.New(levelHandler{slog.LevelWarn, l.Handler()})
}

type levelHandler struct {
	min slog.Level
	slog.Handler
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return levelHandler{h.min, h.Handler.WithAttrs(a)}
}

func (h levelHandler) WithGroup(g string) slog.Handler {
	return levelHandler{h.min, h.Handler.WithGroup(g)}
}

// payload is one pre-generated event as an agent would send it.
type payload struct {
	ev      *events.Event
	body    []byte // json.Marshal(ev), what agent.Publisher sends
	subject string // <prefix>.<agent>
}

// genPool generates n synth events (whole sessions, the last one cut) and
// marshals them, so that the raw phases cycle through payloads of the real
// size distribution without timing their generation.
func genPool(ctx context.Context, seed uint64, n int, prefix string) ([]payload, error) {
	c := &collect{max: n}
	g := synth.New(seed, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	for len(c.evs) < n {
		if _, err := g.Session(ctx, c); err != nil && !errors.Is(err, errEnough) {
			return nil, fmt.Errorf("generate payload pool: %w", err)
		}
	}
	out := make([]payload, len(c.evs))
	for i, ev := range c.evs {
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
		}
		out[i] = payload{ev: ev, body: b, subject: prefix + "." + events.AgentOf(ev.Source)}
	}
	return out, nil
}

// errEnough stops a synth session once a sink has what it needs.
var errEnough = errors.New("enough events")

type collect struct {
	max int
	evs []*events.Event
}

func (c *collect) Send(_ context.Context, e *events.Event) error {
	if len(c.evs) >= c.max {
		return errEnough
	}
	c.evs = append(c.evs, e)
	return nil
}

// limit forwards to next until n events have been sent, then refuses with
// errEnough.
type limit struct {
	next agent.Sink
	n    int
	sent int
}

func (l *limit) Send(ctx context.Context, e *events.Event) error {
	if l.sent >= l.n {
		return errEnough
	}
	l.sent++
	return l.next.Send(ctx, e)
}

// sessions drives synth sessions into sink until it refuses with errEnough.
func sessions(ctx context.Context, g *synth.Generator, sink agent.Sink) error {
	for {
		_, err := g.Session(ctx, sink)
		if errors.Is(err, errEnough) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// ticker calls report every d until the returned stop is called; stop waits
// for it.
func ticker(ctx context.Context, d time.Duration, report func()) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				report()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// memAttrs are the memory figures progress lines carry.
func memAttrs() []any {
	return []any{"rss_mib", int(mib(procStatus("VmRSS"))), "go_heap_mib", int(mib(int64(heapNow()))),
		"go_mapped_mib", int(mib(int64(goMapped())))}
}

// duckMem is DuckDB's own account of its memory (duckdb_memory(): the
// buffer pool and what it tracks beside it) and of its spill files, for
// progress lines: with memAttrs, where a process's memory goes.
func duckMem(ctx context.Context, st *store.Store) []any {
	var used, temp int64
	err := st.DB().QueryRowContext(ctx,
		"SELECT coalesce(sum(memory_usage_bytes), 0), coalesce(sum(temporary_storage_bytes), 0) FROM duckdb_memory()").Scan(&used, &temp)
	if err != nil {
		return []any{"duckdb_mem_err", err}
	}
	return []any{"duckdb_mib", int(mib(used)), "duckdb_spilled_mib", int(mib(temp))}
}
