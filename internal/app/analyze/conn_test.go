package analyze

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
)

// tokenServer starts a nats-server with JetStream that admits only clients
// presenting token, and returns its URL.
func tokenServer(tb testing.TB, token string) string {
	tb.Helper()
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: tb.TempDir(), Authorization: token, NoSigs: true,
	})
	if err != nil {
		tb.Fatal(err)
	}
	ns.Start()
	tb.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(30 * time.Second) {
		tb.Fatal("nats-server not ready")
	}
	return ns.ClientURL()
}

// tokenService starts a server that admits only token (tokenServer) and
// the query service on it, over a database of the remote fixtures; it
// returns the server's URL, the database's path, its store and the
// service's connection, all closed when the test ends.
func tokenService(tb testing.TB, token string) (url, path string, st *store.Store, nc *nats.Conn) {
	tb.Helper()
	url = tokenServer(tb, token)
	path = remoteDB(tb, remoteFixtures(tb)...)
	st, err := store.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	if nc, err = nats.Connect(url, nats.Token(token)); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	svc, err := sqlservice.Start(context.Background(), nc, st.DB(), sqlservice.DefaultConfig(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close() })
	return url, path, st, nc
}

// Every analyze command that talks to NATS takes the connection flags that
// ingest, bridge and agentsim take (cli.ConnFlags): here -token against a
// server that requires one, for the query service (-nats) and for rules
// -publish.
func TestNATSConnectionFlags(t *testing.T) {
	const token = "s3cret"
	url, path, st, nc := tokenService(t, token)

	analyze := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	commands := [][]string{
		{"sql", "-nats", url, "SELECT 1 AS one"},
		{"replans", "-nats", url, "-format", "json"},
		{"hints", "-nats", url, "-format", "json"},
		{"report", "-nats", url, "-out", t.TempDir()},
	}
	for _, args := range commands {
		if out, err := analyze(args...); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("analyze %s without -token = %v, want an authorization error\n%s", strings.Join(args, " "), err, out)
		}
		withToken := append([]string{args[0], "-token", token}, args[1:]...)
		if out, err := analyze(withToken...); err != nil {
			t.Errorf("analyze %s = %v\n%s", strings.Join(withToken, " "), err, out)
		}
	}

	// rules -publish reads the file and publishes with the same flags.
	st.Close()
	args := []string{"rules", "-db", path, "-publish", "-nats", url}
	if out, err := analyze(args...); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("analyze %s without -token = %v, want an authorization error\n%s", strings.Join(args, " "), err, out)
	}
	if out, err := analyze(append(args, "-token", token)...); err != nil {
		t.Fatalf("analyze %s -token … = %v\n%s", strings.Join(args, " "), err, out)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), ruleset.DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(context.Background(), ruleset.GlobalKey); err != nil {
		t.Fatalf("global rules after -publish: %v", err)
	}
}
