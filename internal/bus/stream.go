package bus

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamConfig is the JetStream stream that holds the event log.
type StreamConfig struct {
	Name       string        // stream name
	Prefix     string        // subject prefix: the stream captures Prefix.>
	MaxAge     time.Duration // 0 keeps messages until another limit removes them
	MaxBytes   int64         // -1 for no limit
	MaxMsgSize int32         // largest message stored; -1 for the server's limit
	Duplicates time.Duration // window in which Nats-Msg-Id duplicates are dropped
	Replicas   int           // 1, or 3/5 on a cluster
	// Partitions, when above 0, partitions the stream: JetStream stores
	// each message published on Prefix.<rest> as Prefix.<K>.<rest>, K =
	// Partition(subject, Partitions), by the stream's subject transform
	// (PartitionTransform), so that partition K is the filter Prefix.K.>
	// (PartitionFilter) one ingester reads. 0 leaves subjects as published.
	Partitions int
}

// MaxPartitions bounds StreamConfig.Partitions: a partition is an ingester
// and its database, and more than this is a configuration mistake.
const MaxPartitions = 1024

// DefaultStream returns the defaults: stream EVO on evo.>, thirty days, a
// two-minute duplicate window (JetStream's default; older re-sends are caught
// by the ingester), one replica.
func DefaultStream() StreamConfig {
	return StreamConfig{
		Name:       "EVO",
		Prefix:     "evo",
		MaxAge:     30 * 24 * time.Hour,
		MaxBytes:   -1,
		MaxMsgSize: -1,
		Duplicates: 10 * time.Second,
		Replicas:   1,
	}
}

// Validate reports every problem of the configuration at once.
func (c StreamConfig) Validate() error {
	var errs []error
	if c.Name == "" || strings.ContainsAny(c.Name, ". *>\t\n") {
		errs = append(errs, fmt.Errorf("stream name %q must be non-empty without '.', '*', '>' or spaces", c.Name))
	}
	if err := validPrefix(c.Prefix); err != nil {
		errs = append(errs, err)
	}
	if c.MaxAge < 0 {
		errs = append(errs, fmt.Errorf("stream max age %s is negative", c.MaxAge))
	}
	if c.Duplicates <= 0 {
		errs = append(errs, fmt.Errorf("duplicate window %s must be positive", c.Duplicates))
	}
	if c.MaxAge > 0 && c.Duplicates > c.MaxAge {
		errs = append(errs, fmt.Errorf("duplicate window %s is longer than max age %s", c.Duplicates, c.MaxAge))
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("replicas %d must be 1 to 5", c.Replicas))
	}
	if c.Partitions < 0 || c.Partitions > MaxPartitions {
		errs = append(errs, fmt.Errorf("partitions %d must be 0 (none) to %d", c.Partitions, MaxPartitions))
	}
	return errors.Join(errs...)
}

func validPrefix(p string) error {
	if p == "" {
		return errors.New("subject prefix is empty")
	}
	for _, tok := range strings.Split(p, ".") {
		if tok == "" || strings.ContainsAny(tok, "*> \t\n") {
			return fmt.Errorf("subject prefix %q is not a literal subject", p)
		}
	}
	return nil
}

// Filter is the subject filter capturing every agent's events.
func (c StreamConfig) Filter() string { return c.Prefix + ".>" }

// EnsureStream creates the stream or updates it to the configuration.
//
// It tries once; Retry.EnsureStream waits out a cluster that is electing a
// leader or missing a node.
func EnsureStream(ctx context.Context, js jetstream.JetStream, c StreamConfig) (jetstream.Stream, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	maxBytes := c.MaxBytes
	if maxBytes == 0 {
		maxBytes = -1
	}
	transform := c.transform()
	if old, err := js.Stream(ctx, c.Name); err == nil {
		// Another partition count would move every source to another
		// partition under the ingesters reading the old ones: refuse.
		if have := old.CachedInfo().Config.SubjectTransform; !sameTransform(have, transform) {
			return nil, fmt.Errorf("%w: %w", ErrConfig, &PartitionsError{Stream: c.Name, Have: have, Want: transform})
		}
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("look up stream %s: %w", c.Name, err)
	}
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        c.Name,
		Description: "evosignal agent events (CloudEvents v1)",
		Subjects:    []string{c.Filter()},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      c.MaxAge,
		MaxBytes:    maxBytes,
		MaxMsgSize:  c.MaxMsgSize,
		MaxMsgs:     -1,
		Duplicates:  c.Duplicates,
		Replicas:    c.Replicas,

		SubjectTransform: transform,
	})
	if err != nil {
		return nil, fmt.Errorf("create or update stream %s on %s: %w", c.Name, c.Filter(), err)
	}
	return st, nil
}

