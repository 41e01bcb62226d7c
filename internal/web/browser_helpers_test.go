package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// The browser harness of internal/report's browser test: Debian's Chromium
// (scripts/setup installs it), a fresh profile, and what the page logged
// and requested recorded for the checks.

// chromiumPath is Debian's Chromium, which scripts/setup installs.
const chromiumPath = "/usr/bin/chromium"

// screenshotEnv names a directory that receives a copy of the screenshots.
const screenshotEnv = "EVOSIGNAL_SCREENSHOT_DIR"

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is needed to check the pages (%v): run scripts/setup, which installs Debian's chromium", err)
	}
}

type browser struct {
	ctx context.Context
	out *testkit.SyncBuffer

	mu       sync.Mutex
	messages []string // console errors and warnings, exceptions, browser log errors
	requests []string // URLs requested
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	needChromium(t)
	profile, err := os.MkdirTemp("", "evosignal-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 50 {
			if err := os.RemoveAll(profile); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("remove the browser profile %s", profile)
	})
	b := &browser{out: &testkit.SyncBuffer{}}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(profile),
		chromedp.CombinedOutput(b.out),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)
	if err := chromedp.Listen(ctx, b.record); err != nil {
		t.Fatalf("start %s: %v\n%s", chromiumPath, err, b.output())
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("viewport: %v\n%s", err, b.output())
	}
	b.ctx = ctx
	return b
}

func (b *browser) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert || e.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range e.Args {
				args = append(args, argText(a))
			}
			b.messages = append(b.messages, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		b.messages = append(b.messages, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, text))
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
			b.messages = append(b.messages, fmt.Sprintf("browser log (%s, %s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, e.Request.URL)
	}
}

func argText(a *runtime.RemoteObject) string {
	var v any
	if len(a.Value) > 0 && json.Unmarshal(a.Value, &v) == nil {
		if s, ok := v.(string); ok {
			return s
		}
		return string(a.Value)
	}
	return a.Description
}

// problems lists console errors and warnings, exceptions, and requests for
// anything but the server at origin.
func (b *browser) problems(origin string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]string(nil), b.messages...)
	for _, u := range b.requests {
		if !strings.HasPrefix(u, origin+"/") && !strings.HasPrefix(u, "data:") {
			out = append(out, "the page requested "+u+": only its own server's files are allowed")
		}
	}
	return out
}

func (b *browser) output() string { return "chromium output:\n" + b.out.String() }

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

// shot saves a full-page screenshot into the test's artifact directory.
func shot(t *testing.T, b *browser, name string) {
	t.Helper()
	img, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv(screenshotEnv); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("%s: %v", screenshotEnv, err)
		}
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, img, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", p)
	}
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
