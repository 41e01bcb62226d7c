package ingest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/lake"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/web"
)

// usage is the help of ingest before its flags, naming it as the user runs
// it under ctx.
func usage(ctx context.Context) string { return fmt.Sprintf(usageFormat, cli.Cmd(ctx, "ingest")) }

// usageFormat is usage with the command as %[1]s.
const usageFormat = `Usage: %[1]s [flags]

Moves agent events (CloudEvents v1, see schema/README.md) from NATS JetStream
into a DuckDB file: the event log, typed tables, dead letters. Every event is
stored exactly once; bad input is dead-lettered with its reason.

  %[1]s                          embedded nats-server on 127.0.0.1:4222, db evosignal.duckdb
  %[1]s -nats nats://host:4222   an existing server or cluster
  %[1]s -http :8080              … and the live pages at http://localhost:8080/ (docs/page.md), /metrics, /healthz
  %[1]s -nats nats://host:4222 -partitions 4 -partition 0
      partition 0 of the stream partitioned in 4, into its own database (docs/scale.md)
  %[1]s -file events.jsonl       load a JSON-lines file (- for stdin) and exit; status 1 if a line was dead-lettered
  %[1]s -file events.jsonl -lake lake   … then seal the database into the Iceberg lake in lake/ (analyze -lake reads it)
  %[1]s -nats nats://host:4222 -partitions 4 -partition 0 -lake lake
      … and seal it into the lake every -seal-every, on POST /seal (-http) and on stop
  %[1]s -nats nats://host:4222 -partitions 4 -partition 0 -replica b -lake lake
      a second replica of partition 0 (its own database and consumer): the lake gets its events once
  %[1]s -nats nats://host:4222 -partitions 4 -partition 0 \
      -lake postgres://evo@pg:5432/lake -lake-warehouse s3://bucket/evosignal
      the same into a lake beyond one machine: a PostgreSQL catalog, an S3 warehouse
  %[1]s -rebuild                 derive the typed tables and stored facts again from the event log and exit

Flags:
`

type options struct {
	file                string
	allowDead           bool
	lake, shard         string
	sealEvery           time.Duration
	lakeKeep            time.Duration
	lakeWarehouse       string
	replica             string
	rebuild             bool
	replay, dryRun      bool
	taxonomy            string
	queryOn             bool
	pagesOn             bool
	query               sqlservice.Config
	cfg                 pipeline.Config
	logLevel, logFormat string
}