// ConsumerConfig is the ingester's durable pull consumer.
type ConsumerConfig struct {
	Durable       string
	Filter        string
	AckWait       time.Duration
	MaxAckPending int
	// Database is the id of the database the consumer feeds (its
	// identity), recorded in the consumer's metadata under MetaDatabase.
	// Empty records nothing and checks nothing.
	Database string
}

// MetaDatabase is the consumer metadata key holding the id of the database
// the consumer feeds.
const MetaDatabase = "evosignal_database"

// ErrConsumerTaken is matched (errors.Is) by the *ConsumerTakenError
// AnchorConsumer returns when the durable consumer records another
// database: two ingesters with different databases share a consumer name.
var ErrConsumerTaken = errors.New("durable consumer belongs to another database")

// ConsumerTakenError names the consumer and both databases.
type ConsumerTakenError struct {
	Durable, Stream string
	Owner           string // the database the consumer records
	Database        string // the database asking for it
}

func (e *ConsumerTakenError) Error() string {
	return fmt.Sprintf("durable consumer %q on stream %s belongs to database %s, and this database is %s: "+
		"another ingester with another database uses this consumer name; give this one its own with -consumer NAME "+
		"(and its own -query-subject)", e.Durable, e.Stream, e.Owner, e.Database)
}

// Is matches ErrConsumerTaken.
func (e *ConsumerTakenError) Is(target error) bool { return target == ErrConsumerTaken }

