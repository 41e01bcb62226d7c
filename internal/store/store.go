// Package store is evosignal's DuckDB side: it applies the schema, writes
// batches of events (event log, typed tables, dead letters and the stream
// position in one transaction), de-duplicates by (source, id) and rebuilds
// the typed tables from the event log.
//
// Only one Store may have a database file open for writing at a time. Another
// process gets ErrLocked from Open; so does a second Open in this process.
// Readers open a database with OpenReadOnly, which a writer in another
// process makes fail with a *LockedError.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evosignal/evosignal/queries"
)

// ErrLocked is returned by Open when another process (or another Store in
// this process) has the database file open.
var ErrLocked = errors.New("database is in use by another process")

// open paths in this process: DuckDB's file lock only guards against other
// processes, so a second writer in the same process is refused here.
var (
	openMu    sync.Mutex
	openPaths = map[string]bool{}
)

// Store writes to one DuckDB database file.
type Store struct {
	path   string
	opts   Options
	db     *sql.DB
	pub    atomic.Pointer[sql.DB] // db, for DB(): readers outside s.mu
	w      *sql.Conn              // the single writer connection
	app    appenders              // on w: events, typed tables, dead letters
	derive []queries.Named
	keys   *keySet
	// ck checkpoints beside the writer (checkpoint.go); ckStats keeps its
	// figures across a reopen. Both change under mu and ckMu: Write reads
	// them under mu, CheckpointStats under ckMu (a metrics scrape must
	// not wait for a batch).
	ck                  *checkpointer
	ckStats             CheckpointStats
	ckMu                sync.Mutex
	threshold, walLimit int64      // Options.CheckpointThreshold and WALLimit, in bytes
	tax                 Classifier // classifies the stored facts; nil: nothing classified
	steps               func(step string, took time.Duration)
	// progressFn is Options.Progress.
	progressFn func(Progress)
	// broken is set when a failed batch could not be cleaned up or DuckDB
	// invalidated the database (after a FATAL or INTERNAL error): the next
	// write opens the database again first.
	broken  error
	closed  bool
	reopens int
	mu      sync.Mutex // serialises Write, RefreshFacts, Rebuild and reopening

	// lastDead is the largest dead_letters.dead_id committed: Write
	// numbers new dead letters after it.
	lastDead int64
	// lastPrune is when dead letters past Options.DeadLetterRetention were
	// last deleted.
	lastPrune time.Time
}

// Options tune a Store.
type Options struct {
	// CheckpointThreshold is the WAL size at which the store checkpoints
	// committed data into the database file, on its own connection and
	// goroutine, after the commit that crossed it (DuckDB's own automatic
	// checkpoint, inside that commit, is off). A smaller threshold makes
	// each checkpoint shorter, and so the commits that wait for one; a
	// larger one checkpoints less often for the same data. DuckDB syntax:
	// "1GB". Empty keeps DefaultCheckpointThreshold.
	CheckpointThreshold string
	// WALLimit bounds the WAL: a write that finds it this large waits for
	// a checkpoint before it begins (and fails if the checkpoint fails), so
	// that the WAL cannot grow without end when checkpoints fall behind or
	// fail. At least CheckpointThreshold. Empty keeps DefaultWALLimit.
	WALLimit string
	// DuckDBCheckpointThreshold, when set, hands checkpoints back to
	// DuckDB: its checkpoint_threshold, checkpointed inside the commit
	// that crosses it, and the store's own checkpointer off
	// (CheckpointThreshold and WALLimit unused). For comparisons (bench);
	// a service leaves it empty.
	DuckDBCheckpointThreshold string
	// OnCheckpoint, when set, is called after each checkpoint the store
	// ran, failed ones included, on the checkpointing goroutine (the
	// pipeline logs the failures). It must not call the store's writes.
	OnCheckpoint func(Checkpoint)
	// Taxonomy classifies the descriptions of the stored facts that no
	// event gives a type, so that analyses with the same taxonomy need not
	// (the ingester passes taxonomy.Default() unless told
	// otherwise). Nil classifies nothing: analyses then classify on the
	// fly, slower on large databases but with the same results.
	Taxonomy Classifier
	// StepTimer, when set, is called after each step of a Write with the
	// step's name and how long it took, on the writing goroutine, in order:
	// "dedupe", "begin", "append rows" (every row into its appender),
	// "flush events", "flush <table>" for each typed table, "flush
	// facts_pending", "flush dead_letters", "save position", "record batch",
	// "commit" (steps a batch does not need are not reported). A diagnostic
	// (bench write-steps: where a commit's time goes); nil times nothing.
	StepTimer func(step string, took time.Duration)
	// Progress, when set, is called after each step of a long operation
	// (Rebuild: each derived table, then each pass of the facts; a facts
	// refresh stored in passes: each pass), on the calling goroutine. For a
	// person watching; nil reports nothing.
	Progress func(Progress)
	// MemoryLimit is DuckDB's memory_limit for the whole database: the
	// writer, the facts refresh and every query through DB() (the query
	// service's included) share it. A query that needs more fails with an
	// "Out of Memory Error"; a write that hits it is retried, never
	// dead-lettered (FaultOf). DuckDB syntax: "2GB", "512MiB". Empty uses
	// DefaultMemoryLimit().
	MemoryLimit string
	// TempDir is where DuckDB spills what does not fit under MemoryLimit
	// (temp_directory). Empty keeps DuckDB's default, <db file>.tmp beside
	// the database.
	TempDir string
	// DeadLetterRetention is how long dead letters are kept: the store
	// deletes those received longer ago (with their replay records) on
	// open and then at most every PruneEvery, in the transaction of a
	// batch. 0 keeps them forever.
	DeadLetterRetention time.Duration
	// Reopened, when set, is called with the new database after the store
	// had to open its file again (DuckDB invalidated the old instance after
	// a fatal error): whoever serves reads from DB() moves to the new one.
	// It is called with the store's writer lock held; it must not write.
	Reopened func(ctx context.Context, db *sql.DB)
}

