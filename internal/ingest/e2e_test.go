package ingest_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// sampleEvents reads every valid sample session in testdata.
func sampleEvents(tb testing.TB) []*events.Event {
	tb.Helper()
	files, err := filepath.Glob("../../testdata/events/valid/*.jsonl")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no sample sessions found: %v", err)
	}
	var out []*events.Event
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			e, err := events.Decode(sc.Bytes())
			if err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			out = append(out, e)
		}
		fh.Close()
	}
	return out
}

// collector is a Sink that keeps what it is sent, then forwards it.
type collector struct {
	next agent.Sink
	ids  map[[2]string]bool
	sent int
}

func (c *collector) Send(ctx context.Context, e *events.Event) error {
	c.ids[[2]string{e.Source, e.ID}] = true
	c.sent++
	return c.next.Send(ctx, e)
}

// badMessages are published raw on agent subjects; each must end as a dead
// letter with the reason code given.
func badMessages(tb testing.TB, good *events.Event, maxBytes int) []struct {
	subject, code string
	data          []byte
} {
	tb.Helper()
	mismatch, _ := json.Marshal(good)
	big := strings.Repeat("x", maxBytes)
	// Another event under good's (source, id), sent after it.
	other := *good
	other.Seq += 1000
	conflicting, _ := json.Marshal(&other)
	return []struct {
		subject, code string
		data          []byte
	}{
		{"evo.skilllite", "malformed_json", []byte(`{"specversion": "1.0", "id": `)},
		{"evo.skilllite", "unknown_type", []byte(`{"specversion":"1.0","id":"u1","source":"skilllite/h/w","type":"agent.mood.changed","time":"2026-11-29T10:00:00Z","subject":"s1","datacontenttype":"application/json","seq":1,"data":{}}`)},
		{"evo.skilllite", "schema_violation", []byte(`{"specversion":"1.0","id":"u2","source":"skilllite/h/w","type":"agent.plan.created","time":"2026-11-29T10:00:00Z","subject":"s1","datacontenttype":"application/json","seq":1,"data":{"tasks":[],"origin":"guess"}}`)},
		{"evo.skilllite", "oversize", []byte(`{"pad":"` + big + `"}`)},
		{"evo.someoneelse", "source_mismatch", mismatch},
		{"evo." + events.AgentOf(good.Source), "conflicting_duplicate", conflicting},
	}
}

// tableCounts returns each table's row count.
func tableCounts(tb testing.TB, db *sql.DB) map[string]int64 {
	tb.Helper()
	out := map[string]int64{}
	for _, t := range []string{"events", "session_starts", "session_ends", "plans", "plan_tasks", "replans",
		"replan_dropped", "hints_stripped", "tool_calls", "task_completions", "depth_limits", "dead_letters"} {
		var n int64
		if err := db.QueryRow("SELECT count(*) FROM " + t).Scan(&n); err != nil {
			tb.Fatalf("count %s: %v", t, err)
		}
		out[t] = n
	}
	return out
}

