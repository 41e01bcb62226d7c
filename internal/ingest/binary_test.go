package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/pipeline"
)

// binaryMessage is e in CloudEvents binary content mode, as the NATS
// protocol binding defines it: each attribute in a ce-<name> header, its
// value percent-encoded (space, '"', '%' and what is not printable ASCII),
// the data as the body with its media type in Content-Type. edit, if not
// nil, changes the headers before the message is built.
func binaryMessage(tb testing.TB, e *events.Event, edit func(nats.Header)) *nats.Msg {
	tb.Helper()
	raw, err := json.Marshal(e)
	if err != nil {
		tb.Fatal(err)
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &attrs); err != nil {
		tb.Fatal(err)
	}
	h := nats.Header{}
	for name, v := range attrs {
		switch name {
		case "data":
			continue
		case "datacontenttype":
			var s string
			json.Unmarshal(v, &s)
			h.Set("Content-Type", s)
			continue
		}
		s := string(v)
		if v[0] == '"' {
			json.Unmarshal(v, &s)
		}
		h.Set("ce-"+name, percentEncode(s))
	}
	if edit != nil {
		edit(h)
	}
	return &nats.Msg{Subject: "evo." + events.AgentOf(e.Source), Header: h, Data: attrs["data"]}
}

func percentEncode(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || c == '"' || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Events sent in CloudEvents binary content mode through a real
// nats-server are stored as their structured form would be; a bad one is
// dead-lettered with its reason, logged with its code, reason, subject and
// id, and counted by reason on /metrics beside the commit-latency
// histogram and build_info.
func TestBinaryContentModeThroughNATS(t *testing.T) {
	ctx := t.Context()
	var logs testkit.SyncBuffer
	pc := pipeline.DefaultConfig()
	pc.Server = bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}
	pc.DB = t.TempDir() + "/binary.duckdb"
	pc.Ingest.FlushInterval = 20 * time.Millisecond
	pc.Log = slog.New(slog.NewTextHandler(&logs, nil))
	p, err := pipeline.Start(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	js := p.JetStream()

	samples := sampleEvents(t)
	var good []*events.Event
	for _, e := range samples {
		if len(good) < 20 && strings.Contains(e.Source, "/") { // a source with path segments: '/' in a header value
			good = append(good, e)
		}
	}
	if len(good) == 0 {
		t.Fatal("no sample event has a source with path segments")
	}
	for _, e := range good {
		if _, err := js.PublishMsg(ctx, binaryMessage(t, e, nil)); err != nil {
			t.Fatal(err)
		}
	}
	bad := binaryMessage(t, samples[len(samples)-1], func(h nats.Header) {
		h.Set("ce-id", "naive-time")
		h.Set("ce-time", percentEncode("2026-11-03 10:00:00"))
	})
	if _, err := js.PublishMsg(ctx, bad); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := p.WaitIngested(wctx); err != nil {
		t.Fatal(err)
	}

	db := p.Store().DB()
	for _, e := range good {
		var seq int64
		var data string
		if err := db.QueryRowContext(ctx, `SELECT seq, data::VARCHAR FROM events WHERE source = ? AND id = ?`, e.Source, e.ID).Scan(&seq, &data); err != nil {
			t.Fatalf("event %s from %s sent in binary mode is not stored: %v", e.ID, e.Source, err)
		}
		var got, want any
		json.Unmarshal([]byte(data), &got)
		json.Unmarshal(e.Data, &want)
		if seq != e.Seq || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("event %s stored with seq %d data %s, want seq %d data %s", e.ID, seq, data, e.Seq, e.Data)
		}
	}
	var code, reason string
	if err := db.QueryRowContext(ctx, `SELECT reason_code, reason FROM dead_letters WHERE id = 'naive-time'`).Scan(&code, &reason); err != nil {
		t.Fatalf("the binary event with a naive time is not dead-lettered: %v", err)
	}
	if code != "schema_violation" || !strings.Contains(reason, "/time") {
		t.Errorf("dead letter %s: %s, want a schema_violation at /time", code, reason)
	}

	log := logs.String()
	for _, want := range []string{`msg="dead letter" code=schema_violation reason=`, "/time", "subject=" + bad.Subject, "id=naive-time"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}

	srv := httptest.NewServer(p.Ingester().Handler())
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	metrics := string(body)
	for _, want := range []string{
		fmt.Sprintf(`evosignal_ingest_messages_total{outcome="accepted"} %d`, len(good)),
		`evosignal_ingest_messages_total{outcome="dead_letter"} 1`,
		`evosignal_ingest_messages_total{outcome="duplicate"} 0`,
		`evosignal_ingest_dead_letters_total{reason="schema_violation"} 1`,
		`evosignal_ingest_commit_duration_seconds_bucket{le="+Inf"} `,
		`evosignal_build_info{goversion="go`,
		`evosignal_store_checkpoints_total `,
		`evosignal_store_checkpoint_failures_total 0`,
		`evosignal_store_wal_bytes `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(metrics, "evosignal_ingest_commit_duration_seconds_count 0") {
		t.Errorf("the commit-latency histogram observed no commit")
	}
}
