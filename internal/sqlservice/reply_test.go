package sqlservice

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestAnswersOnlyOnInboxes: a request whose reply subject is not an inbox
// (here the event stream's evo.victim, valid or not) gets no answer there and
// nothing reaches the stream; a request with an inbox under a configured
// prefix is answered.
func TestAnswersOnlyOnInboxes(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, js := testkit.Embedded(t)
	if _, err := bus.EnsureStream(t.Context(), js, bus.DefaultStream()); err != nil {
		t.Fatal(err)
	}
	startService(t, nc, st.DB(), func(c *Config) { c.InboxPrefix = "_INBOX_evo" })
	cnc, _ := testkit.Client(t, srv.ClientURL())
	victim, err := cnc.SubscribeSync("evo.victim")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"sql":"SELECT 1"}`, `{"sql":"SELECT 1","format":"json"}`, `not json`} {
		if err := cnc.PublishRequest(DefaultSubject, "evo.victim", []byte(body)); err != nil {
			t.Fatal(err)
		}
		// The default inbox prefix is not the configured one either.
		if err := cnc.PublishRequest(DefaultSubject, nats.NewInbox(), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	// The service takes requests in order: once a later one is answered,
	// the earlier ones were handled.
	inc, err := nats.Connect(srv.ClientURL(), nats.CustomInboxPrefix("_INBOX_evo"))
	if err != nil {
		t.Fatal(err)
	}
	defer inc.Close()
	if _, err := NewClient(inc, "").Query(t.Context(), Request{SQL: "SELECT 1"}); err != nil {
		t.Fatalf("query with a reply under the configured inbox prefix: %v", err)
	}
	if err := cnc.Flush(); err != nil {
		t.Fatal(err)
	}
	if m, err := victim.NextMsg(100 * time.Millisecond); err == nil {
		t.Fatalf("an answer landed on evo.victim: headers %v, data %.200q", m.Header, m.Data)
	}
	info, err := js.Stream(context.Background(), "EVO")
	if err != nil {
		t.Fatal(err)
	}
	if si, err := info.Info(t.Context()); err != nil || si.State.Msgs != 0 {
		t.Fatalf("event stream holds %d messages (%v), want none", si.State.Msgs, err)
	}
	m, err := cnc.Request("$SRV.STATS."+ServiceName, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var stats struct {
		Endpoints []struct{ Data json.RawMessage }
	}
	var data map[string]int64
	if json.Unmarshal(m.Data, &stats) != nil || len(stats.Endpoints) != 1 || json.Unmarshal(stats.Endpoints[0].Data, &data) != nil ||
		data["refused"] != 6 || data["answered"] != 1 {
		t.Fatalf("service stats %s, want 6 refused and 1 answered", m.Data)
	}
}
