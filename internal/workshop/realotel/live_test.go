package realotel_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/app/bridge"
	"github.com/evosignal/evosignal/internal/otlpin"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/otlpcapture"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
	"github.com/evosignal/evosignal/internal/workshop/realotel"
)

// storeWait bounds the wait for a run's events to be stored: the receiver
// maps a trace once its run's root has arrived, before it answers the
// request, so this is slack for a slow machine, not a wait the mapping
// needs.
const storeWait = 30 * time.Second

// TestFrameworksLive runs every framework on the task, in a loopback-only
// namespace, exporting straight to a real OTLP receiver (otlpin, listening
// in the namespace) on a real pipeline (nats-server, ingester, DuckDB):
// the database holds one session with the script's truth as the
// framework's telemetry carries it (realotel.Expected), counted from the
// events table. Then it runs the framework again against otlpcapture and
// POSTs the captured exports, bodies and content types as sent, to the
// same receiver: the new session's truth is stored; POSTing them all again
// stores nothing more; and `bridge -agent otel` of the same spans as a
// file gives the events (source and id) the receiver stored.
func TestFrameworksLive(t *testing.T) {
	for _, f := range realotel.Frameworks() {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			ns, err := realcli.NewNamespace()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(ns.Close) // last: after the receiver's and the pipeline's cleanups
			p := adaptertest.StartPipeline(t)
			r := startReceiverIn(t, p, ns)
			endpoint := "http://" + r.Addr().String()
			want := realotel.Expected(f.Name)
			ctx := t.Context()

			// Live: the framework exports to the receiver.
			res, err := realotel.Run(ctx, f.Name, endpoint, realotel.Options{NS: ns, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Truth != realotel.ScriptTruth() {
				t.Fatalf("the run's truth %+v, want the hand count %+v", res.Truth, realotel.ScriptTruth())
			}
			live, ok := awaitSession(t, p, r, nil, want)
			if !ok {
				t.Errorf("live: not the script's truth (want %+v)", want)
			}
			t.Logf("live: session %q stored", live)
			if n := r.Stats().Notes(); len(n) > 0 {
				t.Errorf("live: the receiver's notes %q, want none", n)
			}

			// Captured, then POSTed as the framework sent it.
			l, err := ns.Listen()
			if err != nil {
				t.Fatal(err)
			}
			capture := otlpcapture.Serve(l)
			defer capture.Close()
			if _, err := realotel.Run(ctx, f.Name, capture.URL(), realotel.Options{NS: ns, Dir: t.TempDir(), Session: "session-" + f.Name + "-replayed"}); err != nil {
				t.Fatal(err)
			}
			if err := capture.Err(); err != nil {
				t.Fatalf("the capture: %v", err)
			}
			reqs := capture.Requests()
			client := &http.Client{Transport: &http.Transport{DialContext: ns.DialContext}, Timeout: 30 * time.Second}
			postAll(t, client, endpoint, reqs)
			replayed, ok := awaitSession(t, p, r, []string{live}, want)
			if !ok {
				t.Errorf("POSTed from the capture: not the script's truth (want %+v); the exports in the order they came:\n%s", want, exportOrder(t, reqs))
			}
			t.Logf("POSTed from the capture: session %q stored", replayed)
			if n := r.Stats().Notes(); len(n) > 0 {
				t.Errorf("POSTed from the capture: the receiver's notes %q, want none", n)
			}
			p.Settle(t)
			stored := p.Count(t, "SELECT count(*) FROM events")
			dropped := r.Stats().AfterMapped
			postAll(t, client, endpoint, reqs)
			p.Settle(t)
			if n := p.Count(t, "SELECT count(*) FROM events"); n != stored {
				t.Errorf("after POSTing the %d exports again: %d events stored, want %d", len(reqs), n, stored)
			}
			t.Logf("POSTed again: %d events stored before and after, %d spans dropped as already mapped", stored, r.Stats().AfterMapped-dropped)

			// The same spans as a file, bridged.
			var lines bytes.Buffer
			if err := capture.JSONLines(&lines, otlpcapture.Traces); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "traces.jsonl")
			if err := os.WriteFile(file, lines.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			args := []string{"-agent", "otel", "-in", file, "-out", "-"}
			if code := bridge.Main(ctx, args, strings.NewReader(""), &out, &errOut); code != 0 {
				t.Fatalf("bridge %q exited %d:\n%s", args, code, errOut.String())
			}
			evs := adaptertest.DecodeLines(t, out.Bytes())
			if got, err := realotel.TruthOf(evs); err != nil {
				t.Fatal(err)
			} else if got != want {
				t.Errorf("bridged from the file: truth\n %+v\nwant\n %+v", got, want)
			}
			var bridged []string
			for _, e := range evs {
				bridged = append(bridged, e.Source+" "+e.ID)
			}
			slices.Sort(bridged)
			if db := storedIDs(t, p, replayed); !slices.Equal(bridged, db) {
				t.Errorf("bridged from the file: %d events\n %s\nthe receiver stored %d of session %q\n %s",
					len(bridged), strings.Join(bridged, "\n "), len(db), replayed, strings.Join(db, "\n "))
			}
		})
	}
}

