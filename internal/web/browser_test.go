package web_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/web"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// synthStart is when the synthetic sessions start; the pages' window is
// the week up to synthUntil, which holds them all.
var (
	synthStart = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	synthUntil = "2026-11-09"
)

// running is an embedded pipeline serving the pages on a loopback port.
type running struct {
	p    *pipeline.Pipeline
	base string // http://127.0.0.1:PORT
	pub  *agent.Publisher
	gen  *synth.Generator
}

func startPipeline(t *testing.T) *running {
	t.Helper()
	dir := t.TempDir()
	cfg := pipeline.DefaultConfig()
	cfg.DB = filepath.Join(dir, "evo.duckdb")
	cfg.Server = bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: filepath.Join(dir, "jetstream")}
	cfg.Ingest.FlushInterval = 20 * time.Millisecond
	cfg.HTTP = fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	pc := web.DefaultConfig(nil)
	pc.Poll = 200 * time.Millisecond
	cfg.Pages = &pc
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := pipeline.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close the pipeline: %v", err)
		}
	})
	pub, err := agent.NewPublisher(p.JetStream(), agent.PublisherConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close(context.Background()) })
	return &running{p: p, base: "http://" + cfg.HTTP, pub: pub, gen: synth.New(1, synthStart)}
}

// publish sends n synthetic sessions and waits until they are committed.
func (r *running) publish(t *testing.T, n int) {
	t.Helper()
	for range n {
		if _, err := r.gen.Session(t.Context(), r.pub); err != nil {
			t.Fatal(err)
		}
	}
	r.wait(t)
}

func (r *running) wait(t *testing.T) {
	t.Helper()
	if err := r.pub.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := r.p.WaitIngested(ctx); err != nil {
		t.Fatal(err)
	}
}

// replans is what the replans analyzer says of the window for f, read
// straight from the store's database (not through the pages).
func (r *running) replans(t *testing.T, f metrics.Filter) metrics.ReplansRow {
	t.Helper()
	res, err := metrics.Replans(t.Context(), metrics.DB{DB: r.p.Store().DB()}, f)
	if err != nil {
		t.Fatal(err)
	}
	return res.Rows[0]
}

func window(agentName string) metrics.Filter {
	until, _ := time.Parse(time.DateOnly, synthUntil)
	return metrics.Filter{Since: until.Add(-7 * 24 * time.Hour), Until: until, Agent: agentName}
}

// kpis are the headline figures as the page shows them: label → value.
const kpisJS = `Object.fromEntries([...document.querySelectorAll("#summary .kpi")].map(k => [k.querySelector("h3").textContent.trim(), k.querySelector(".value").textContent.trim()]))`

func pct(r *float64) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100**r)
}