func parse(ctx context.Context, args []string, stderr io.Writer) (*options, error) {
	o := &options{cfg: pipeline.DefaultConfig(), query: sqlservice.DefaultConfig()}
	c := &o.cfg
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage(ctx))
		fs.PrintDefaults()
	}
	fs.StringVar(&c.DB, "db", "evosignal.duckdb", "DuckDB database `file` to write (created if missing)")
	fs.StringVar(&o.file, "file", "", "load events from a JSON-lines `file` (- for stdin) instead of NATS, then exit")
	fs.BoolVar(&o.allowDead, "allow-dead-letters", false, "with -file: exit 0 even when lines were dead-lettered (they are stored in dead_letters either way)")
	fs.StringVar(&o.lake, "lake", "", "seal the database into the Iceberg lake `uri`, created if missing (docs/scale.md, \"The lake\"): a directory, or postgres://USER@HOST/DB for a PostgreSQL catalog with -lake-warehouse; with -file once loaded, else every -seal-every, on POST /seal and on stop")
	fs.StringVar(&o.lakeWarehouse, "lake-warehouse", "", "with -lake postgres://…: where a new lake keeps its files, s3://BUCKET/PREFIX (credentials, region, endpoint: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL_S3) or a `directory`; recorded in the lake, needed only to create it")
	fs.StringVar(&o.shard, "shard", "", "with -lake: this database's `name` in the lake (default with -file: the -db file's name without its extension; else the stream's name, with -p<K> for a partition: replicas of a partition share it)")
	fs.DurationVar(&o.sealEvery, "seal-every", time.Minute, "with -lake, reading NATS: seal this often (0: only on POST /seal and on stop)")
	fs.DurationVar(&o.lakeKeep, "lake-keep", 24*time.Hour, "with -lake, reading NATS: keep the lake's tables' snapshots this long, and expire older ones hourly with the files only they reference (a seal's replaced facts; 0: keep all)")
	fs.StringVar(&o.replica, "replica", "", "another replica of the same stream or partition, `name`d: defaults -db and -consumer with -<name> (its own database and consumer; replicas share -shard and -query-subject, docs/scale.md)")
	fs.BoolVar(&o.rebuild, "rebuild", false, "rebuild the typed tables and stored facts from the events table, then exit")
	fs.BoolVar(&o.replay, "replay-dead-letters", false, "run the dead letters no replay resolved again through the current validation and store, print each outcome, then exit")
	fs.BoolVar(&o.dryRun, "dry-run", false, "with -replay-dead-letters: print what a replay would do, and write nothing")
	fs.StringVar(&c.NATS.URL, "nats", cli.URLFromEnv(), "NATS server `URL`(s), comma-separated (default $NATS_URL); empty runs an embedded server")
	cli.ConnFlags(fs, &c.NATS)
	fs.StringVar(&c.Server.Listen, "listen", c.Server.Listen, "embedded server: client `address` (host:port; port 0 picks one)")
	fs.StringVar(&c.Server.StoreDir, "store", "", "embedded server: JetStream store `dir` (default: <db>.jetstream beside the db)")
	fs.StringVar(&c.Server.ConfigFile, "server-config", "", "embedded server: nats-server configuration `file` (users and subject permissions, TLS; docs/operations.md, \"Permissions\"); connect with -user/-password or -creds")
	fs.StringVar(&c.Stream.Name, "stream", c.Stream.Name, "JetStream stream `name`")
	fs.StringVar(&c.Stream.Prefix, "prefix", c.Stream.Prefix, "subject `prefix`: agents publish on <prefix>.<agent>[.…]")
	fs.DurationVar(&c.Stream.MaxAge, "max-age", c.Stream.MaxAge, "stream retention: drop messages older than this (0 = no limit)")
	fs.Int64Var(&c.Stream.MaxBytes, "max-bytes", c.Stream.MaxBytes, "stream retention: size limit in bytes (-1 = none)")
	fs.DurationVar(&c.Stream.Duplicates, "dup-window", c.Stream.Duplicates, "JetStream duplicate window for Nats-Msg-Id (later re-sends are still skipped by the ingester)")
	fs.IntVar(&c.Stream.Replicas, "replicas", c.Stream.Replicas, "stream replicas (3 or 5 on a cluster)")
	fs.IntVar(&c.Stream.Partitions, "partitions", 0, "partition the stream in `N` (its subject transform <prefix>.> → <prefix>.{{partition(N)}}.>, docs/scale.md): every ingester of the stream gives the same N; 0 = not partitioned")
	fs.IntVar(&c.Ingest.Partition, "partition", -1, "with -partitions: read partition `K` only (0 to N-1) into its own database; defaults then -db evosignal-p<K>.duckdb, -consumer <consumer>-p<K>, -query-subject <subject>.p<K>; -1 reads every partition")
	fs.StringVar(&c.Ingest.Durable, "consumer", c.Ingest.Durable, "durable consumer `name` (one per database)")
	fs.IntVar(&c.Ingest.BatchSize, "batch", c.Ingest.BatchSize, "messages per transaction while keeping up with the stream (reading a file: at most)")
	fs.IntVar(&c.Ingest.MaxBatchSize, "max-batch", c.Ingest.MaxBatchSize, "messages per transaction at most while behind: batches double from -batch up to this while more than a batch waits in the stream, and go back to -batch once caught up")
	fs.IntVar(&c.Ingest.MaxBatchBytes, "max-batch-bytes", c.Ingest.MaxBatchBytes, "bytes of messages (payload and headers) per transaction at most, whatever their count; about twice this is in hand while a batch commits")
	fs.DurationVar(&c.Ingest.FlushInterval, "flush", c.Ingest.FlushInterval, "commit a partial batch this long after its first message")
	fs.IntVar(&c.Ingest.MaxEventBytes, "max-event-bytes", c.Ingest.MaxEventBytes, "dead-letter events larger than this")
	fs.IntVar(&c.Ingest.MaxPlanTasks, "max-plan-tasks", c.Ingest.MaxPlanTasks, "dead-letter plans listing (or dropping) more tasks than this (plan_too_large)")
	fs.DurationVar(&c.Ingest.AckWait, "ack-wait", c.Ingest.AckWait, "JetStream ack wait before a redelivery")
	fs.DurationVar(&c.Ingest.Progress, "progress", c.Ingest.Progress, "log progress this often")
	fs.StringVar(&o.taxonomy, "taxonomy", "", "task-type taxonomy `file` the stored facts are classified with (JSON, as analyze -taxonomy; default: the embedded one). Analyses with another taxonomy classify on the fly")
	fs.DurationVar(&c.Ingest.FactsEvery, "facts-every", c.Ingest.FactsEvery, "store the analysis facts of the sessions written this often while keeping up: 12 times as long through a backlog, also on catching up, idle and stop, never sooner than 9× the last refresh's duration (docs/sql.md, \"Stored facts\")")
	fs.StringVar(&c.Store.MemoryLimit, "memory-limit", "", fmt.Sprintf("DuckDB memory limit shared by ingestion, facts and the query service, e.g. 2GB (default %dMiB, or a quarter of RAM or of the cgroup limit if less); beyond it DuckDB spills to -temp-dir, a query that cannot spill fails, ingestion waits and retries. With the Go heap's soft limit (%dMiB, or $GOMEMLIMIT) the ingester's memory budget, 1.15-1.65GiB of RSS in all (docs/operations.md)",
		store.MaxDefaultMemoryLimit>>20, store.GoMemoryLimit>>20))
	fs.StringVar(&c.Store.CheckpointThreshold, "checkpoint-threshold", "", fmt.Sprintf("checkpoint the WAL into the database file when a commit leaves it this large (default %s), on a connection of its own beside the writer, never inside a commit (docs/operations.md, \"Checkpoints\")", store.DefaultCheckpointThreshold))
	fs.StringVar(&c.Store.WALLimit, "wal-limit", "", fmt.Sprintf("a batch waits for a checkpoint before it begins when the WAL is this large (default %s): the WAL's bound when checkpoints fall behind or fail", store.DefaultWALLimit))
	fs.StringVar(&c.Store.TempDir, "temp-dir", "", "`dir` where DuckDB spills what does not fit under -memory-limit (default: <db>.tmp)")
	fs.DurationVar(&c.Store.DeadLetterRetention, "dead-letter-retention", 0, fmt.Sprintf("delete dead letters received longer ago than this, on start and then hourly (0 keeps them forever); each keeps at most its first %d KiB, with the size and SHA-256 of the whole (docs/operations.md, \"Limits\")", store.MaxDeadLetterRaw>>10))
	fs.DurationVar(&c.Ingest.RetryMax, "retry-max", c.Ingest.RetryMax, "longest wait between commit attempts while the database fails (disk full, out of memory); nothing is acked or dead-lettered meanwhile")
	fs.StringVar(&c.OTLP, "otlp", "", "receive OpenTelemetry traces and logs of agents over OTLP/HTTP on this `address` (e.g. :4318), POST /v1/traces and /v1/logs (docs/otel.md); off when empty")
	oc := &c.OTLPReceiver
	fs.Int64Var(&oc.MaxBody, "otlp-max-body", oc.MaxBody, "OTLP: largest request body in bytes, also after decompression; larger ones are refused with 413")
	fs.IntVar(&oc.MaxRequests, "otlp-max-requests", oc.MaxRequests, "OTLP: requests served at once; more are refused with 503 and Retry-After: 1 before their body is read")
	fs.Int64Var(&oc.Mapper.MaxBytes, "otlp-max-buffer-bytes", oc.Mapper.MaxBytes, "OTLP: bytes of spans and log records buffered for traces not complete yet; beyond, the least recently active trace is dropped unmapped (counted, logged, noted on stop)")
	fs.IntVar(&oc.Mapper.MaxSpans, "otlp-max-buffer-spans", oc.Mapper.MaxSpans, "OTLP: spans and log records buffered at most, as -otlp-max-buffer-bytes")
	fs.DurationVar(&oc.Mapper.Settle, "otlp-settle", oc.Mapper.Settle, "OTLP: a complete trace whose spans came in several requests is mapped once nothing of it arrived for this long (a span still on its way joins it); one that came in one request is mapped at once; 0 maps every trace at once")
	fs.DurationVar(&oc.Mapper.Linger, "otlp-linger", oc.Mapper.Linger, "OTLP: a trace with a GenAI span that is not complete (its root is another service's, or ends before its run, as Codex's turns) is mapped once nothing of it arrived for this long")
	fs.DurationVar(&oc.Mapper.MaxIdle, "otlp-max-idle", oc.Mapper.MaxIdle, "OTLP: a buffered trace without a GenAI span (agent, workflow, model, tool or plan) is dropped when nothing of it arrived for this long")
	fs.StringVar(&c.HTTP, "http", "", "serve /metrics, /healthz and the live pages (-pages) on this `address` (e.g. :8080); off when empty")
	fs.BoolVar(&o.pagesOn, "pages", true, "with -http, serve the live pages at / (docs/page.md): the evolution at a glance, every session's plans side by side, the analyzers' tables; read-only through the query service's guard, so the database is locked down as with -query")
	fs.BoolVar(&o.queryOn, "query", true, "answer read-only SQL over NATS (docs/query-service.md); the database is then locked down: no files, extensions or settings changes")
	fs.StringVar(&o.query.Subject, "query-subject", o.query.Subject, "NATS `subject` the query service answers on (one per database)")
	fs.DurationVar(&o.query.Timeout, "query-timeout", o.query.Timeout, "query service: longest a query may run (a request may ask for less)")
	fs.StringVar(&o.query.InboxPrefix, "query-inbox-prefix", o.query.InboxPrefix, "query service: answer only on reply subjects below this `prefix` (the clients' inbox prefix)")
	fs.Int64Var(&o.query.MaxRows, "query-max-rows", o.query.MaxRows, "query service: most rows in an answer; more are cut off and the answer says so")
	fs.Int64Var(&o.query.MaxRSS, "query-max-rss", o.query.MaxRSS, "query service: the process's resident memory in bytes past which every running query is stopped with an error (a backstop above the ingester's own budget; 0: off)")
	cli.LogFlags(fs, &o.logLevel, &o.logFormat, "info")
	if err := cli.Parse(ctx, fs, args, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, flag.ErrHelp
		}
		return nil, cli.ErrUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ingest: unexpected arguments %q\n", fs.Args())
		return nil, cli.ErrUsage
	}
	set := setFlags(fs)
	if k := c.Ingest.Partition; k >= 0 && c.Stream.Partitions > 0 {
		// One database per partition: its own file, consumer and query
		// subject unless given.
		if !set["db"] {
			c.DB = fmt.Sprintf("evosignal-p%d.duckdb", k)
		}
		if !set["consumer"] {
			c.Ingest.Durable = fmt.Sprintf("%s-p%d", c.Ingest.Durable, k)
		}
		if !set["query-subject"] {
			o.query.Subject = fmt.Sprintf("%s.p%d", o.query.Subject, k)
		}
	}
	if o.replica != "" {
		// Its own database and consumer, after the partition's.
		if !set["db"] {
			c.DB = strings.TrimSuffix(c.DB, filepath.Ext(c.DB)) + "-" + o.replica + filepath.Ext(c.DB)
		}
		if !set["consumer"] {
			c.Ingest.Durable += "-" + o.replica
		}
	}
	if c.Server.StoreDir == "" {
		c.Server.StoreDir = strings.TrimSuffix(c.DB, filepath.Ext(c.DB)) + ".jetstream"
	}
	if o.queryOn {
		c.Query = &o.query
	}
	if o.pagesOn && c.HTTP != "" {
		pc := web.DefaultConfig(nil) // the pipeline's querier
		c.Pages = &pc
	}
	if set["batch"] && !set["max-batch"] {
		// A -batch above the default -max-batch raises it: batches
		// are then that size at least.
		c.Ingest.MaxBatchSize = max(c.Ingest.MaxBatchSize, c.Ingest.BatchSize)
	}
	var errs []error
	if set["partition"] && c.Stream.Partitions == 0 {
		errs = append(errs, errors.New("-partition goes with -partitions"))
	}
	if o.file != "" && o.rebuild {
		errs = append(errs, errors.New("-file and -rebuild exclude each other"))
	}
	if o.replay && (o.file != "" || o.rebuild) {
		errs = append(errs, errors.New("-replay-dead-letters excludes -file and -rebuild"))
	}
	if o.allowDead && o.file == "" {
		errs = append(errs, errors.New("-allow-dead-letters goes with -file"))
	}
	if o.lake != "" && (o.rebuild || o.replay) {
		errs = append(errs, errors.New("-lake goes with -file or a NATS ingester, not with -rebuild or -replay-dead-letters"))
	}
	if o.shard != "" && o.lake == "" {
		errs = append(errs, errors.New("-shard goes with -lake"))
	}
	if set["seal-every"] && (o.lake == "" || o.file != "") {
		errs = append(errs, errors.New("-seal-every goes with -lake, reading NATS"))
	}
	if o.lakeWarehouse != "" && !lake.IsCatalogURI(o.lake) {
		errs = append(errs, errors.New("-lake-warehouse goes with -lake postgres://… (a lake in a directory keeps its files inside it)"))
	}
	if set["lake-keep"] && (o.lake == "" || o.file != "") {
		errs = append(errs, errors.New("-lake-keep goes with -lake, reading NATS"))
	}
	if o.lakeKeep < 0 {
		errs = append(errs, errors.New("-lake-keep must not be negative"))
	}
	if o.sealEvery < 0 {
		errs = append(errs, errors.New("-seal-every must not be negative"))
	}
	if o.replica != "" && (o.file != "" || c.NATS.URL == "") {
		errs = append(errs, errors.New("-replica goes with -nats: a replica reads the stream another ingester (or a cluster) serves"))
	}
	if o.lake != "" && o.shard == "" {
		switch {
		case o.file != "":
			o.shard = strings.TrimSuffix(filepath.Base(c.DB), filepath.Ext(c.DB))
		case c.Stream.Partitions > 0 && c.Ingest.Partition >= 0:
			o.shard = fmt.Sprintf("%s-p%d", c.Stream.Name, c.Ingest.Partition)
		default:
			o.shard = c.Stream.Name
		}
	}
	if o.dryRun && !o.replay {
		errs = append(errs, errors.New("-dry-run goes with -replay-dead-letters"))
	}
	if o.file != "" || o.rebuild || o.replay {
		errs = append(errs, c.Ingest.Validate())
	} else {
		errs = append(errs, c.Validate())
	}
	err := errors.Join(errs...)
	if err != nil {
		fmt.Fprintf(stderr, "ingest: %v\n", err)
		return nil, cli.ErrUsage
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parse(ctx, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.cfg.Log, err = cli.NewLogger(stderr, o.logLevel, o.logFormat); err != nil {
		return err
	}
	if o.taxonomy != "" {
		if o.cfg.Store.Taxonomy, err = taxonomy.Load(o.taxonomy); err != nil {
			return err
		}
	}
	t0 := time.Now()
	switch {
	case o.rebuild:
		if err := pipeline.Rebuild(ctx, o.cfg); err != nil {
			return lockHint(err, o.cfg.DB)
		}
		fmt.Fprintf(stdout, "rebuilt the typed tables and analysis facts of %s from the event log in %s\n", o.cfg.DB, time.Since(t0).Round(time.Millisecond))
		return nil
	case o.replay:
		return lockHint(replayDeadLetters(ctx, o.cfg, o.dryRun, stdout), o.cfg.DB)
	case o.file != "":
		return loadFile(ctx, o, stdin, stdout, stderr, t0)
	}
	if o.lake != "" {
		lake.Writer = cli.Version("evosignal")
		l, err := lake.Open(ctx, o.lake, lake.Options{Warehouse: o.lakeWarehouse, Create: true})
		if err != nil {
			return err
		}
		defer l.Close()
		o.cfg.Lake = &pipeline.LakeConfig{Lake: l, Shard: o.shard, Every: o.sealEvery, Keep: o.lakeKeep}
	}
	p, err := pipeline.Start(ctx, o.cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while waiting for the cluster
		}
		return lockHint(err, o.cfg.DB)
	}
	select {
	case <-ctx.Done():
	case <-p.Done():
	}
	err = p.Close()
	s := p.Ingester().Stats().Snapshot()
	o.cfg.Log.Info("stopped", "messages", s.Messages, "accepted", s.Accepted, "duplicates", s.Duplicates,
		"dead_letters", s.DeadLetters, "last_seq", s.LastSeq)
	return err
}

