package ingest

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestServerConfigRestrictsQueries runs the ingester with its embedded
// server given testdata/nats/agents.conf and its own credentials: the
// analyst's credentials may query, an agent's may not.
func TestServerConfigRestrictsQueries(t *testing.T) {
	port := testkit.FreePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	var stderr bytes.Buffer
	done := make(chan error, 1)
	ctx := t.Context()
	go func() {
		done <- run(ctx, []string{"-db", filepath.Join(t.TempDir(), "evo.duckdb"), "-listen", fmt.Sprintf("127.0.0.1:%d", port),
			"-server-config", "../../../testdata/nats/agents.conf", "-user", "ingest", "-password", "ingest-secret", "-log-level", "warn"},
			nil, &bytes.Buffer{}, &stderr)
	}()
	connect := func(user, password string) *sqlservice.Client {
		nc, err := bus.Connect(bus.ConnConfig{URL: url, Name: user, User: user, Password: password}, nil)
		if err != nil {
			t.Fatalf("connect as %s: %v", user, err)
		}
		t.Cleanup(nc.Close)
		c := sqlservice.NewClient(nc, "")
		c.Grace = 0
		return c
	}
	var analyst *sqlservice.Client
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("ingest ended: %v\n%s", err, stderr.String())
		default:
		}
		if analyst == nil {
			nc, err := bus.Connect(bus.ConnConfig{URL: url, Name: "analyst", User: "analyst", Password: "analyst-secret"}, nil)
			if err == nil {
				nc.Close()
				analyst = connect("analyst", "analyst-secret")
			}
		}
		if analyst != nil {
			if res, err := analyst.Query(ctx, sqlservice.Request{SQL: "SELECT 42 AS n", TimeoutMS: 5000}); err == nil {
				if len(res.Rows) != 1 {
					t.Fatalf("analyst's answer %+v", res)
				}
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the analyst never got an answer\n%s", stderr.String())
		}
	}
	agentA := connect("agent-a", "a-secret")
	if res, err := agentA.Query(ctx, sqlservice.Request{SQL: "SELECT 42 AS n", TimeoutMS: 1000}); err == nil {
		t.Fatalf("agent A's credentials got an answer %+v, want none", res)
	}
}
