package ingest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestClusterNodeLossAndRestart: a JetStream cluster of three nats-server
// processes, the stream at three replicas, the ingester (a child process)
// given all three URLs. Mid-stream the stream leader is SIGKILLed, and the
// ingester is SIGKILLed and restarted while that node is down: the restarted
// ingester waits out the election instead of exiting, goes on with two
// nodes, and once the node is back every event is stored exactly once.
func TestClusterNodeLossAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the cluster test runs three nats-server processes and streams 20,000 events")
	}
	ctx := t.Context()
	cl := testkit.StartNATSCluster(t, 3)
	_, js := testkit.Client(t, cl.URLs())
	_, pubJS := testkit.Client(t, cl.URLs()) // the agents' own connection
	sc := bus.DefaultStream()
	sc.Replicas = 3
	stream, err := bus.Retry{}.EnsureStream(ctx, js, sc)
	if err != nil {
		t.Fatal(err)
	}
	bin := testkit.BuildCmd(t, "./cmd/ingest")
	dbPath := filepath.Join(t.TempDir(), "cluster.duckdb")
	start := func() (*exec.Cmd, chan error) {
		cmd := exec.Command(bin, "-nats", cl.URLs(), "-replicas", "3", "-db", dbPath, "-batch", "1000", "-flush", "50ms", "-log-level", "warn")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		return cmd, exited
	}
	running := func(exited chan error) {
		t.Helper()
		select {
		case err := <-exited:
			t.Fatalf("the ingester exited: %v", err)
		default:
		}
	}

	var sent map[[2]string]bool
	var pubErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sent, pubErr = publishSessions(ctx, t, pubJS, 20_000, 31) }()

	cmd, exited := start()
	waitFor(t, "the ingester to commit past 4,000", time.Minute, func() bool { return ackFloor(ctx, js) >= 4_000 })
	info, err := stream.Info(ctx)
	if err != nil || info.Cluster == nil || cl.Node(info.Cluster.Leader) == nil {
		t.Fatalf("stream leader: %+v, %v", info, err)
	}
	down := cl.Node(info.Cluster.Leader)
	down.Kill()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	floor := ackFloor(ctx, js)
	t.Logf("SIGKILLed stream leader %s and the ingester (ack floor %d); restarting the ingester with the node down", down.Name, floor)
	cmd, exited = start()
	waitFor(t, "the restarted ingester to commit with a node down", time.Minute, func() bool {
		running(exited)
		return ackFloor(ctx, js) >= floor+1_000
	})
	running(exited)
	down.Start()
	wg.Wait()
	if pubErr != nil {
		t.Fatal(pubErr)
	}
	last := lastSeq(ctx, t, js)
	waitFor(t, "the ingester to ack the whole stream", time.Minute, func() bool {
		running(exited)
		return ackFloor(ctx, js) == last
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("ingester after SIGTERM: %v", err)
	}
	checkExactlyOnce(t, dbPath, sent, last)
	t.Logf("sent %d events, stream last seq %d", len(sent), last)
}
