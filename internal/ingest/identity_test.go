package ingest_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestConsumerBelongsToOneDatabase: a second ingester with another database
// and the same consumer name refuses to take the consumer over, naming both
// databases and the -consumer flag, and leaves the first one's consumer
// alone; with its own consumer name it runs beside the first.
func TestConsumerBelongsToOneDatabase(t *testing.T) {
	ctx := t.Context()
	_, _, js := testkit.Embedded(t)
	stream, err := bus.EnsureStream(ctx, js, bus.DefaultStream())
	if err != nil {
		t.Fatal(err)
	}
	open := func(name string) (*store.Store, string) {
		st, err := store.Open(ctx, filepath.Join(t.TempDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		id, err := st.Identity(ctx)
		if err != nil || id == "" {
			t.Fatalf("identity of %s = %q, %v", name, id, err)
		}
		return st, id
	}
	stA, idA := open("a.duckdb")
	stB, idB := open("b.duckdb")
	if idA == idB {
		t.Fatalf("two new databases share the identity %s", idA)
	}
	if again, _ := stA.Identity(ctx); again != idA {
		t.Fatalf("identity changed from %s to %s", idA, again)
	}
	cfg := ingest.DefaultConfig()
	run := func(st *store.Store, cfg ingest.Config) (stop func() error, done chan error) {
		in, err := ingest.New(cfg, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		done = make(chan error, 1)
		go func() { done <- in.Run(runCtx, js) }()
		return func() error { cancel(); return <-done }, done
	}
	stopA, doneA := run(stA, cfg)
	ownerOf := func(durable string) string {
		c, err := stream.Consumer(ctx, durable)
		if err != nil {
			return ""
		}
		info, err := c.Info(ctx)
		if err != nil {
			return ""
		}
		return info.Config.Metadata[bus.MetaDatabase]
	}
	owner := func() string { return ownerOf(cfg.Durable) }
	waitFor(t, "the first ingester to record its database on the consumer", 30*time.Second, func() bool { return owner() == idA })

	_, doneB := run(stB, cfg)
	select {
	case err := <-doneB:
		if !errors.Is(err, bus.ErrConsumerTaken) {
			t.Fatalf("second ingester: %v, want ErrConsumerTaken", err)
		}
		for _, want := range []string{idA, idB, "-consumer", cfg.Durable} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	case err := <-doneA:
		t.Fatalf("the first ingester stopped: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the second ingester, with another database, still runs on the first one's consumer")
	}
	if got := owner(); got != idA {
		t.Fatalf("consumer records database %q after the refusal, want %s", got, idA)
	}

	cfgB := cfg
	cfgB.Durable = "evosignal-ingest-b"
	stopB, _ := run(stB, cfgB)
	waitFor(t, "the second ingester to record its database on its own consumer", 30*time.Second, func() bool { return ownerOf(cfgB.Durable) == idB })
	if err := stopB(); err != nil {
		t.Fatalf("second ingester with its own consumer: %v", err)
	}
	if err := stopA(); err != nil {
		t.Fatalf("first ingester: %v", err)
	}
}
