package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
)

// startWithConfig starts the embedded server with testdata/nats/agents.conf.
func startWithConfig(tb testing.TB) *bus.Server {
	tb.Helper()
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: tb.TempDir(), ConfigFile: "../../testdata/nats/agents.conf"}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	return srv
}

func connectAs(tb testing.TB, url, user, password string) (*nats.Conn, jetstream.JetStream) {
	tb.Helper()
	nc, err := bus.Connect(bus.ConnConfig{URL: url, Name: tb.Name() + " " + user, User: user, Password: password}, nil)
	if err != nil {
		tb.Fatalf("connect as %s: %v", user, err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	return nc, js
}

// TestServerConfigPermissions: with the per-agent config file, agent A's
// credentials publish on A's subject only: its attempt to publish as agent
// B is refused and nothing of it reaches the stream; no credentials, no
// connection.
func TestServerConfigPermissions(t *testing.T) {
	srv := startWithConfig(t)
	ctx := t.Context()
	if _, err := nats.Connect(srv.ClientURL(), nats.MaxReconnects(0)); err == nil {
		t.Fatal("connected without credentials, want an authorization error")
	}
	_, ingestJS := connectAs(t, srv.ClientURL(), "ingest", "ingest-secret")
	st, err := bus.EnsureStream(ctx, ingestJS, bus.DefaultStream())
	if err != nil {
		t.Fatalf("ingest user sets up the stream: %v", err)
	}
	_, a := connectAs(t, srv.ClientURL(), "agent-a", "a-secret")
	if _, err := a.Publish(ctx, bus.AgentSubject("evo", "agent-a"), []byte(`{"own":true}`)); err != nil {
		t.Fatalf("agent A publishes on its own subject: %v", err)
	}
	for _, subject := range []string{bus.AgentSubject("evo", "agent-b"), "evo.agent-b.x", "evo.agent-ab"} {
		pctx, cancel := context.WithTimeout(ctx, time.Second) // a refused publish gets no ack; the stream count below is the proof
		_, err := a.Publish(pctx, subject, []byte(`{"as":"b"}`))
		cancel()
		if err == nil {
			t.Errorf("agent A published on %s, want a permissions error", subject)
		} else if !errors.Is(err, nats.ErrPermissionViolation) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
			t.Errorf("agent A publishing on %s: %v, want a permissions violation (or no ack)", subject, err)
		}
	}
	_, b := connectAs(t, srv.ClientURL(), "agent-b", "b-secret")
	if _, err := b.Publish(ctx, "evo.agent-b.x", []byte(`{"own":true}`)); err != nil {
		t.Fatalf("agent B publishes on its own subject: %v", err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("evo.>"))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 || info.State.Subjects["evo.agent-a"] != 1 || info.State.Subjects["evo.agent-b.x"] != 1 {
		t.Fatalf("stream holds %d messages on %v, want one on evo.agent-a and one on evo.agent-b.x", info.State.Msgs, info.State.Subjects)
	}
}
