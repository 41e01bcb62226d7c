package realcli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/app/bridge"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/otlpin"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// liveLinger is the receiver's Mapper.Linger in TestCLIsLive. Codex's turn
// trace has a root (turn/start, an RPC span) that ends before the turn's
// work, so the mapper never sees the trace complete and maps it only after
// Linger of quiet: the default 30 s would make the test wait that long, so
// it is 2 s here. Claude Code's traces (a prompt's interaction span as the
// root) are mapped as soon as they are complete and do not wait for it.
const liveLinger = 2 * time.Second

// liveDeadline bounds the wait, after the CLI exited, for its sessions in
// the store.
const liveDeadline = 30 * time.Second

// live is a real pipeline (nats-server, ingester, DuckDB) with a real OTLP
// receiver (internal/otlpin) serving a listener in the harness's
// namespace, and the Telemetry that points a CLI at it.
type live struct {
	p   *adaptertest.Pipeline
	r   *otlpin.Receiver
	tel *realcli.Telemetry
}

// startLive starts a live pipeline for h's CLIs; the receiver closes before
// the pipeline stops, at the test's end.
func startLive(t *testing.T, h *realcli.Harness) *live {
	t.Helper()
	p := adaptertest.StartPipeline(t)
	l, tel := h.TelemetryListener(t)
	cfg := otlpin.DefaultConfig("", "evo")
	cfg.Listener = l
	cfg.Mapper.Linger = liveLinger // see liveLinger: Codex's turn traces wait for it
	cfg.Sweep = 100 * time.Millisecond
	r, err := otlpin.Start(cfg, p.JS, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Errorf("close the receiver: %v", err)
		}
	})
	return &live{p: p, r: r, tel: tel}
}