// startReceiverIn starts an OTLP receiver on p serving a listener opened
// in ns, where the frameworks run; it stops when the test ends.
func startReceiverIn(tb testing.TB, p *adaptertest.Pipeline, ns *realcli.Namespace) *otlpin.Receiver {
	tb.Helper()
	l, err := ns.Listen()
	if err != nil {
		tb.Fatal(err)
	}
	cfg := otlpin.DefaultConfig("", "evo")
	cfg.Listener = l
	r, err := otlpin.Start(cfg, p.JS, slog.New(slog.DiscardHandler))
	if err != nil {
		l.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			tb.Errorf("closing the receiver: %v", err)
		}
	})
	return r
}

// postAll POSTs every captured export to the receiver at endpoint, with its
// body and content type as the framework sent them; each must be taken.
func postAll(tb testing.TB, client *http.Client, endpoint string, reqs []otlpcapture.Request) {
	tb.Helper()
	for i, r := range reqs {
		path := otlpin.Path
		switch r.Signal {
		case otlpcapture.Traces:
		case otlpcapture.Logs:
			path = otlpin.LogsPath
		default:
			tb.Fatalf("export %d: %s, which the receiver does not take", i, r.Signal)
		}
		res, err := client.Post(endpoint+path, r.ContentType, bytes.NewReader(r.Body))
		if err != nil {
			tb.Fatalf("export %d: %v", i, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			tb.Fatalf("export %d (%s, %s): %s\n%q", i, r.Signal, r.ContentType, res.Status, body)
		}
	}
}

// awaitSession waits until the store holds exactly one session besides
// seen and its events give want, and returns it. It gives up, reporting
// what is stored, when that cannot change any more (the receiver holds no
// trace waiting to be mapped and the pipeline has stored everything it
// published: every request has been answered by then) or after storeWait.
// Once want is stored it settles the pipeline and looks again, so that an
// event past the truth is not missed.
func awaitSession(tb testing.TB, p *adaptertest.Pipeline, r *otlpin.Receiver, seen []string, want realotel.Truth) (string, bool) {
	tb.Helper()
	deadline := time.Now().Add(storeWait)
	for {
		final := r.Stats().Waiting == 0
		if final {
			p.Settle(tb)
		}
		fresh := newSessions(tb, p, seen)
		if len(fresh) == 1 && storedTruth(tb, p, fresh[0]) == want {
			p.Settle(tb)
			if fresh = newSessions(tb, p, seen); len(fresh) == 1 && storedTruth(tb, p, fresh[0]) == want {
				return fresh[0], true
			}
		}
		if final || time.Now().After(deadline) {
			state := fmt.Sprintf("%d new sessions %q", len(fresh), fresh)
			for _, s := range fresh {
				state += fmt.Sprintf("\n %s: %+v", s, storedTruth(tb, p, s))
			}
			if final {
				tb.Errorf("all stored, none waiting: %s", state)
			} else {
				tb.Errorf("after %v, %d traces waiting: %s", storeWait, r.Stats().Waiting, state)
			}
			if len(fresh) > 0 {
				return fresh[0], false
			}
			return "", false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// newSessions is the sessions of the stored events, but those of seen.
func newSessions(tb testing.TB, p *adaptertest.Pipeline, seen []string) []string {
	tb.Helper()
	rows, err := p.Store.DB().Query("SELECT DISTINCT session FROM events ORDER BY session")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			tb.Fatal(err)
		}
		if !slices.Contains(seen, s) {
			out = append(out, s)
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// storedTruth counts in the events table what realotel.TruthOf counts in
// events, for session.
func storedTruth(tb testing.TB, p *adaptertest.Pipeline, session string) realotel.Truth {
	tb.Helper()
	const q = `SELECT
		count(*) FILTER (WHERE type = 'agent.session.started'),
		count(*) FILTER (WHERE type = 'agent.plan.created'),
		count(*) FILTER (WHERE type = 'agent.plan.updated'),
		count(*) FILTER (WHERE type = 'agent.task.completed'),
		coalesce(sum((data->>'$.iterations')::BIGINT) FILTER (WHERE type = 'agent.session.ended'), 0),
		count(*) FILTER (WHERE type = 'agent.tool.called' AND NOT coalesce((data->>'$.control')::BOOLEAN, false)),
		count(*) FILTER (WHERE type = 'agent.tool.called' AND NOT coalesce((data->>'$.control')::BOOLEAN, false)
			AND NOT coalesce((data->>'$.ok')::BOOLEAN, false)),
		coalesce(sum((data->>'$.usage.input_tokens')::BIGINT) FILTER (WHERE type = 'agent.session.ended'), 0),
		coalesce(sum((data->>'$.usage.output_tokens')::BIGINT) FILTER (WHERE type = 'agent.session.ended'), 0),
		coalesce(sum((data->>'$.usage.cached_input_tokens')::BIGINT) FILTER (WHERE type = 'agent.session.ended'), 0)
	FROM events WHERE session = ?`
	var t realotel.Truth
	if err := p.Store.DB().QueryRow(q, session).Scan(&t.Sessions, &t.Plans, &t.Replans, &t.Completions, &t.ModelCalls,
		&t.RealCalls, &t.FailedCalls, &t.InputTokens, &t.OutputTokens, &t.CachedTokens); err != nil {
		tb.Fatalf("the truth of session %q: %v", session, err)
	}
	return t
}

// storedIDs is "<source> <id>" of every stored event of session, sorted.
func storedIDs(tb testing.TB, p *adaptertest.Pipeline, session string) []string {
	tb.Helper()
	rows, err := p.Store.DB().Query("SELECT source, id FROM events WHERE session = ?", session)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var src, id string
		if err := rows.Scan(&src, &id); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, src+" "+id)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// exportOrder says which spans each export carried, in the order the
// exports came: a span's name, its id and its parent's.
func exportOrder(tb testing.TB, reqs []otlpcapture.Request) string {
	tb.Helper()
	var b strings.Builder
	for i, r := range reqs {
		if r.Signal != otlpcapture.Traces {
			fmt.Fprintf(&b, " %d: %s\n", i, r.Signal)
			continue
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalJSON(r.JSON); err != nil {
			tb.Fatal(err)
		}
		var spans []string
		rss := req.Traces().ResourceSpans()
		for j := range rss.Len() {
			sss := rss.At(j).ScopeSpans()
			for k := range sss.Len() {
				ss := sss.At(k).Spans()
				for l := range ss.Len() {
					sp := ss.At(l)
					spans = append(spans, fmt.Sprintf("%s (%s, parent %s, ended %s)", sp.Name(), sp.SpanID(), sp.ParentSpanID(),
						sp.EndTimestamp().AsTime().Format("15:04:05.000000")))
				}
			}
		}
		fmt.Fprintf(&b, " %d: %s\n", i, strings.Join(spans, "; "))
	}
	return b.String()
}
