package ingest_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// crashEvents is how many events the crash tests publish at least.
const crashEvents = 100_000

// publishSessions publishes synthetic sessions until at least n events were
// sent, and returns the distinct (source, id) keys sent.
func publishSessions(ctx context.Context, tb testing.TB, js jetstream.JetStream, n int, seed uint64) (map[[2]string]bool, error) {
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{AckTimeout: 2 * time.Second, Retries: 50})
	if err != nil {
		return nil, err
	}
	col := &collector{next: pub, ids: map[[2]string]bool{}}
	gen := synth.New(seed, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	for col.sent < n {
		if _, err := gen.Session(ctx, col); err != nil {
			pub.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	if err := pub.Close(ctx); err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	return col.ids, nil
}

// checkExactlyOnce opens the database and checks that it holds exactly the
// events sent, once each, with the position at the end of the stream.
func checkExactlyOnce(tb testing.TB, dbPath string, sent map[[2]string]bool, lastSeq uint64) {
	tb.Helper()
	db, err := sql.Open("duckdb", dbPath+"?access_mode=read_only")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var rows, distinct int64
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT (source, id)) FROM events`).Scan(&rows, &distinct); err != nil {
		tb.Fatal(err)
	}
	if rows != int64(len(sent)) || distinct != rows {
		tb.Errorf("events: %d rows, %d distinct; want %d, each once", rows, distinct, len(sent))
	}
	r, err := db.Query(`SELECT source, id FROM events`)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	missing := len(sent)
	for r.Next() {
		var k [2]string
		if err := r.Scan(&k[0], &k[1]); err != nil {
			tb.Fatal(err)
		}
		if sent[k] {
			missing--
		} else {
			tb.Errorf("stored an event never sent: %v", k)
		}
	}
	if err := r.Err(); err != nil {
		tb.Fatal(err)
	}
	if missing != 0 {
		tb.Errorf("%d events sent were never stored", missing)
	}
	var pos uint64
	if err := db.QueryRow(`SELECT last_seq FROM ingest_position`).Scan(&pos); err != nil {
		tb.Fatal(err)
	}
	if pos != lastSeq {
		tb.Errorf("position = %d, want the stream's last sequence %d", pos, lastSeq)
	}
	var dead int64
	db.QueryRow(`SELECT count(*) FROM dead_letters`).Scan(&dead)
	if dead != 0 {
		tb.Errorf("dead_letters = %d, want 0", dead)
	}
}

func ackFloor(ctx context.Context, js jetstream.JetStream) uint64 {
	c, err := js.Consumer(ctx, "EVO", "evosignal-ingest")
	if err != nil {
		return 0
	}
	info, err := c.Info(ctx)
	if err != nil {
		return 0
	}
	return info.AckFloor.Stream
}

func lastSeq(ctx context.Context, tb testing.TB, js jetstream.JetStream) uint64 {
	tb.Helper()
	s, err := js.Stream(ctx, "EVO")
	if err != nil {
		tb.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return info.State.LastSeq
}

// TestSIGKILLMidStream kills the ingester (a child process) twice while
// 100,000+ events stream in, restarts it, and finds every event exactly once.
func TestSIGKILLMidStream(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the crash test streams 100,000 events")
	}
	ctx := t.Context()
	nats := testkit.StartNATSProcess(t)
	_, js := testkit.Client(t, nats.URL())
	_, pubJS := testkit.Client(t, nats.URL())
	if _, err := bus.EnsureStream(ctx, js, bus.DefaultStream()); err != nil {
		t.Fatal(err)
	}
	bin := testkit.BuildCmd(t, "./cmd/ingest")
	dbPath := filepath.Join(t.TempDir(), "crash.duckdb")
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "-nats", nats.URL(), "-db", dbPath, "-batch", "2000", "-flush", "50ms", "-log-level", "warn")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}

	var sent map[[2]string]bool
	var pubErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sent, pubErr = publishSessions(ctx, t, pubJS, crashEvents, 11) }()

	cmd := start()
	for _, at := range []uint64{20_000, 60_000} {
		waitFor(t, fmt.Sprintf("the ingester to commit past %d", at), 2*time.Minute, func() bool { return ackFloor(ctx, js) >= at })
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		t.Logf("SIGKILL at ack floor %d", ackFloor(ctx, js))
		cmd = start()
	}
	wg.Wait()
	if pubErr != nil {
		t.Fatal(pubErr)
	}
	last := lastSeq(ctx, t, js)
	waitFor(t, "the ingester to ack the whole stream", 2*time.Minute, func() bool { return ackFloor(ctx, js) == last })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ingester after SIGTERM: %v", err)
	}
	checkExactlyOnce(t, dbPath, sent, last)
}

// TestNATSRestartMidStream restarts the NATS server process twice while
// 100,000+ events stream through it; the ingester (in process) and the
// publisher ride it out, and every event is stored exactly once.
func TestNATSRestartMidStream(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the restart test streams 100,000 events")
	}
	ctx := t.Context()
	srv := testkit.StartNATSProcess(t)
	pc := pipeline.DefaultConfig()
	pc.NATS.URL = srv.URL()
	pc.DB = filepath.Join(t.TempDir(), "restart.duckdb")
	pc.Ingest.BatchSize, pc.Ingest.FlushInterval, pc.Ingest.AckWait = 2000, 50*time.Millisecond, 5*time.Second
	pc.Log = slog.New(slog.NewTextHandler(t.Output(), nil))
	p, err := pipeline.Start(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, pubJS := testkit.Client(t, srv.URL()) // the agents' own connection

	var sent map[[2]string]bool
	var pubErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sent, pubErr = publishSessions(ctx, t, pubJS, crashEvents, 13) }()

	in := p.Ingester()
	for _, at := range []int64{20_000, 60_000} {
		waitFor(t, fmt.Sprintf("the ingester to take %d messages", at), 2*time.Minute, func() bool { return in.Stats().Snapshot().Messages >= at })
		srv.Stop()
		time.Sleep(500 * time.Millisecond)
		srv.Start()
		t.Logf("restarted nats-server after %d messages", in.Stats().Snapshot().Messages)
	}
	wg.Wait()
	if pubErr != nil {
		t.Fatal(pubErr)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	last, err := p.WaitIngested(wctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, pc.DB, sent, last)
	t.Logf("re-anchors: %d, redeliveries: %d", in.Stats().Snapshot().Reanchors, in.Stats().Snapshot().Redelivered)
}

var _ = events.SessionStarted