// AnchorConsumer returns the durable consumer positioned right after
// committed, the stream sequence the database says it has committed. The
// database, not the consumer, is the source of truth for the position: when
// the consumer's state differs (a crash between commit and ack, a database
// restored from a copy, a new database), the consumer is deleted and created
// again at committed+1, which loses nothing because the stream keeps the
// messages.
//
// Acks are cumulative (AckAll): acking a message acks every message before
// it, so the ingester acks a committed batch with its last message. A
// consumer with another ack policy (made by an older version, which acked
// each message) is created again like one at another position.
//
// A consumer that records another database (c.Database) is never touched:
// AnchorConsumer returns a *ConsumerTakenError. One without a record (made
// before databases had ids) is taken over.
func AnchorConsumer(ctx context.Context, st jetstream.Stream, c ConsumerConfig, committed uint64) (jetstream.Consumer, error) {
	want := jetstream.ConsumerConfig{
		Durable:       c.Durable,
		Description:   "evosignal ingester",
		AckPolicy:     jetstream.AckAllPolicy,
		AckWait:       c.AckWait,
		MaxAckPending: c.MaxAckPending,
		MaxDeliver:    -1,
		FilterSubject: c.Filter,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	if committed > 0 {
		want.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		want.OptStartSeq = committed + 1
	}
	if c.Database != "" {
		want.Metadata = map[string]string{MetaDatabase: c.Database}
	}
	cons, err := st.Consumer(ctx, c.Durable)
	switch {
	case err == nil:
		info, err := cons.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("consumer %s info: %w", c.Durable, err)
		}
		owner := info.Config.Metadata[MetaDatabase]
		if c.Database != "" && owner != "" && owner != c.Database {
			return nil, &ConsumerTakenError{Durable: c.Durable, Stream: info.Stream, Owner: owner, Database: c.Database}
		}
		if info.Delivered.Stream == committed && info.AckFloor.Stream == committed &&
			info.Config.AckPolicy == want.AckPolicy &&
			info.Config.FilterSubject == c.Filter && info.Config.AckWait == c.AckWait &&
			info.Config.MaxAckPending == c.MaxAckPending && owner == c.Database {
			return cons, nil
		}
		if err := st.DeleteConsumer(ctx, c.Durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("re-anchor consumer %s at %d: delete: %w", c.Durable, committed+1, err)
		}
	case errors.Is(err, jetstream.ErrConsumerNotFound):
	default:
		return nil, fmt.Errorf("look up consumer %s: %w", c.Durable, err)
	}
	cons, err = st.CreateConsumer(ctx, want)
	if errors.Is(err, jetstream.ErrConsumerExists) && c.Database != "" {
		// Another ingester created it in between: say whose it is.
		if other, ierr := st.Consumer(ctx, c.Durable); ierr == nil {
			if info, ierr := other.Info(ctx); ierr == nil {
				if owner := info.Config.Metadata[MetaDatabase]; owner != "" && owner != c.Database {
					return nil, &ConsumerTakenError{Durable: c.Durable, Stream: info.Stream, Owner: owner, Database: c.Database}
				}
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create consumer %s at %d: %w", c.Durable, committed+1, err)
	}
	return cons, nil
}

// AgentSubject is the subject of an agent: its events are published below
// it, on the subject of their source (events.SourceSubject), or, by
// publishers older than the source token, on it.
func AgentSubject(prefix, agent string) string { return prefix + "." + agent }

// SubjectAgent returns the agent named by subject (the token after prefix),
// and false when subject is not below prefix.
func SubjectAgent(prefix, subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, prefix+".")
	if !ok || rest == "" {
		return "", false
	}
	agent, _, _ := strings.Cut(rest, ".")
	return agent, agent != ""
}

// transform is the stream's subject transform: nil unpartitioned, else
// Prefix.> to Prefix.{{partition(N)}}.> (PartitionTransform).
func (c StreamConfig) transform() *jetstream.SubjectTransformConfig {
	if c.Partitions == 0 {
		return nil
	}
	return &jetstream.SubjectTransformConfig{Source: c.Filter(), Destination: PartitionTransform(c.Prefix, c.Partitions)}
}

func sameTransform(a, b *jetstream.SubjectTransformConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// PartitionTransform is the destination of the subject transform that
// partitions the stream under prefix in n: the partition number as the
// token after the prefix, then the subject as published after its prefix.
// The server computes {{partition(n)}} from the whole published subject:
// Partition.
func PartitionTransform(prefix string, n int) string {
	return fmt.Sprintf("%s.{{partition(%d)}}.>", prefix, n)
}

// PartitionsError is a stream partitioned otherwise than the configuration
// asks: another count, or partitioned and not, either way.
type PartitionsError struct {
	Stream     string
	Have, Want *jetstream.SubjectTransformConfig // nil: none
}

func (e *PartitionsError) Error() string {
	have, want := "not partitioned", "no partitions"
	if e.Have != nil {
		have = fmt.Sprintf("has the subject transform %s → %s", e.Have.Source, e.Have.Destination)
		if n, ok := transformPartitions(e.Have.Destination); ok {
			have = fmt.Sprintf("is partitioned in %d (its subject transform %s → %s)", n, e.Have.Source, e.Have.Destination)
		}
	}
	if e.Want != nil {
		want = fmt.Sprintf("%s → %s", e.Want.Source, e.Want.Destination)
		if n, ok := transformPartitions(e.Want.Destination); ok {
			want = fmt.Sprintf("%d partitions", n)
		}
	}
	return fmt.Sprintf("stream %s %s, and this configuration asks for %s: every ingester of a stream gives the "+
		"same -partitions; to change the count, stop them all and edit the stream (docs/scale.md, \"Partitions\")",
		e.Stream, have, want)
}

// transformPartitions reads n back from a PartitionTransform destination.
func transformPartitions(dest string) (int, bool) {
	_, rest, ok := strings.Cut(dest, ".{{partition(")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ")}}")
	n, err := strconv.Atoi(num)
	return n, ok && err == nil
}

// Partition is the partition, of n, the server stores a message published
// on subject in: FNV-1a (32 bits) of the subject's bytes, modulo n, as
// nats-server's {{partition(n)}} computes it. On the token subjects of
// SourceSubject it is a function of the source, so a source's events are
// in one partition.
func Partition(subject string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(subject))
	return int(h.Sum32() % uint32(n))
}

// PartitionFilter is the subject filter of partition k of a stream
// partitioned under prefix.
func PartitionFilter(prefix string, k int) string { return prefix + "." + strconv.Itoa(k) + ".>" }

// PartitionedSubjectAgent returns the partition and the agent of a subject
// stored in a stream partitioned in n under prefix (Prefix.K.<agent>[.…]),
// and false when subject is not of that form.
func PartitionedSubjectAgent(prefix string, n int, subject string) (int, string, bool) {
	rest, ok := strings.CutPrefix(subject, prefix+".")
	if !ok {
		return 0, "", false
	}
	num, rest, _ := strings.Cut(rest, ".")
	k, err := strconv.Atoi(num)
	if err != nil || k < 0 || k >= n || strconv.Itoa(k) != num {
		return 0, "", false
	}
	agent, _, _ := strings.Cut(rest, ".")
	return k, agent, agent != ""
}
