package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/evosignal/evosignal/internal/workshop/browsertest"
)

// TestContrast: every text of the pages (browsertest.ContrastJS), in the light and in the dark
// colour scheme, meets WCAG 2 AA contrast against its background.
func TestContrast(t *testing.T) {
	ts := serve(t, sampleDB(t), sampleNow, false)
	b := newBrowser(t)
	pages := []string{"/?window=30d", "/sessions", "/sessions/c0d3r-2025-06-13-0042", "/analyze/hints?window=30d",
		"/analyze/rules?window=30d", "/analyze/effects?window=30d", "/sessions/no-such-session"}
	for _, scheme := range []string{"light", "dark"} {
		media := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, media); err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			b.open(t, ts.URL+p)
			if got := eval[string](t, b, `matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'`); got != scheme {
				t.Fatalf("the page sees the %s scheme, want %s", got, scheme)
			}
			for _, m := range eval[[]string](t, b, browsertest.ContrastJS) {
				t.Errorf("%s (%s): %s", p, scheme, m)
			}
			if n := eval[int](t, b, `document.querySelectorAll('body *').length`); n < 10 {
				t.Errorf("%s: %d elements; the page did not render", p, n)
			}
		}
	}
	// The check sees a failure: a faint line added to the last page.
	eval[bool](t, b, `(() => { const p = document.createElement('p'); p.textContent = 'faint text'; p.style.color = matchMedia('(prefers-color-scheme: dark)').matches ? '#333' : '#ddd';
	  document.querySelector('main').append(p); return true })()`)
	if bad := eval[[]string](t, b, browsertest.ContrastJS); len(bad) != 1 || !strings.Contains(bad[0], "faint text") {
		t.Errorf("a faint line on the page: the check found %q, want it alone", bad)
	}
}