// Classifier is a task taxonomy as the stored facts need it; a
// *taxonomy.Taxonomy is one.
type Classifier interface {
	ID() string          // recorded in facts_classifier
	ClassifyArgs() []any // the parameters of queries/include/classify_case.sql
	Args() []any         // those and $tax_fallback, $tax_id: analyze/mappings_task_types.sql's
}

// Open opens (creating if needed) the database at path with the default
// options, applies pending migrations and loads the de-duplication keys.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	openMu.Lock()
	if openPaths[abs] {
		openMu.Unlock()
		return nil, fmt.Errorf("open store %s: %w (already open in this process)", path, ErrLocked)
	}
	openPaths[abs] = true
	openMu.Unlock()

	if opts.CheckpointThreshold == "" {
		opts.CheckpointThreshold = DefaultCheckpointThreshold
	}
	if opts.WALLimit == "" {
		opts.WALLimit = DefaultWALLimit
	}
	if opts.MemoryLimit == "" {
		opts.MemoryLimit = DefaultMemoryLimit()
	}
	s := &Store{path: abs, opts: opts}
	if err := s.sizes(); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.open(ctx, opts); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) open(ctx context.Context, opts Options) error {
	db, err := sql.Open("duckdb", s.path)
	if err != nil {
		return lockErr(err)
	}
	s.db = db
	s.pub.Store(db)
	if err := db.PingContext(ctx); err != nil {
		return lockErr(err)
	}
	// Global settings: SET GLOBAL applies to every connection of the pool.
	// They are applied before anyone can lock the configuration (the query
	// service does, on the DB() it is given).
	if opts.DuckDBCheckpointThreshold != "" {
		if _, err := db.ExecContext(ctx, "SET GLOBAL checkpoint_threshold = $1", opts.DuckDBCheckpointThreshold); err != nil {
			return fmt.Errorf("DuckDB checkpoint threshold %q: %w", opts.DuckDBCheckpointThreshold, err)
		}
	} else if _, err := db.ExecContext(ctx, "SET GLOBAL checkpoint_threshold = $1", duckDBThresholdOff); err != nil {
		return fmt.Errorf("turn DuckDB's automatic checkpoints off: %w", err)
	}
	if _, err := db.ExecContext(ctx, "SET GLOBAL memory_limit = $1", opts.MemoryLimit); err != nil {
		return fmt.Errorf("memory limit %q: %w", opts.MemoryLimit, err)
	}
	if opts.TempDir != "" {
		if _, err := db.ExecContext(ctx, "SET GLOBAL temp_directory = $1", opts.TempDir); err != nil {
			return fmt.Errorf("temp directory %q: %w", opts.TempDir, err)
		}
	}
	if err := migrate(ctx, db); err != nil {
		return err
	}
	if s.derive, err = queries.Derive(); err != nil {
		return err
	}
	if s.w, err = db.Conn(ctx); err != nil {
		return err
	}
	if err := s.newAppenders(); err != nil {
		return err
	}
	s.tax = opts.Taxonomy
	s.steps = opts.StepTimer
	s.progressFn = opts.Progress
	if err := s.useTaxonomy(ctx); err != nil {
		return err
	}
	if err := s.pruneOnOpen(ctx); err != nil {
		return err
	}
	if s.lastDead, err = lastDeadID(ctx, db); err != nil {
		return err
	}
	if s.keys, err = loadKeys(ctx, db); err != nil {
		return err
	}
	if opts.DuckDBCheckpointThreshold != "" {
		return nil // DuckDB checkpoints
	}
	ck, err := startCheckpointer(ctx, db, s.path, s.threshold, s.walLimit, opts.OnCheckpoint, s.ckStats)
	if err != nil {
		return err
	}
	s.ckMu.Lock()
	s.ck = ck
	s.ckMu.Unlock()
	return nil
}