// shownDeadLetters is how many dead letters ingest -file prints one by one.
const shownDeadLetters = 10

// errDeadLetters is returned by ingest -file when lines were dead-lettered
// and -allow-dead-letters was not given.
var errDeadLetters = errors.New("lines were dead-lettered")

// loadFile runs ingest -file: it prints the first dead letters with their
// line numbers as they are committed, then a summary, and fails when
// anything was dead-lettered unless -allow-dead-letters. A file that cannot
// be opened fails before the database is touched.
func loadFile(ctx context.Context, o *options, stdin io.Reader, stdout, stderr io.Writer, t0 time.Time) error {
	r := stdin
	if o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			return fmt.Errorf("open events file: %w", err)
		}
		defer f.Close()
		r = f
	}
	shown := 0
	each := func(it store.Item) {
		if shown++; shown <= shownDeadLetters {
			fmt.Fprintf(stderr, "%s:%d: %s: %s\n", it.File, it.Line, it.Dead.Code, it.Dead.Reason)
		}
	}
	res, err := pipeline.LoadFile(ctx, o.cfg, r, o.file, each)
	fmt.Fprintf(stdout, "%s: accepted %d, duplicates %d, dead-lettered %d (%s)\n",
		o.file, res.Accepted, res.Duplicates, res.DeadLetters, time.Since(t0).Round(time.Millisecond))
	if err != nil {
		return lockHint(err, o.cfg.DB)
	}
	if o.lake != "" {
		if err := sealLake(ctx, o, stdout); err != nil {
			return err
		}
	}
	if res.DeadLetters == 0 {
		return nil
	}
	if shown > shownDeadLetters {
		fmt.Fprintf(stderr, "… and %d more dead letters\n", shown-shownDeadLetters)
	}
	fmt.Fprintf(stderr, "%d lines of %s were dead-lettered: their reasons are in the dead_letters table of %s (%s lists every violation of every line)\n",
		res.DeadLetters, o.file, o.cfg.DB, cli.Cmd(ctx, "validate "+o.file))
	if o.allowDead {
		return nil
	}
	return fmt.Errorf("%w (give -allow-dead-letters to accept that)", errDeadLetters)
}

