// Package ingest is the loop that moves events from JetStream (or a file)
// into the store: fetch → decode and validate → write the batch in one
// transaction → ack. It acks a message only after the transaction holding
// its rows and the stream position committed.
package ingest

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/store"
)

// Config tunes the ingest loop.
type Config struct {
	Stream  string // JetStream stream to read
	Prefix  string // subject prefix (evo): an agent publishes on Prefix.<agent>[.…]
	Durable string // durable consumer name
	// Partitions is the stream's partition count (bus.StreamConfig's), 0
	// when it is not partitioned. A partitioned stream stores a message
	// published on Prefix.<agent>[.…] as Prefix.<K>.<agent>[.…].
	Partitions int
	// Partition is the one partition read, 0 to Partitions-1 (the filter
	// bus.PartitionFilter); -1 reads them all. Unused when Partitions is 0.
	Partition int
	// BatchSize is the most messages per transaction while the ingester
	// keeps up with the stream, and the size a batch starts from.
	BatchSize int
	// MaxBatchSize is the most messages per transaction while the
	// ingester is behind (more than a batch waits in the stream): each
	// batch may take twice as many as the one before, up to this, since a
	// larger transaction costs less per event; once it has caught up,
	// batches go back to BatchSize. Reading a file, batches stay at
	// BatchSize.
	MaxBatchSize int
	// MaxBatchBytes bounds the bytes (payload and headers) of the
	// messages of a batch, whatever its count: with one batch being
	// built while the one before commits, the messages in hand stay under
	// about twice this.
	MaxBatchBytes int
	FlushInterval time.Duration // commit a partial batch this long after its first message
	MaxEventBytes int           // larger messages are dead-lettered as oversize
	AckWait       time.Duration // JetStream redelivers a message not acked in this time
	Progress      time.Duration // how often to log progress on long runs
	// FactsEvery is how often the analysis facts of the sessions written
	// since the last time are stored (store.RefreshFacts) while the
	// ingester keeps up; 12 times as long while it works through a backlog.
	// It also stores them when it catches up, goes idle or stops.
	FactsEvery time.Duration
	// RetryMax is the longest wait between two attempts to commit a batch
	// while the database fails for a reason of the environment (disk
	// full, out of memory): the wait starts at 200ms and doubles up to it.
	RetryMax time.Duration
	// MaxPlanTasks bounds the tasks a plan event may list (and a replan
	// drop): a larger one is dead-lettered as plan_too_large.
	MaxPlanTasks int
}

// DefaultMaxPlanTasks is the default Config.MaxPlanTasks. Plans of agents
// hold a few to a few dozen tasks; 1,000 leaves room for any real plan
// while bounding what one event adds to a batch: the typed tables take one
// row per task, so a plan of 1,000 tasks costs a commit what 1,000 small
// events cost (BenchmarkPlanSize in internal/store). A plan under the
// default 256 KB event size can list about 4,000 tasks.
const DefaultMaxPlanTasks = 1000

// The defaults of Config.MaxBatchSize and Config.MaxBatchBytes. A batch
// of 16 MiB holds about 35,000 events of the usual size (400–500 bytes),
// and two batches are in hand at most (one being built, one committing).
// What they cost in Go heap over fixed batches of 10,000: BENCHMARKS.md,
// "Figures behind the defaults".
const (
	DefaultMaxBatchSize  = 100_000
	DefaultMaxBatchBytes = 16 << 20
)

