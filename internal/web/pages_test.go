package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

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
