package ingest_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// mountTmpfs mounts a tmpfs of size (mount syntax: "4m") on a new directory
// and unmounts it when the test ends. The fault tests need it: without root
// (CI runs them as root) they fail, they do not skip.
func mountTmpfs(tb testing.TB, size string) string {
	tb.Helper()
	dir := tb.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		tb.Fatalf("mount a %s tmpfs on %s for the disk-full test (it needs root and mount(8), as in CI): %v: %s", size, dir, err, out)
	}
	tb.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			tb.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

func resizeTmpfs(tb testing.TB, dir, size string) {
	tb.Helper()
	if out, err := exec.Command("mount", "-o", "remount,size="+size, dir).CombinedOutput(); err != nil {
		tb.Fatalf("grow the tmpfs on %s to %s: %v: %s", dir, size, err, out)
	}
}

// health is /healthz's answer.
type health struct {
	code   int
	Status string `json:"status"`
	Error  string `json:"error"`
}

func getHealth(tb testing.TB, url string) health {
	tb.Helper()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	h := health{code: resp.StatusCode}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		tb.Fatal(err)
	}
	return h
}

// faultRig is an ingester on a real embedded nats-server, writing a store
// at dbPath, with its HTTP handler served.
type faultRig struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	st     *store.Store
	in     *ingest.Ingester
	url    string
	cancel context.CancelFunc
	done   chan error
}