// DefaultConfig returns the defaults the ingest command documents.
func DefaultConfig() Config {
	return Config{
		Stream:        "EVO",
		Prefix:        "evo",
		Durable:       "evosignal-ingest",
		Partition:     -1,
		BatchSize:     10000,
		MaxBatchSize:  DefaultMaxBatchSize,
		MaxBatchBytes: DefaultMaxBatchBytes,
		FlushInterval: 200 * time.Millisecond,
		MaxEventBytes: 256 << 10,
		MaxPlanTasks:  DefaultMaxPlanTasks,
		AckWait:       2 * time.Minute,
		Progress:      10 * time.Second,
		FactsEvery:    5 * time.Second,
		RetryMax:      30 * time.Second,
	}
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if c.BatchSize < 1 {
		errs = append(errs, fmt.Errorf("batch size %d must be at least 1", c.BatchSize))
	}
	if c.MaxBatchSize < c.BatchSize {
		errs = append(errs, fmt.Errorf("max batch size %d must be at least the batch size %d", c.MaxBatchSize, c.BatchSize))
	}
	if c.MaxBatchBytes < 1 {
		errs = append(errs, fmt.Errorf("max batch bytes %d must be positive", c.MaxBatchBytes))
	}
	if c.FlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("flush interval %s must be positive", c.FlushInterval))
	}
	if c.MaxEventBytes < 1 {
		errs = append(errs, fmt.Errorf("max event size %d must be positive", c.MaxEventBytes))
	}
	if c.MaxPlanTasks < 1 {
		errs = append(errs, fmt.Errorf("max plan tasks %d must be at least 1", c.MaxPlanTasks))
	}
	if c.AckWait < time.Second {
		errs = append(errs, fmt.Errorf("ack wait %s must be at least 1s", c.AckWait))
	}
	if c.Progress <= 0 {
		errs = append(errs, fmt.Errorf("progress interval %s must be positive", c.Progress))
	}
	if c.FactsEvery <= 0 {
		errs = append(errs, fmt.Errorf("facts refresh interval %s must be positive", c.FactsEvery))
	}
	if c.RetryMax < firstRetry {
		errs = append(errs, fmt.Errorf("retry wait %s must be at least %s", c.RetryMax, firstRetry))
	}
	if c.Durable == "" {
		errs = append(errs, errors.New("durable consumer name is empty"))
	}
	if c.Partitions > 0 && (c.Partition < -1 || c.Partition >= c.Partitions) {
		errs = append(errs, fmt.Errorf("partition %d must be 0 to %d (of %d partitions), or -1 for all", c.Partition, c.Partitions-1, c.Partitions))
	}
	return errors.Join(errs...)
}

// filter is the consumer's subject filter: the stream's prefix, or the one
// partition read.
func (c Config) filter() string {
	if c.Partitions > 0 && c.Partition >= 0 {
		return bus.PartitionFilter(c.Prefix, c.Partition)
	}
	return c.Prefix + ".>"
}

// subjectAgent returns the agent named by a stored subject, and false when
// the subject is not one the configuration reads.
func (c Config) subjectAgent(subject string) (string, bool) {
	if c.Partitions == 0 {
		return bus.SubjectAgent(c.Prefix, subject)
	}
	k, agent, ok := bus.PartitionedSubjectAgent(c.Prefix, c.Partitions, subject)
	return agent, ok && (c.Partition < 0 || k == c.Partition)
}

// Ingester writes what it reads into a store. One Ingester per store.
type Ingester struct {
	cfg   Config
	store *store.Store
	log   *slog.Logger
	stats *Stats

	// The last facts refresh: when it ended and how long it took. Used by
	// the writing goroutine only.
	lastFacts     time.Time
	lastFactsTook time.Duration
	factsBackoff  time.Duration // after failed refreshes: the least wait before the next

	deadLog deadLog
	onDead  func(store.Item) // see OnDeadLetter
}

// New returns an ingester writing into st.
func New(cfg Config, st *store.Store, log *slog.Logger) (*Ingester, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The first refresh comes FactsEvery after the start, not at the first
	// commit: a database just migrated to stored facts has every session
	// pending, and its refresh holds up commits.
	return &Ingester{cfg: cfg, store: st, log: log, stats: newStats(), lastFacts: time.Now()}, nil
}

// Stats returns the ingester's live counters.
func (in *Ingester) Stats() *Stats { return in.stats }