// sealLake seals the database, loaded, into the lake of -lake as -shard
// and says what it committed.
func sealLake(ctx context.Context, o *options, stdout io.Writer) error {
	t0 := time.Now()
	// Under the ingester's memory limit: DuckDB's own default is 80 % of
	// the machine (a 10M-event database's seal peaked at 4 GiB with it).
	limit := o.cfg.Store.MemoryLimit
	if limit == "" {
		limit = store.DefaultMemoryLimit()
	}
	db, err := store.OpenReadOnlyWith(ctx, o.cfg.DB, store.ReadOptions{MemoryLimit: limit, TempDir: o.cfg.Store.TempDir})
	if err != nil {
		return err
	}
	defer db.Close()
	lake.Writer = cli.Version("evosignal")
	l, err := lake.Open(ctx, o.lake, lake.Options{Warehouse: o.lakeWarehouse, Create: true})
	if err != nil {
		return err
	}
	defer l.Close()
	sealed, err := l.Seal(ctx, db, o.shard)
	if err != nil {
		return err
	}
	var rows int64
	for _, s := range sealed {
		rows += s.Rows
		o.cfg.Log.Debug("sealed table", "table", s.Table, "rows", s.Rows,
			"write", s.Write.Round(time.Millisecond), "commit", s.Commit.Round(time.Millisecond))
	}
	fmt.Fprintf(stdout, "sealed %s into lake %s as shard %s: %d tables, %d rows (%s)\n",
		o.cfg.DB, l.Name(), o.shard, len(sealed), rows, time.Since(t0).Round(time.Millisecond))
	return nil
}

// lockHint tells the user what to do when another process has the
// database.
func lockHint(err error, db string) error {
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%w\n(only one process can write %s; stop the other ingester, or read through it)", err, db)
	}
	return err
}

// setFlags returns the names of the flags set on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