func waitFor(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// endToEnd runs the pipeline of pc (its server settings; the rest as the
// test sets it), publishes the sample sessions, synthetic sessions,
// duplicates and bad messages through JetStream and checks what the
// ingester stored.
func endToEnd(t *testing.T, pc pipeline.Config) {
	ctx := t.Context()
	pc.DB = filepath.Join(t.TempDir(), "e2e.duckdb")
	pc.Ingest.FlushInterval = 20 * time.Millisecond
	pc.Ingest.BatchSize = 500
	pc.Ingest.FactsEvery = 100 * time.Millisecond
	p, err := pipeline.Start(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	nc, js, st, cfg := p.Conn(), p.JetStream(), p.Store(), pc.Ingest

	pub, err := agent.NewPublisher(js, agent.PublisherConfig{})
	if err != nil {
		t.Fatal(err)
	}
	col := &collector{next: pub, ids: map[[2]string]bool{}}
	samples := sampleEvents(t)
	for _, e := range samples {
		if err := col.Send(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	gen := synth.New(7, time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	for range 300 {
		if _, err := gen.Session(ctx, col); err != nil {
			t.Fatal(err)
		}
	}
	// Re-sends outside JetStream's duplicate window: no Nats-Msg-Id, so the
	// stream keeps them and the ingester must skip them.
	for _, e := range samples[:25] {
		b, _ := json.Marshal(e)
		if err := nc.Publish("evo."+events.AgentOf(e.Source), b); err != nil {
			t.Fatal(err)
		}
	}
	bad := badMessages(t, samples[0], cfg.MaxEventBytes)
	for _, m := range bad {
		if _, err := js.Publish(ctx, m.subject, m.data); err != nil {
			t.Fatalf("publish %s: %v", m.code, err)
		}
	}
	if err := pub.Close(ctx); err != nil {
		t.Fatalf("publisher: %v", err)
	}
	want := int64(len(col.ids))
	if col.sent != len(col.ids) {
		t.Fatalf("sent %d events but %d distinct (source, id)", col.sent, len(col.ids))
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := p.WaitIngested(wctx); err != nil {
		t.Fatal(err)
	}
	// Idle now: the ingester stores the facts of every session written.
	waitFor(t, "the ingester to store the facts of every session while idle", 30*time.Second, func() bool {
		n, err := st.PendingFacts(ctx)
		return err == nil && n == 0
	})
	if err := p.StopIngest(); err != nil {
		t.Fatal(err)
	}
	in := p.Ingester()
	// Read after Run returned: a refresh commits before its counters move.
	if s := in.Stats().Snapshot(); s.FactsRefreshes == 0 || s.FactsSessions < 300 {
		t.Errorf("facts refreshes %d storing %d sessions; want some, covering at least the 300 synthetic sessions", s.FactsRefreshes, s.FactsSessions)
	}

	db := st.DB()
	got := tableCounts(t, db)
	if got["events"] != want {
		t.Errorf("events = %d, want %d (distinct events sent)", got["events"], want)
	}
	var distinct int64
	db.QueryRow(`SELECT count(*) FROM (SELECT DISTINCT source, id FROM events)`).Scan(&distinct)
	if distinct != got["events"] {
		t.Errorf("events holds %d rows but %d distinct (source, id)", got["events"], distinct)
	}
	if got["dead_letters"] != int64(len(bad)) {
		t.Errorf("dead_letters = %d, want %d", got["dead_letters"], len(bad))
	}
	for _, m := range bad {
		var n int64
		var reason string
		// raw keeps at most store.MaxDeadLetterRaw bytes; raw_size and
		// raw_sha256 describe the whole message.
		kept := min(len(m.data), store.MaxDeadLetterRaw)
		sum := sha256.Sum256(m.data)
		db.QueryRow(`SELECT count(*), any_value(reason) FROM dead_letters WHERE reason_code = ? AND octet_length(raw) = ? AND raw_size = ? AND raw_sha256 = ?`,
			m.code, kept, len(m.data), hex.EncodeToString(sum[:])).Scan(&n, &reason)
		if n != 1 || reason == "" {
			t.Errorf("dead letter %s: %d rows with its raw bytes (%d kept of %d), reason %q; want 1 with a reason", m.code, n, kept, len(m.data), reason)
		}
	}
	s := in.Stats().Snapshot()
	if s.Duplicates != 25 {
		t.Errorf("duplicates counted = %d, want 25", s.Duplicates)
	}
	// Typed tables hold one row per event of their type.
	for typ, table := range map[string]string{
		"agent.session.started": "session_starts", "agent.session.ended": "session_ends",
		"agent.tool.called": "tool_calls", "agent.plan.updated": "replans",
		"agent.hint.stripped": "hints_stripped", "agent.task.completed": "task_completions",
		"agent.depth_limit.reached": "depth_limits",
	} {
		var n int64
		db.QueryRow(`SELECT count(*) FROM events WHERE type = ?`, typ).Scan(&n)
		if n == 0 || got[table] != n {
			t.Errorf("%s has %d rows, events of type %s = %d (want equal and > 0)", table, got[table], typ, n)
		}
	}
	// Rebuilding from the event log gives the same typed tables and stored
	// facts (stored by refreshes while the stream ran), row for row.
	before := tableDigests(t, db)
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	after := tableDigests(t, db)
	for table, d := range before {
		if after[table] != d {
			t.Errorf("%s after rebuild: %s, before: %s", table, after[table], d)
		}
	}
}

// tableDigests returns, for each typed table and stored facts table, its row count and an
// order-independent digest of its rows.
func tableDigests(tb testing.TB, db *sql.DB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, t := range []string{"session_starts", "session_ends", "plans", "plan_tasks", "replans",
		"replan_dropped", "hints_stripped", "tool_calls", "task_completions", "depth_limits",
		"session_facts_stored", "task_facts_stored"} {
		var d string
		q := `SELECT count(*) || ':' || coalesce(sum(hash(t)::HUGEINT), 0) FROM ` + t + ` t`
		if err := db.QueryRow(q).Scan(&d); err != nil {
			tb.Fatalf("digest %s: %v", t, err)
		}
		out[t] = d
	}
	return out
}

func TestEndToEndEmbedded(t *testing.T) {
	pc := pipeline.DefaultConfig()
	pc.Server = bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}
	endToEnd(t, pc)
}

func TestEndToEndSeparateServerProcess(t *testing.T) {
	pc := pipeline.DefaultConfig()
	pc.NATS.URL = testkit.StartNATSProcess(t).URL()
	endToEnd(t, pc)
}

// A stream deleted and created again restarts its sequences; the ingester
// notices (the stream's creation time is stored with the position) and
// reads the new stream from its start instead of skipping what the old
// position covers.
func TestRecreatedStreamIsReadFromItsStart(t *testing.T) {
	ctx := t.Context()
	pc := pipeline.DefaultConfig()
	pc.Server = bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()}
	pc.DB = filepath.Join(t.TempDir(), "r.duckdb")
	pc.Ingest.FlushInterval = 20 * time.Millisecond
	p, err := pipeline.Open(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	js := p.JetStream()
	ingestAll := func(sessions int, seed uint64) map[[2]string]bool {
		t.Helper()
		if _, err := bus.EnsureStream(ctx, js, pc.Stream); err != nil {
			t.Fatal(err)
		}
		pub, err := agent.NewPublisher(js, agent.PublisherConfig{})
		if err != nil {
			t.Fatal(err)
		}
		col := &collector{next: pub, ids: map[[2]string]bool{}}
		gen := synth.New(seed, time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC))
		for range sessions {
			if _, err := gen.Session(ctx, col); err != nil {
				t.Fatal(err)
			}
		}
		if err := pub.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.Ingest(); err != nil { // a fresh ingester, as after a restart
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := p.WaitIngested(wctx); err != nil {
			t.Fatal(err)
		}
		if err := p.StopIngest(); err != nil {
			t.Fatal(err)
		}
		return col.ids
	}
	first := ingestAll(5, 21) // a short first stream
	if err := js.DeleteStream(ctx, "EVO"); err != nil {
		t.Fatal(err)
	}
	// A longer second one: its last sequence passes the old position, so
	// only the stream's identity tells that its head is new.
	second := ingestAll(40, 22)
	var n int
	if err := p.Store().DB().QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := len(first) + len(second); n != want {
		t.Fatalf("events = %d, want %d (%d from the first stream, %d from the recreated one)", n, want, len(first), len(second))
	}
}

// Messages the stream's retention removed before the ingester read them are
// gone; the ingester reads on from what is left and counts what it missed.
func TestMessagesRemovedBeforeIngestAreCounted(t *testing.T) {
	ctx := t.Context()
	pc := pipeline.DefaultConfig()
	pc.Server = bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()}
	pc.DB = filepath.Join(t.TempDir(), "p.duckdb")
	pc.Ingest.FlushInterval = 20 * time.Millisecond
	p, err := pipeline.Open(ctx, pc) // the ingester starts after the purge
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pub, err := agent.NewPublisher(p.JetStream(), agent.PublisherConfig{})
	if err != nil {
		t.Fatal(err)
	}
	gen := synth.New(31, time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC))
	for range 10 {
		if _, err := gen.Session(ctx, pub); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// As if retention had dropped the head of the stream: sequences 1–50.
	if err := p.Stream().Purge(ctx, jetstream.WithPurgeSequence(51)); err != nil {
		t.Fatal(err)
	}
	info, _ := p.Stream().Info(ctx)
	if err := p.Ingest(); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := p.WaitIngested(wctx); err != nil {
		t.Fatal(err)
	}
	if err := p.StopIngest(); err != nil {
		t.Fatal(err)
	}
	snap := p.Ingester().Stats().Snapshot()
	if snap.Skipped != 50 {
		t.Errorf("skipped = %d, want 50", snap.Skipped)
	}
	var n uint64
	p.Store().DB().QueryRow(`SELECT count(*) FROM events`).Scan(&n)
	if want := info.State.Msgs; n != want {
		t.Errorf("events = %d, want the %d messages left in the stream", n, want)
	}
}

// TestPartitionIsReadWithoutReanchoring: a partition's consumer sees
// stream sequences with gaps (the other partitions' messages) and must take
// them as one delivery after another, not as lost deliveries: every
// message of the partition stored, no re-anchoring.
func TestPartitionIsReadWithoutReanchoring(t *testing.T) {
	ctx := t.Context()
	pc := pipeline.DefaultConfig()
	pc.Server = bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()}
	pc.DB = filepath.Join(t.TempDir(), "p1.duckdb")
	pc.Stream.Partitions = 4
	pc.Ingest.Partition = 1
	pc.Ingest.FlushInterval = 20 * time.Millisecond
	pc.Ingest.BatchSize = 50
	p, err := pipeline.Start(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pub, err := agent.NewPublisher(p.JetStream(), agent.PublisherConfig{})
	if err != nil {
		t.Fatal(err)
	}
	gen := synth.New(41, time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC))
	for range 120 {
		if _, err := gen.Session(ctx, pub); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := p.Stream().Info(ctx, jetstream.WithSubjectFilter(bus.PartitionFilter(pc.Stream.Prefix, 1)))
	if err != nil {
		t.Fatal(err)
	}
	var want uint64
	for _, n := range info.State.Subjects {
		want += n
	}
	if want == 0 || want == info.State.Msgs {
		t.Fatalf("partition 1 holds %d of %d messages: want some, not all", want, info.State.Msgs)
	}
	var got uint64
	waitFor(t, "partition 1's messages to be stored", 30*time.Second, func() bool {
		p.Store().DB().QueryRow(`SELECT count(*) FROM events`).Scan(&got)
		return got >= want
	})
	if err := p.StopIngest(); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("events = %d, want partition 1's %d messages", got, want)
	}
	if s := p.Ingester().Stats().Snapshot(); s.Reanchors != 0 || s.Skipped != 0 {
		t.Errorf("re-anchors %d, skipped %d over %d messages; want 0 and 0", s.Reanchors, s.Skipped, want)
	}
}
