package web_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/web"
)

// sampleNow is after the sample sessions (testdata/events/valid), so that
// a window of 30 days back holds them.
var sampleNow = time.Date(2025, 6, 15, 0, 0, 0, 0, time.UTC)

// TestEveryPageServes: each page answers 200 with HTML and the CSP header,
// and the static files their types.
func TestEveryPageServes(t *testing.T) {
	ts := serve(t, sampleDB(t), sampleNow, true)
	for _, path := range []string{"/", "/?window=30d&agent=coder", "/sessions", "/sessions?outcome=success&window=30d",
		"/sessions?stuck=soft_cap", "/sessions?min_replans=2", "/sessions?hint=read_file&q=a",
		"/analyze/hints?window=30d", "/analyze/mappings?window=30d", "/analyze/rules?window=30d", "/analyze/effects?window=30d&sort=id&desc=1",
		"/static/web.js", "/static/web.css", "/static/report.css", "/live/version"} {
		res, body := get(t, ts, path)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d:\n%.2000s", path, res.StatusCode, body)
			continue
		}
		if got := res.Header.Get("Content-Security-Policy"); got != web.CSP {
			t.Errorf("GET %s: Content-Security-Policy %q, want %q", path, got, web.CSP)
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("GET %s has an inline script", path)
		}
	}
}

// TestSessionListPages: following Next from the first page to the last
// and Previous back gives the same pages, each session once, in the list's
// order; the first page has no Previous link, the last no Next.
func TestSessionListPages(t *testing.T) {
	db := sampleDB(t)
	cfg := web.DefaultConfig(sqlservice.Local{DB: db, Timeout: 30 * time.Second})
	cfg.Live, cfg.PageSize = false, 2
	cfg.Now = func() time.Time { return sampleNow }
	s, err := web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	rowRe := regexp.MustCompile(`<a href="/sessions/([^"?]+)"`)
	linkRe := func(rel string) *regexp.Regexp { return regexp.MustCompile(`<a href="([^"]+)" rel="` + rel + `">`) }
	nextRe, prevRe := linkRe("next"), linkRe("prev")
	type page struct {
		rows       []string
		next, prev string
	}
	fetch := func(path string) page {
		res, body := get(t, ts, path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d: %.500s", path, res.StatusCode, body)
		}
		var p page
		for _, m := range rowRe.FindAllStringSubmatch(body, -1) {
			if !slices.Contains(p.rows, m[1]) {
				p.rows = append(p.rows, m[1])
			}
		}
		if m := nextRe.FindStringSubmatch(body); m != nil {
			p.next = html.UnescapeString(m[1])
		}
		if m := prevRe.FindStringSubmatch(body); m != nil {
			p.prev = html.UnescapeString(m[1])
		}
		return p
	}
	var forward []page
	for p := fetch("/sessions"); ; {
		forward = append(forward, p)
		if p.next == "" {
			break
		}
		if len(forward) > 100 {
			t.Fatal("more than 100 pages")
		}
		p = fetch(p.next)
	}
	if len(forward) < 3 {
		t.Fatalf("%d pages of 2: the sample needs at least 5 sessions for this test", len(forward))
	}
	if forward[0].prev != "" {
		t.Errorf("the first page has a Previous link %s", forward[0].prev)
	}
	var all []string
	for i, p := range forward {
		if len(p.rows) == 0 || len(p.rows) > 2 || (i < len(forward)-1 && len(p.rows) != 2) {
			t.Errorf("page %d: %d rows", i+1, len(p.rows))
		}
		all = append(all, p.rows...)
	}
	seen := map[string]bool{}
	for _, id := range all {
		if seen[id] {
			t.Errorf("session %s on two pages", id)
		}
		seen[id] = true
	}
	var want int
	if err := db.QueryRow(`SELECT count(*) FROM sessions`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if len(all) != want {
		t.Errorf("the pages list %d sessions, the database has %d", len(all), want)
	}
	p := forward[len(forward)-1]
	for i := len(forward) - 2; i >= 0; i-- {
		if p.prev == "" {
			t.Fatalf("page %d has no Previous link", i+2)
		}
		p = fetch(p.prev)
		if !slices.Equal(p.rows, forward[i].rows) {
			t.Errorf("back on page %d: %v, forwards it was %v", i+1, p.rows, forward[i].rows)
		}
	}
	if p.prev != "" {
		t.Errorf("back on the first page: a Previous link %s", p.prev)
	}
}