// testWriter writes the receiver's warnings into the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// await polls the store, from the CLI's exit, until it holds want sessions
// started and as many ended, then lets the ingester store the rest of the
// stream. It reports how long that took; past liveDeadline it fails the
// test but returns, so that what was stored is still compared.
func (lv *live) await(t *testing.T, want int) {
	t.Helper()
	start := time.Now()
	for {
		started := lv.p.Count(t, "SELECT count(*) FROM events WHERE type = ?", string(events.SessionStarted))
		ended := lv.p.Count(t, "SELECT count(*) FROM events WHERE type = ?", string(events.SessionEnded))
		if started >= int64(want) && ended >= int64(want) {
			break
		}
		if time.Since(start) > liveDeadline {
			t.Errorf("after %v the store holds %d sessions started and %d ended, want %d; receiver %+v", liveDeadline, started, ended, want, lv.r.Stats())
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	lv.p.Settle(t)
	t.Logf("sessions stored %v after the CLI exited", time.Since(start).Round(time.Millisecond))
}

// stored reads every event of the store back, in session and seq order.
func (lv *live) stored(t *testing.T) []*events.Event {
	t.Helper()
	rows, err := lv.p.Store.DB().Query(`SELECT source, id, type, time, session, seq, CAST(data AS VARCHAR) FROM events ORDER BY session, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []*events.Event
	for rows.Next() {
		var e events.Event
		var typ, data string
		if err := rows.Scan(&e.Source, &e.ID, &typ, &e.Time, &e.Subject, &e.Seq, &data); err != nil {
			t.Fatal(err)
		}
		e.Type, e.Data = events.Type(typ), json.RawMessage(data)
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// check holds the stored events to the scenario's truth and to the events
// the same run's own files give bridged (`bridge -agent agent -in in`):
// the same requests (session ids), and in each the same tool calls (tool,
// ok, control) in seq order. The receiver took every request.
func (lv *live) check(t *testing.T, agent, in string, truth realcli.Truth) {
	t.Helper()
	st := lv.r.Stats()
	t.Logf("receiver: %d spans, %d log records (%d read, %d after their trace was mapped, %d unjoined), %d spans after their trace was mapped, %d sessions, %d events; requests %+v",
		st.Spans, st.LogRecords, st.LogsRead, st.LogsAfterMapped, st.LogsUnjoined, st.AfterMapped, st.Sessions, st.Events, lv.r.Requests())
	if rq := lv.r.Requests(); rq.Permanent+rq.Retryable+rq.Busy+rq.TooLarge != 0 {
		t.Errorf("the receiver refused requests: %+v", rq)
	}
	evs := lv.stored(t)
	got, err := realcli.TruthOf(evs)
	if err != nil {
		t.Fatal(err)
	}
	if got != truth {
		t.Errorf("stored from the CLI's own OTLP: %+v, want the script's %+v", got, truth)
	}
	bridged := bridgeEvents(t, agent, in)
	if b, err := realcli.TruthOf(bridged); err != nil || b != truth {
		t.Errorf("bridge -agent %s: %+v (%v), want the script's %+v", agent, b, err, truth)
	}
	live, files := callsBySession(t, evs), callsBySession(t, bridged)
	if l, f := sessionsOf(evs), sessionsOf(bridged); !slices.Equal(l, f) {
		t.Errorf("requests stored from the OTLP: %q; bridged from the files: %q", l, f)
	}
	n := 0
	for _, s := range sessionsOf(bridged) {
		n += len(files[s])
		if !slices.Equal(live[s], files[s]) {
			t.Errorf("session %s: calls from the OTLP %v, from the files %v", s, live[s], files[s])
		}
	}
	t.Logf("%d events stored; %d requests and their %d calls compared with the files'", len(evs), len(sessionsOf(bridged)), n)
}

// bridgeEvents runs `bridge -agent agent -in in` and decodes its events.
func bridgeEvents(t *testing.T, agent, in string) []*events.Event {
	t.Helper()
	var out, errOut bytes.Buffer
	args := []string{"-agent", agent, "-source", agent + "/bridge/test", "-in", in, "-out", "-"}
	if code := bridge.Main(context.Background(), args, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("bridge %q exited %d:\n%s", args, code, errOut.String())
	}
	return adaptertest.DecodeLines(t, out.Bytes())
}

// sessionsOf is the sorted session ids of evs' session starts.
func sessionsOf(evs []*events.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Type == events.SessionStarted {
			out = append(out, e.Subject)
		}
	}
	slices.Sort(out)
	return out
}

// callsBySession is each session's tool calls in seq order, as
// "tool ok=… control=…".
func callsBySession(t *testing.T, evs []*events.Event) map[string][]string {
	t.Helper()
	sorted := slices.Clone(evs)
	slices.SortStableFunc(sorted, func(a, b *events.Event) int {
		if c := strings.Compare(a.Subject, b.Subject); c != 0 {
			return c
		}
		return int(a.Seq - b.Seq)
	})
	out := map[string][]string{}
	for _, e := range sorted {
		if e.Type != events.ToolCalled {
			continue
		}
		var d events.ToolCalledData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("event %s: %v", e.ID, err)
		}
		out[e.Subject] = append(out[e.Subject], fmt.Sprintf("%s ok=%v control=%v", d.Tool, d.OK, d.Control))
	}
	return out
}

// TestCLIsLive runs the real Claude Code (ClaudeCodeOneRunScenario, one
// process, three prompts) and the real Codex (CodexScenario, two runs of
// one thread) with their own OpenTelemetry export pointed at a real OTLP
// receiver (internal/otlpin) on a real pipeline (nats-server, ingester,
// DuckDB), and checks that the events stored from what they exported give
// the scenario's truth, the same requests (session ids) as the same run's
// own files bridged (Claude Code's hook log, Codex's rollout), and in each
// request the same tool calls in the same order.
func TestCLIsLive(t *testing.T) {
	t.Run("claude-code", func(t *testing.T) {
		ctx := testContext(t)
		h := realcli.Start(t)
		lv := startLive(t, h)
		cc := h.ClaudeCode(t)
		cc.Telemetry = lv.tel
		sc := realcli.ClaudeCodeOneRunScenario(cc.Workspace)
		srv := h.Serve(t, fakemodel.Config{Script: sc.Steps})

		_, out, err := cc.Converse(ctx, sc.Prompts)
		if err != nil {
			t.Fatalf("%v\nserver: %v", err, srv.Err())
		}
		t.Logf("%d prompts in one run, in %v", len(sc.Prompts), out.Took.Round(time.Millisecond))
		if err := srv.Err(); err != nil {
			t.Fatalf("fake model server: %v", err)
		}
		if got := srv.Answered(); got != len(sc.Steps) {
			t.Fatalf("the server answered %d steps, want %d", got, len(sc.Steps))
		}
		lv.await(t, sc.Truth.Requests)
		lv.check(t, "claude-code", cc.HookLog, sc.Truth)
	})
	t.Run("codex", func(t *testing.T) {
		sc := realcli.CodexScenario()
		var lv *live
		run := runCodex(t, sc, realcli.CodexModel, func(h *realcli.Harness, cx *realcli.Codex, cfg *fakemodel.Config) {
			lv = startLive(t, h)
			cx.Telemetry = lv.tel
			// With [otel] on, 0.171 asks its model provider what each turn
			// cost; the fake server has no answer (TestCodexOTLP).
			cfg.Expected = func(r fakemodel.Request) bool { return r.Path == codexTurnCosts }
		})
		lv.await(t, sc.Truth.Requests)
		lv.check(t, "codex", run.cx.CodexHome, sc.Truth)
	})
}
