package bus_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

func startEmbedded(tb testing.TB) (*bus.Server, jetstream.JetStream) {
	tb.Helper()
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: tb.TempDir()}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	return srv, js
}

// TestPartitionedStream: with Partitions 4 the server stores a message
// published on evo.<rest> as evo.<K>.<rest>, K as bus.Partition computes it
// (nats-server's own {{partition}}), for token subjects, old evo.<agent>
// subjects and deeper ones alike; PartitionedSubjectAgent reads the agent
// back.
func TestPartitionedStream(t *testing.T) {
	_, js := startEmbedded(t)
	ctx := t.Context()
	cfg := bus.DefaultStream()
	cfg.Partitions = 4
	st, err := bus.EnsureStream(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for i := range 200 {
		subjects = append(subjects, events.SourceSubject("evo", fmt.Sprintf("agent-%d/host/worker-%d", i%3, i)))
	}
	subjects = append(subjects, "evo.old", "evo.old.x.y", "evo.3")
	for _, s := range subjects {
		if _, err := js.Publish(ctx, s, []byte("{}")); err != nil {
			t.Fatalf("publish on %s: %v", s, err)
		}
	}
	spread := make([]int, cfg.Partitions)
	for i, s := range subjects {
		m, err := st.GetMsg(ctx, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		k := bus.Partition(s, cfg.Partitions)
		want := "evo." + strconv.Itoa(k) + s[len("evo"):]
		if m.Subject != want {
			t.Fatalf("published on %s, stored as %s, want %s", s, m.Subject, want)
		}
		gk, agent, ok := bus.PartitionedSubjectAgent("evo", cfg.Partitions, m.Subject)
		if wantAgent, _ := bus.SubjectAgent("evo", s); !ok || gk != k || agent != wantAgent {
			t.Fatalf("PartitionedSubjectAgent(%s) = %d, %q, %v; want %d, %q", m.Subject, gk, agent, ok, k, wantAgent)
		}
		if i < 200 {
			spread[k]++
		}
	}
	t.Logf("200 sources over 4 partitions: %v", spread)
	for k, n := range spread {
		if n < 20 {
			t.Errorf("partition %d holds %d of 200 sources: %v", k, n, spread)
		}
	}
}

// TestPartitionsChange: a stream partitioned in 4 is not re-partitioned or
// un-partitioned by an ingester asking otherwise; the same count is fine; an
// unpartitioned stream gets no transform.
func TestPartitionsChange(t *testing.T) {
	_, js := startEmbedded(t)
	ctx := t.Context()
	plain := bus.DefaultStream()
	st, err := bus.EnsureStream(ctx, js, plain)
	if err != nil {
		t.Fatal(err)
	}
	if tr := st.CachedInfo().Config.SubjectTransform; tr != nil {
		t.Fatalf("unpartitioned stream has a subject transform %+v", tr)
	}
	four := plain
	four.Partitions = 4
	var pe *bus.PartitionsError
	if _, err := bus.EnsureStream(ctx, js, four); !errors.As(err, &pe) || !bus.Permanent(err) {
		t.Fatalf("partitioning an unpartitioned stream: %v, want a permanent *PartitionsError", err)
	}
	other := bus.DefaultStream()
	other.Name = "OTHER"
	other.Prefix = "other"
	other.Partitions = 4
	if _, err := bus.EnsureStream(ctx, js, other); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.EnsureStream(ctx, js, other); err != nil {
		t.Fatalf("the same partitions again: %v", err)
	}
	for _, n := range []int{0, 8} {
		c := other
		c.Partitions = n
		_, err := bus.EnsureStream(ctx, js, c)
		if !errors.As(err, &pe) {
			t.Fatalf("partitions %d on a stream of 4: %v, want a *PartitionsError", n, err)
		}
		t.Logf("partitions %d: %v", n, err)
	}
}

// TestPartitionedStreamCluster: on a cluster of three nats-server
// processes, the stream at three replicas, partitioning needs no server
// configuration: the subject transform is part of the stream, and a
// consumer on PartitionFilter(k) gets exactly the messages of partition k,
// from whichever node the publisher is connected to.
func TestPartitionedStreamCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs three nats-server processes")
	}
	ctx := t.Context()
	cl := testkit.StartNATSCluster(t, 3)
	_, js := testkit.Client(t, cl.URLs())
	cfg := bus.DefaultStream()
	cfg.Replicas, cfg.Partitions = 3, 3
	st, err := bus.Retry{}.EnsureStream(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int, cfg.Partitions)
	for _, node := range []string{"n1", "n2", "n3"} {
		_, pjs := testkit.Client(t, cl.Node(node).URL())
		for i := range 50 {
			s := events.SourceSubject("evo", fmt.Sprintf("agent/%s/worker-%d", node, i))
			if _, err := pjs.Publish(ctx, s, []byte("{}")); err != nil {
				t.Fatalf("publish on %s through %s: %v", s, node, err)
			}
			want[bus.Partition(s, cfg.Partitions)]++
		}
	}
	for k := range cfg.Partitions {
		c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{FilterSubject: bus.PartitionFilter("evo", k), AckPolicy: jetstream.AckNonePolicy})
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if int(info.NumPending) != want[k] {
			t.Errorf("partition %d: %d messages, want %d", k, info.NumPending, want[k])
		}
	}
	t.Logf("150 sources over 3 partitions at 3 replicas: %v", want)
}
