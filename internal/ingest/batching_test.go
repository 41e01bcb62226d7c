package ingest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/pipeline"
)

// batchSizes returns the messages of each batch committed from the stream
// after seq after, in order.
func batchSizes(tb testing.TB, p *pipeline.Pipeline, after uint64) []int {
	tb.Helper()
	rows, err := p.Store().DB().Query(
		"SELECT messages FROM ingest_batches WHERE origin = 'nats' AND first_seq > $1 ORDER BY first_seq", after)
	if err != nil {
		tb.Fatalf("read batches: %v", err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			tb.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// publishStarted publishes n session-started events of one session and
// waits for JetStream to take them all.
func publishStarted(tb testing.TB, p *pipeline.Pipeline, n int) {
	tb.Helper()
	ctx := tb.Context()
	pub, err := agent.NewPublisher(p.JetStream(), agent.PublisherConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	s := agent.NewSession(pub, "coder/host-a/worker-1", "")
	for range n {
		if err := s.Started(ctx, agent.SessionStarted{Goal: "g", Agent: "coder", AgentVersion: "1", Model: "m"}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := pub.Close(ctx); err != nil {
		tb.Fatal(err)
	}
}

// watchAcks checks, until stop is closed, that the consumer's ack floor
// never passes the position committed in the store: acks follow commits.
// It returns what it saw wrong, once stopped.
func watchAcks(ctx context.Context, p *pipeline.Pipeline, durable string, stop <-chan struct{}) func() []string {
	var bad []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var floor uint64
			if c, err := p.Stream().Consumer(ctx, durable); err == nil {
				if info, err := c.Info(ctx); err == nil {
					floor = info.AckFloor.Stream
				}
			}
			// Read after the ack floor: the position only grows.
			pos, err := p.Store().Position(ctx, p.Stream().CachedInfo().Config.Name)
			if err != nil {
				bad = append(bad, fmt.Sprintf("read position: %v", err))
				return
			}
			if floor > pos {
				bad = append(bad, fmt.Sprintf("ack floor %d ahead of the committed position %d", floor, pos))
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return func() []string { wg.Wait(); return bad }
}

// Behind, batches double up to MaxBatchSize; caught up, they are back to
// BatchSize; their bytes stay within MaxBatchBytes; and acks only follow
// commits all along.
func TestBatchesFollowTheBacklog(t *testing.T) {
	ctx := t.Context()
	pc := pipeline.DefaultConfig()
	pc.Server = bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}
	pc.DB = filepath.Join(t.TempDir(), "batches.duckdb")
	pc.Ingest.BatchSize, pc.Ingest.MaxBatchSize = 100, 800
	// Long enough that a burst published at once arrives within it.
	pc.Ingest.FlushInterval = time.Second
	p, err := pipeline.Open(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	// A backlog: the batches grow.
	const backlog = 4000
	publishStarted(t, p, backlog)
	stop := make(chan struct{})
	acks := watchAcks(ctx, p, pc.Ingest.Durable, stop)
	if err := p.Ingest(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitIngested(ctx); err != nil {
		t.Fatal(err)
	}
	got := batchSizes(t, p, 0)
	if len(got) < 5 || got[0] != 100 || got[1] != 200 || got[2] != 400 || got[3] != 800 {
		t.Errorf("batches through a backlog of %d = %v, want 100, 200, 400, 800, …", backlog, got)
	}
	for i, n := range got {
		if n > pc.Ingest.MaxBatchSize {
			t.Errorf("batch %d of %d messages, more than MaxBatchSize %d", i, n, pc.Ingest.MaxBatchSize)
		}
	}

	// Caught up: a burst of 150 is taken as 100 (BatchSize) and 50, not
	// in one batch at the limit the backlog reached.
	publishStarted(t, p, 150)
	if _, err := p.WaitIngested(ctx); err != nil {
		t.Fatal(err)
	}
	if got := batchSizes(t, p, backlog); len(got) != 2 || got[0] != 100 || got[1] != 50 {
		t.Errorf("batches of a burst of 150 after catching up = %v, want [100 50]", got)
	}
	close(stop)
	for _, b := range acks() {
		t.Error(b)
	}
}

// The byte budget ends a batch before its count does.
func TestBatchesWithinBytes(t *testing.T) {
	ctx := t.Context()
	pc := pipeline.DefaultConfig()
	pc.Server = bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}
	pc.DB = filepath.Join(t.TempDir(), "bytes.duckdb")
	pc.Ingest.BatchSize, pc.Ingest.MaxBatchSize = 100, 800
	p, err := pipeline.Open(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	publishStarted(t, p, 1000)
	m, err := p.Stream().GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	size := len(m.Data) + len("Nats-Msg-Id") + len(m.Header.Get("Nats-Msg-Id")) + 4
	p.Close()

	// Again on the same stream with a budget of 30 messages, from an
	// empty database.
	pc.DB = filepath.Join(t.TempDir(), "bytes2.duckdb")
	pc.Ingest.Durable = "bytes"
	pc.Ingest.MaxBatchBytes = 30 * size
	p, err = pipeline.Open(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Ingest(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitIngested(ctx); err != nil {
		t.Fatal(err)
	}
	// The events of one session differ a few bytes in size.
	for i, n := range batchSizes(t, p, 0) {
		if n > 31 {
			t.Errorf("batch %d of %d messages of about %d bytes, over a budget of %d bytes", i, n, size, pc.Ingest.MaxBatchBytes)
		}
	}
}

// A consumer made by an older version (each message acked on its own) is
// created again with the ingester's settings, and
// ingests everything.
func TestOlderConsumerIsRecreated(t *testing.T) {
	ctx := t.Context()
	pc := pipeline.DefaultConfig()
	pc.Server = bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}
	pc.DB = filepath.Join(t.TempDir(), "older.duckdb")
	pc.Ingest.BatchSize, pc.Ingest.MaxBatchSize = 100, 400
	pc.Ingest.FlushInterval = 20 * time.Millisecond
	p, err := pipeline.Open(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	database, err := p.Store().Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream().CreateConsumer(ctx, jetstream.ConsumerConfig{
		Metadata: map[string]string{bus.MetaDatabase: database},
		Durable:  pc.Ingest.Durable, Description: "evosignal ingester", AckPolicy: jetstream.AckExplicitPolicy,
		// This database's, and the MaxAckPending the ingester asks for
		// (two batches at most and the pull buffer): only the ack policy
		// differs.
		AckWait: pc.Ingest.AckWait, MaxAckPending: 2*pc.Ingest.MaxBatchSize + 2*pc.Ingest.BatchSize, MaxDeliver: -1,
		FilterSubject: pc.Stream.Prefix + ".>", DeliverPolicy: jetstream.DeliverAllPolicy,
	}); err != nil {
		t.Fatal(err)
	}
	publishStarted(t, p, 1000)
	if err := p.Ingest(); err != nil {
		t.Fatal(err)
	}
	last, err := p.WaitIngested(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Stream().Consumer(ctx, pc.Ingest.Durable)
	if err != nil {
		t.Fatal(err)
	}
	// The last ack is sent after the last commit: wait for it.
	waitFor(t, "the ack of the last batch", 10*time.Second, func() bool {
		info, err := c.Info(ctx)
		return err == nil && info.AckFloor.Stream == last
	})
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.AckPolicy != jetstream.AckAllPolicy || info.NumAckPending != 0 {
		t.Errorf("consumer ack policy %v with %d acks pending, want %v and none", info.Config.AckPolicy, info.NumAckPending, jetstream.AckAllPolicy)
	}
}