// TestOverviewUpdatesLive: the overview in a real Chromium shows the
// replans analyzer's figures for its window and, while more sessions are
// ingested, updates them in place (no reload: a marker set on the page
// survives) to the analyzer's new figures. No console error, no request
// beyond the server.
func TestOverviewUpdatesLive(t *testing.T) {
	r := startPipeline(t)
	r.publish(t, 15)
	b := newBrowser(t)
	url := r.base + "/?window=7d&until=" + synthUntil
	b.open(t, url)

	before := r.replans(t, window(""))
	got := eval[map[string]string](t, b, kpisJS)
	if want := fmt.Sprint(before.Sessions); got["Sessions"] != want {
		t.Fatalf("Sessions = %q, want %s (the replans analyzer's); figures %v", got["Sessions"], want, got)
	}
	if want := pct(before.FirstTrySuccessRate); got["First-try success"] != want {
		t.Errorf("First-try success = %q, want %s", got["First-try success"], want)
	}
	shot(t, b, "overview.png")

	eval[bool](t, b, `window.__sameDocument = true`)
	r.publish(t, 25)
	after := r.replans(t, window(""))
	if after.Sessions == before.Sessions {
		t.Fatalf("%d sessions before and after publishing 25 more", before.Sessions)
	}
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	want := fmt.Sprint(after.Sessions)
	js := fmt.Sprintf(`(() => { const k = [...document.querySelectorAll("#summary .kpi")].find(k => k.querySelector("h3").textContent.trim() === "Sessions"); return k && k.querySelector(".value").textContent.trim() === %q; })()`, want)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("the overview did not come to show %s sessions: %v (it shows %v)", want, err, eval[map[string]string](t, b, kpisJS))
	}
	if !eval[bool](t, b, `window.__sameDocument === true && Number(document.body.dataset.liveUpdates) >= 1`) {
		t.Error("the page was reloaded instead of updated in place")
	}
	got = eval[map[string]string](t, b, kpisJS)
	for label, rate := range map[string]*float64{"First-try success": after.FirstTrySuccessRate, "Replan rate": after.ReplanRate, "Success": after.SuccessRate} {
		if got[label] != pct(rate) {
			t.Errorf("after the update, %s = %q, want %s", label, got[label], pct(rate))
		}
	}
	if n := eval[int](t, b, `document.querySelectorAll("svg.chart.trend").length`); n != 1 {
		t.Errorf("%d evolution curves after the update, want 1", n)
	}
	shot(t, b, "overview-updated.png")
	for _, m := range b.problems(r.base) {
		t.Error(m)
	}
}

// TestOverviewFilter: choosing an agent in the filter form and submitting
// it (a plain GET form, no script) changes the figures to what the
// replans analyzer gives for that agent.
func TestOverviewFilter(t *testing.T) {
	r := startPipeline(t)
	r.publish(t, 40)
	b := newBrowser(t)
	b.open(t, r.base+"/?window=7d&until="+synthUntil)
	all := r.replans(t, window(""))
	coder := r.replans(t, window("coder"))
	if all.Sessions == coder.Sessions || coder.Sessions == 0 {
		t.Fatalf("coder has %d of %d sessions: the filter would change nothing", coder.Sessions, all.Sessions)
	}
	if _, err := chromedp.Run(b.ctx, chromedp.SetValue(`select[name="agent"]`, "coder")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(b.ctx, chromedp.Click(`form.filter button[type="submit"]`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, b, `location.search.includes("agent=coder") && document.readyState === "complete"`)
	got := eval[map[string]string](t, b, kpisJS)
	want := map[string]string{"Sessions": fmt.Sprint(coder.Sessions), "First-try success": pct(coder.FirstTrySuccessRate),
		"Replan rate": pct(coder.ReplanRate), "Success": pct(coder.SuccessRate)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("agent coder: %s = %q, want %s (the replans analyzer's)", k, got[k], v)
		}
	}
	if sel := eval[string](t, b, `document.querySelector('select[name="agent"]').value`); sel != "coder" {
		t.Errorf("after the submit the agent select holds %q, want coder", sel)
	}
	shot(t, b, "overview-coder.png")
	for _, m := range b.problems(r.base) {
		t.Error(m)
	}
}

// TestCSPHeader: every kind of response of the ingester's listener carries
// the pages' Content-Security-Policy, which forbids inline script.
func TestCSPHeader(t *testing.T) {
	r := startPipeline(t)
	r.publish(t, 3)
	if !strings.Contains(web.CSP, "script-src 'self'") || strings.Contains(web.CSP, "unsafe-inline") {
		t.Fatalf("CSP %q does not forbid inline script", web.CSP)
	}
	for _, path := range []string{"/", "/sessions", "/sessions/no-such-session", "/analyze/hints", "/analyze/nothing", "/static/web.js", "/live/version", "/healthz", "/metrics"} {
		res, err := http.Get(r.base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("Content-Security-Policy"); got != web.CSP {
			t.Errorf("GET %s (%d): Content-Security-Policy %q, want %q", path, res.StatusCode, got, web.CSP)
		}
	}
}
