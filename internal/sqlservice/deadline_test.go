package sqlservice

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestClientDeadlineServiceKilled: a request with a time limit ends with
// ErrTimeout soon after that limit when the query service (a real ingester,
// a child process) is SIGKILLed while the query runs or mid-answer — it
// never waits for the per-message Wait (10 minutes).
func TestClientDeadlineServiceKilled(t *testing.T) {
	bin := testkit.BuildCmd(t, "./cmd/ingest")
	tests := []struct {
		name string
		sql  string
		// watch is the subject whose first message marks the moment to kill:
		// the request reaching the service, or the first message of its answer.
		watch string
		seen  func(*nats.Msg) bool
	}{
		{"mid-query", `SELECT count(*) FROM range(100000) a, range(100000) b WHERE a.range * b.range % 7 = 3`,
			DefaultSubject, func(*nats.Msg) bool { return true }},
		{"mid-answer", `SELECT range AS i, repeat('x', 200) AS s FROM range(1000000)`,
			"_INBOX.>", func(m *nats.Msg) bool { return m.Header.Get(HeaderSeq) == "0" && m.Header.Get(HeaderEOS) == "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.StartNATSProcess(t) // each ingester its own: one database, one consumer
			cmd := exec.Command(bin, "-nats", srv.URL(), "-db", filepath.Join(t.TempDir(), "evo.duckdb"), "-http", "", "-log-level", "warn")
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			nc, _ := testkit.Client(t, srv.URL())
			c := NewClient(nc, "")
			c.Grace = time.Second
			deadline := time.Now().Add(time.Minute)
			for {
				_, err := c.Query(t.Context(), Request{SQL: "SELECT 1", TimeoutMS: 5000})
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the ingester's query service never answered: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
			}

			watcher, _ := testkit.Client(t, srv.URL())
			killed := make(chan struct{})
			sub, err := watcher.Subscribe(tt.watch, func(m *nats.Msg) {
				select {
				case <-killed:
				default:
					if tt.seen(m) {
						cmd.Process.Signal(syscall.SIGKILL)
						close(killed)
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			if err := watcher.Flush(); err != nil {
				t.Fatal(err)
			}

			done := make(chan error, 1)
			go func() {
				_, err := c.Query(t.Context(), Request{SQL: tt.sql, TimeoutMS: 3000})
				done <- err
			}()
			select {
			case err := <-done:
				select {
				case <-killed:
				default:
					t.Fatalf("the query ended (%v) before the service was killed", err)
				}
				if !errors.Is(err, ErrTimeout) {
					t.Fatalf("Query after the service was killed = %v, want ErrTimeout", err)
				}
				t.Logf("error: %v", err)
			case <-time.After(2 * time.Minute): // the old client waited 10 minutes
				t.Fatal("Query with a 3 s time limit still waiting 2 minutes after the service was killed")
			}
		})
	}
}
