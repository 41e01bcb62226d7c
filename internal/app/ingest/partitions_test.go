package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/synth"
)

// oldSubjectSink publishes as publishers did before the source token: on
// evo.<agent>, with the id as Nats-Msg-Id.
type oldSubjectSink struct{ js jetstream.JetStream }

func (s oldSubjectSink) Send(ctx context.Context, e *events.Event) error {
	b, err := e.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = s.js.PublishMsg(ctx, &nats.Msg{Subject: bus.AgentSubject("evo", e.Agent()), Data: b,
		Header: nats.Header{jetstream.MsgIDHeader: []string{e.ID}}})
	return err
}

// TestPartitionedIngest runs, on one nats-server, ingest -partitions 4
// -partition K for each K and one ingest -partitions 4 reading every
// partition, each into its own database; synthetic sessions of many sources
// are published by agent.Publisher (token subjects) and a few by an old
// publisher on evo.<agent>. Each shard stores exactly its partition's
// events (by bus.Partition of the published subject), every source is in
// one shard, and the shards together are the all-partitions database:
// the same count and the same (source, id)s.
func TestPartitionedIngest(t *testing.T) {
	const parts = 4
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type ingester struct {
		db, consumer string
		err          error
		stderr       strings.Builder
	}
	var ings []*ingester
	var wg sync.WaitGroup
	start := func(db, consumer string, args ...string) {
		in := &ingester{db: filepath.Join(dir, db), consumer: consumer}
		ings = append(ings, in)
		args = append([]string{"-nats", srv.ClientURL(), "-db", in.db, "-partitions", strconv.Itoa(parts), "-log-level", "warn"}, args...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.err = run(ctx, args, nil, io.Discard, &in.stderr)
		}()
	}
	for k := range parts {
		// The defaults of -partition K: consumer evosignal-ingest-pK,
		// query subject evosignal.query.pK.
		start(fmt.Sprintf("p%d.duckdb", k), fmt.Sprintf("evosignal-ingest-p%d", k), "-partition", strconv.Itoa(k))
	}
	start("all.duckdb", "all", "-consumer", "all", "-query-subject", "evosignal.query.all")

	// The stream the ingesters ensure (each the same): wait for it.
	for {
		if _, err := js.Stream(ctx, "EVO"); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{})
	if err != nil {
		t.Fatal(err)
	}
	gen := synth.New(7, time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))
	total := 0
	for range 300 {
		n, err := gen.Session(ctx, pub)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if err := pub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	old := synth.New(8, time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC))
	oldEvents := 0
	for range 10 {
		n, err := old.Session(ctx, oldSubjectSink{js})
		if err != nil {
			t.Fatal(err)
		}
		oldEvents += n
	}
	total += oldEvents

	// Everything is committed once every consumer has it acked (the
	// ingester acks a batch after its commit).
	for _, in := range ings {
		for {
			if c, err := js.Consumer(ctx, "EVO", in.consumer); err == nil {
				if info, err := c.Info(ctx); err == nil && info.NumPending == 0 && info.NumAckPending == 0 && info.Delivered.Consumer > 0 {
					break
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: %v\n%s", in.consumer, ctx.Err(), in.stderr.String())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	cancel()
	wg.Wait()
	for _, in := range ings {
		if in.err != nil {
			t.Fatalf("ingester %s: %v\n%s", in.consumer, in.err, in.stderr.String())
		}
	}

	// key is an event's (source, id); partition the partition its
	// published subject is in.
	type key struct{ source, id string }
	read := func(db string) (map[key]string, int) {
		conn, err := sql.Open("duckdb", db+"?access_mode=read_only")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var dead int
		if err := conn.QueryRow(`SELECT count(*) FROM dead_letters`).Scan(&dead); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(`SELECT source, id, subject FROM events`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[key]string{}
		for rows.Next() {
			var k key
			var subject string
			if err := rows.Scan(&k.source, &k.id, &subject); err != nil {
				t.Fatal(err)
			}
			got[k] = subject
		}
		return got, dead
	}
	all, dead := read(ings[parts].db)
	if len(all) != total || dead != 0 {
		t.Fatalf("all partitions: %d events, %d dead letters; want %d, 0", len(all), dead, total)
	}
	union := map[key]bool{}
	shardOf := map[string]int{} // source → shard
	spread := make([]int, parts)
	sources := make([]int, parts)
	oldIn := map[int]int{}
	for k := range parts {
		got, dead := read(ings[k].db)
		if dead != 0 {
			t.Errorf("shard %d: %d dead letters", k, dead)
		}
		spread[k] = len(got)
		for e, subject := range got {
			if union[e] {
				t.Fatalf("event %v in two shards", e)
			}
			union[e] = true
			if s := all[e]; s != subject {
				t.Fatalf("event %v: shard %d stored subject %s, the all-partitions ingester %s", e, k, subject, s)
			}
			gk, agent, ok := bus.PartitionedSubjectAgent("evo", parts, subject)
			if !ok || gk != k || agent != events.AgentOf(e.source) {
				t.Fatalf("shard %d holds %v stored as %s", k, e, subject)
			}
			// The published subject: the stored one without its
			// partition token.
			published := "evo." + strings.SplitN(subject, ".", 3)[2]
			if want := bus.Partition(published, parts); want != k {
				t.Fatalf("%v published on %s is in shard %d, want %d", e, published, k, want)
			}
			if published == bus.AgentSubject("evo", agent) {
				oldIn[k]++
			} else if published != events.SourceSubject("evo", e.source) {
				t.Fatalf("%v published on %s, want %s", e, published, events.SourceSubject("evo", e.source))
			}
			if s, seen := shardOf[e.source+published]; seen && s != k {
				t.Fatalf("source %s in shards %d and %d", e.source, s, k)
			} else if !seen {
				shardOf[e.source+published] = k
				sources[k]++
			}
		}
	}
	if len(union) != len(all) {
		t.Fatalf("the shards hold %d events, the all-partitions database %d", len(union), len(all))
	}
	t.Logf("%d events of %d (source, subject)s over %d partitions: events %v, sources %v; the old publisher's %d events (evo.<agent>) by partition: %v",
		total, len(shardOf), parts, spread, sources, oldEvents, oldIn)
	for k, c := range spread {
		if c == 0 {
			t.Errorf("partition %d is empty: %v", k, spread)
		}
	}
}

// -partition K gives its database, consumer and query subject their own
// names unless set; -partition needs -partitions, and K must be below N;
// without -partitions nothing changes.
func TestPartitionFlags(t *testing.T) {
	tests := []struct {
		args                  []string
		db, consumer, query   string
		partitions, partition int
		wantUsageFail         bool
	}{
		{nil, "evosignal.duckdb", "evosignal-ingest", "evosignal.query", 0, -1, false},
		{[]string{"-partitions", "4"}, "evosignal.duckdb", "evosignal-ingest", "evosignal.query", 4, -1, false},
		{[]string{"-partitions", "4", "-partition", "2"}, "evosignal-p2.duckdb", "evosignal-ingest-p2", "evosignal.query.p2", 4, 2, false},
		{[]string{"-partitions", "4", "-partition", "0", "-db", "x.duckdb", "-consumer", "c", "-query-subject", "q"}, "x.duckdb", "c", "q", 4, 0, false},
		{[]string{"-partition", "1"}, "", "", "", 0, 0, true},
		{[]string{"-partitions", "4", "-partition", "4"}, "", "", "", 0, 0, true},
		{[]string{"-partitions", "-1"}, "", "", "", 0, 0, true},
	}
	for _, tc := range tests {
		var errOut strings.Builder
		o, err := parse(t.Context(), tc.args, &errOut)
		if tc.wantUsageFail {
			if err == nil {
				t.Errorf("parse(%q) = nil, want a usage error", tc.args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("parse(%q): %v\n%s", tc.args, err, errOut.String())
		}
		c := o.cfg
		if c.DB != tc.db || c.Ingest.Durable != tc.consumer || c.Query.Subject != tc.query ||
			c.Stream.Partitions != tc.partitions || c.Ingest.Partition != tc.partition {
			t.Errorf("parse(%q): db %s, consumer %s, query subject %s, partitions %d, partition %d; want %s, %s, %s, %d, %d",
				tc.args, c.DB, c.Ingest.Durable, c.Query.Subject, c.Stream.Partitions, c.Ingest.Partition,
				tc.db, tc.consumer, tc.query, tc.partitions, tc.partition)
		}
	}
}
