package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/evosignal/evosignal/internal/workshop/browsertest"
)

// The browser harness is internal/workshop/browsertest's, shared with
// internal/report's browser test.

// browser is the suite's headless Chromium (internal/workshop/browsertest)
// at 1280×900.
type browser struct {
	*browsertest.Browser
	ctx context.Context
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	b := &browser{Browser: browsertest.New(t, 3*time.Minute)}
	b.ctx = b.Ctx
	if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("viewport: %v\n%s", err, b.Output())
	}
	return b
}

// problems lists console errors and warnings, exceptions, and requests for
// anything but the server at origin.
func (b *browser) problems(origin string) []string {
	return b.Problems(func(u string) bool { return strings.HasPrefix(u, origin+"/") }, "only its own server's files are allowed")
}

func (b *browser) output() string { return b.Output() }

// open navigates to url and waits for the page to load.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v\n%s", url, err, b.output())
	}
}

// eval evaluates js on the page.
func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// shot saves a full-page screenshot (browsertest.Save).
func shot(t *testing.T, b *browser, name string) {
	t.Helper()
	img, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	browsertest.Save(t, name, img)
}

// waitFor evaluates js until it is true, through navigations, for up to a
// minute.
func waitFor(t *testing.T, b *browser, js string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last error %v)", js, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