func startRig(t *testing.T, dbPath string, opts store.Options) *faultRig {
	t.Helper()
	_, nc, js := testkit.Embedded(t)
	ctx := t.Context()
	if _, err := bus.EnsureStream(ctx, js, bus.DefaultStream()); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenWith(ctx, dbPath, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := ingest.DefaultConfig()
	cfg.BatchSize = 500
	cfg.FlushInterval = 50 * time.Millisecond
	cfg.RetryMax = time.Second
	// Shorter than a stall: JetStream redelivers what the ingester holds
	// while it waits, and the ingester must take those as redeliveries.
	cfg.AckWait = time.Second
	in, err := ingest.New(cfg, st, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(in.Handler())
	t.Cleanup(hs.Close)
	rctx, cancel := context.WithCancel(context.Background())
	r := &faultRig{nc: nc, js: js, st: st, in: in, url: hs.URL, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- in.Run(rctx, js) }()
	t.Cleanup(r.stop)
	return r
}

func (r *faultRig) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	<-r.done
}

// running fails the test at once if Run returned.
func (r *faultRig) running(t *testing.T, when string) {
	t.Helper()
	select {
	case err := <-r.done:
		r.cancel = nil
		t.Fatalf("the ingester stopped %s: %v", when, err)
	default:
	}
}

// counts reads how many events and dead letters the store holds, and how
// many of those are store_rejected.
func counts(tb testing.TB, db *sql.DB) (events, dead, rejected int64) {
	tb.Helper()
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM dead_letters),
		(SELECT count(*) FROM dead_letters WHERE reason_code = 'store_rejected')`).Scan(&events, &dead, &rejected); err != nil {
		tb.Fatal(err)
	}
	return events, dead, rejected
}

// stalledThenResumed waits for the ingester to say it is stalled, checks
// that nothing was dead-lettered, lifts the fault, and waits for everything
// sent to be committed.
func (r *faultRig) stalledThenResumed(t *testing.T, fault string, sent map[[2]string]bool, lift func()) {
	t.Helper()
	var h health
	waitFor(t, "the ingester to report "+fault+" on /healthz", 2*time.Minute, func() bool {
		h = getHealth(t, r.url)
		return h.code == http.StatusServiceUnavailable
	})
	if h.Status != "stalled" || h.Error == "" {
		t.Errorf("/healthz while %s = %d %+v, want 503, status stalled with the error", fault, h.code, h)
	}
	t.Logf("/healthz while %s: %d %s: %s", fault, h.code, h.Status, h.Error)
	// A few retries: the ingester keeps holding, it does not give up.
	for range 4 {
		time.Sleep(500 * time.Millisecond)
		r.running(t, fault)
	}
	// The database may not answer now (out of memory): the ingester's
	// counters say what it committed.
	snap := r.in.Stats().Snapshot()
	t.Logf("%s: sent %d, stored %d, dead-lettered %d", fault, len(sent), snap.Accepted, snap.DeadLetters)
	if snap.DeadLetters != 0 {
		t.Errorf("while %s: %d dead letters, want none", fault, snap.DeadLetters)
	}
	if snap.Accepted >= int64(len(sent)) {
		t.Fatalf("while %s: all %d events stored; the fault did not hold anything up", fault, snap.Accepted)
	}
	lift()
	last := lastSeq(t.Context(), t, r.js)
	waitFor(t, "every event to be committed after the fault cleared", 2*time.Minute, func() bool {
		r.running(t, "after "+fault)
		pos, err := r.st.Position(t.Context(), "EVO")
		return err == nil && pos == last
	})
	if h := getHealth(t, r.url); h.code != http.StatusOK {
		t.Errorf("/healthz after the fault cleared = %d %+v, want 200", h.code, h)
	}
	ev, dead, rej := counts(t, r.st.DB())
	snap = r.in.Stats().Snapshot()
	t.Logf("after: sent %d, stored %d, dead-lettered %d (store_rejected %d), retries %d, redeliveries %d, duplicates %d, reopens %d",
		len(sent), ev, dead, rej, snap.Retries, snap.Redelivered, snap.Duplicates, r.st.Reopens())
	r.stop()
	path := r.st.Path()
	if err := r.st.Close(); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, path, sent, last)
}

// TestDiskFullLosesNothing puts the database on a small tmpfs, ingests until
// the disk is full, then grows the file system: the ingester holds the
// stream meanwhile (unhealthy, no dead letter) and then stores every event
// exactly once.
func TestDiskFullLosesNothing(t *testing.T) {
	tests := []struct {
		name string
		opts store.Options
	}{
		// The WAL grows until a commit cannot write it.
		{"wal", store.Options{}},
		// Checkpoints after every few batches: the database file itself
		// cannot grow.
		{"checkpoint", store.Options{CheckpointThreshold: "256KB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mountTmpfs(t, "6m")
			r := startRig(t, filepath.Join(dir, "evo.duckdb"), tt.opts)
			sent, err := publishSessions(t.Context(), t, r.js, 20_000, 7)
			if err != nil {
				t.Fatal(err)
			}
			r.stalledThenResumed(t, "disk full", sent, func() { resizeTmpfs(t, dir, "256m") })
		})
	}
}

// TestOutOfMemoryLosesNothing lowers DuckDB's memory limit so far that no
// batch can commit, then raises it again: the same as a full disk.
func TestOutOfMemoryLosesNothing(t *testing.T) {
	r := startRig(t, filepath.Join(t.TempDir(), "evo.duckdb"), store.Options{MemoryLimit: "256MB"})
	// Just above what the database holds now: no batch fits.
	var used int64
	if err := r.st.DB().QueryRow(`SELECT sum(memory_usage_bytes) FROM duckdb_memory()`).Scan(&used); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.DB().Exec(`SET GLOBAL memory_limit = $1`, fmt.Sprintf("%dKiB", used>>10+256)); err != nil {
		t.Fatal(err)
	}
	sent, err := publishSessions(t.Context(), t, r.js, 20_000, 8)
	if err != nil {
		t.Fatal(err)
	}
	r.stalledThenResumed(t, "out of memory", sent, func() {
		if _, err := r.st.DB().Exec(`SET GLOBAL memory_limit = '256MB'`); err != nil {
			t.Fatal(err)
		}
	})
}

// A query through the query service that needs more memory than the
// database's limit gets a clear error, and the events published while it
// runs are committed, each once, with no dead letter. The limit cannot be
// raised from a query: it is applied before the service locks the
// configuration.
func TestHugeQueryHitsTheMemoryLimitWhileIngestionCommits(t *testing.T) {
	r := startRig(t, filepath.Join(t.TempDir(), "evo.duckdb"), store.Options{MemoryLimit: "300MiB"})
	ctx := t.Context()
	qs, err := sqlservice.Start(ctx, r.nc, r.st.DB(), sqlservice.DefaultConfig(), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer qs.Close()
	client := sqlservice.NewClient(r.nc, "")
	// Checked first, so that a missing limit fails here, not by taking
	// the machine's memory.
	_, err = client.Query(ctx, sqlservice.Request{SQL: `SET memory_limit = '10GB'`})
	if err == nil {
		t.Fatal("a query raised the memory limit")
	}
	// Read on the store's own connection: query users may not see settings.
	var limit string
	if err := r.st.DB().QueryRowContext(ctx, `SELECT current_setting('memory_limit')`).Scan(&limit); err != nil {
		t.Fatal(err)
	}
	if limit != "300.0 MiB" {
		t.Fatalf("memory_limit = %s, want 300.0 MiB", limit)
	}

	sent, err := publishSessions(ctx, t, r.js, 2_000, 10)
	if err != nil {
		t.Fatal(err)
	}

	huge := make(chan error, 1)
	go func() {
		_, err := client.Query(ctx, sqlservice.Request{SQL: `SELECT len(list(range)) FROM range(800000000)`})
		huge <- err
	}()
	more, err := publishSessions(ctx, t, r.js, 10_000, 11)
	if err != nil {
		t.Fatal(err)
	}
	for k := range more {
		sent[k] = true
	}
	select {
	case err := <-huge:
		if err == nil || !strings.Contains(err.Error(), "Out of Memory Error") {
			t.Fatalf("the huge query = %v, want an Out of Memory Error", err)
		}
		t.Logf("the huge query: %.200s", err)
	case <-time.After(5 * time.Minute):
		t.Fatal("the huge query did not end")
	}
	last := lastSeq(ctx, t, r.js)
	waitFor(t, "every event to be committed", 2*time.Minute, func() bool {
		r.running(t, "after the huge query")
		pos, err := r.st.Position(ctx, "EVO")
		return err == nil && pos == last
	})
	snap := r.in.Stats().Snapshot()
	t.Logf("sent %d, stored %d, dead-lettered %d, commit retries %d", len(sent), snap.Accepted, snap.DeadLetters, snap.Retries)
	qs.Close()
	r.stop()
	path := r.st.Path()
	if err := r.st.Close(); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, path, sent, last)
}

// lineSink writes the events it is sent as JSON lines.
type lineSink struct {
	buf  bytes.Buffer
	keys map[[2]string]bool
}

func (l *lineSink) Send(_ context.Context, e *events.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	l.buf.Write(append(b, '\n'))
	l.keys[[2]string{e.Source, e.ID}] = true
	return nil
}

// ingest -file waits out a full disk too: LoadFile holds its batch, says so
// on /healthz, and when space is freed goes on; every line is stored once
// and nothing is dead-lettered.
func TestLoadFileWaitsOutAFullDisk(t *testing.T) {
	dir := mountTmpfs(t, "6m")
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(dir, "evo.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := ingest.DefaultConfig()
	cfg.BatchSize, cfg.RetryMax = 500, time.Second
	in, err := ingest.New(cfg, st, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(in.Handler())
	defer hs.Close()
	lines := &lineSink{keys: map[[2]string]bool{}}
	gen := synth.New(12, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	for len(lines.keys) < 20_000 {
		if _, err := gen.Session(ctx, lines); err != nil {
			t.Fatal(err)
		}
	}
	type loaded struct {
		res store.Result
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		res, err := in.LoadFile(ctx, bytes.NewReader(lines.buf.Bytes()), "events.jsonl")
		done <- loaded{res, err}
	}()
	waitFor(t, "LoadFile to report the full disk on /healthz", 2*time.Minute, func() bool {
		select {
		case l := <-done:
			t.Fatalf("LoadFile returned on a full disk: %+v, %v", l.res, l.err)
		default:
		}
		return getHealth(t, hs.URL).code == http.StatusServiceUnavailable
	})
	snap := in.Stats().Snapshot()
	t.Logf("disk full: lines %d, stored %d, dead-lettered %d", len(lines.keys), snap.Accepted, snap.DeadLetters)
	select {
	case l := <-done:
		t.Fatalf("LoadFile returned on a full disk: %+v, %v", l.res, l.err)
	case <-time.After(2 * time.Second):
	}
	resizeTmpfs(t, dir, "256m")
	l := <-done
	if l.err != nil {
		t.Fatal(l.err)
	}
	if want := (store.Result{Accepted: len(lines.keys)}); l.res != want {
		t.Fatalf("LoadFile = %+v, want %+v", l.res, want)
	}
	ev, dead, _ := counts(t, st.DB())
	t.Logf("after: lines %d, stored %d, dead-lettered %d", len(lines.keys), ev, dead)
	if ev != int64(len(lines.keys)) || dead != 0 {
		t.Fatalf("stored %d events and %d dead letters, want %d and none", ev, dead, len(lines.keys))
	}
}

// testLogger logs to the test's log.
func testLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