// sizes reads Options.CheckpointThreshold and WALLimit.
func (s *Store) sizes() error {
	var errs []error
	var err error
	if s.threshold, err = parseSize(s.opts.CheckpointThreshold); err != nil {
		errs = append(errs, fmt.Errorf("checkpoint threshold: %w", err))
	}
	if s.walLimit, err = parseSize(s.opts.WALLimit); err != nil {
		errs = append(errs, fmt.Errorf("WAL limit: %w", err))
	}
	if len(errs) == 0 && s.walLimit < s.threshold {
		errs = append(errs, fmt.Errorf("WAL limit %s is under the checkpoint threshold %s", s.opts.WALLimit, s.opts.CheckpointThreshold))
	}
	return errors.Join(errs...)
}

// CheckpointStats reports the store's checkpoints and its WAL's size.
func (s *Store) CheckpointStats() CheckpointStats {
	s.ckMu.Lock()
	ck, st := s.ck, s.ckStats
	s.ckMu.Unlock()
	if ck == nil {
		st.WAL = walSize(s.path + ".wal")
		return st
	}
	return ck.snapshot()
}

// lockErr turns DuckDB's lock conflict into ErrLocked with its own text.
func lockErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "Could not set lock on file") {
		return fmt.Errorf("%w: %v", ErrLocked, err)
	}
	return err
}

// DB returns the database for reading in this process (analyzers, the query
// service). Writes go through Write only. After the store reopened its file
// (Options.Reopened) it is another *sql.DB; the old one is closed.
func (s *Store) DB() *sql.DB { return s.pub.Load() }

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Keys reports how many event keys the de-duplication set holds.
func (s *Store) Keys() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys.len()
}

// Close flushes nothing (every Write commits or rolls back) and releases the
// file. It is safe to call more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	err := s.release()
	openMu.Lock()
	delete(openPaths, s.path)
	openMu.Unlock()
	return err
}

// release closes the appenders, the writer connection and the database.
func (s *Store) release() error {
	var errs []error
	if s.ck != nil {
		// Before the database: it may be checkpointing.
		errs = append(errs, s.ck.close())
		s.ckMu.Lock()
		s.ckStats = s.ck.snapshot()
		s.ck = nil
		s.ckMu.Unlock()
	}
	errs = append(errs, s.closeAppenders())
	if s.w != nil {
		errs = append(errs, s.w.Close())
		s.w = nil
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
		s.db = nil
	}
	return errors.Join(errs...)
}

// reopen opens the database file again after s.broken was set: DuckDB
// invalidates a database instance after a fatal error, and a failed batch
// whose leftovers could not be cleared leaves the writer unusable. The file
// itself holds only committed transactions, so nothing is lost. Call it
// with s.mu held.
func (s *Store) reopen(ctx context.Context) error {
	cause := s.broken
	s.release() // the old instance is failing; its close errors say nothing new
	if err := s.open(ctx, s.opts); err != nil {
		return fmt.Errorf("reopen %s after %v: %w", s.path, cause, err)
	}
	s.broken = nil
	s.reopens++
	if s.opts.Reopened != nil {
		s.opts.Reopened(ctx, s.db)
	}
	return nil
}

// Reopens counts how often the store opened its file again after the
// database failed.
func (s *Store) Reopens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reopens
}

// Position returns the last JetStream sequence committed for stream, 0 if
// none.
func (s *Store) Position(ctx context.Context, stream string) (uint64, error) {
	seq, _, err := s.PositionOf(ctx, stream)
	return seq, err
}

// PositionOf returns the last JetStream sequence committed for stream and
// the creation time of the stream it was read from (zero if unknown).
func (s *Store) PositionOf(ctx context.Context, stream string) (uint64, time.Time, error) {
	var seq uint64
	var created sql.NullTime
	err := s.DB().QueryRowContext(ctx, queries.MustRead("ingest/load_position.sql"), stream).Scan(&seq, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("load position of stream %s: %w", stream, err)
	}
	return seq, created.Time, nil
}
