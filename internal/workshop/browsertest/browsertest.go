// Package browsertest is the headless Chromium of the browser tests (the
// report page, the live pages): Debian's Chromium, which scripts/setup
// installs, with a fresh profile, and what a page logged and requested
// recorded for the checks.
package browsertest

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

// ChromiumPath is Debian's Chromium, which scripts/setup installs.
const ChromiumPath = "/usr/bin/chromium"

// ScreenshotEnv names a directory that receives a copy of the screenshots
// (CI uploads it; a person opens it).
const ScreenshotEnv = "EVOSIGNAL_SCREENSHOT_DIR"

// Need fails the test when Chromium is missing: the browser tests are
// part of the suite, not optional.
func Need(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		t.Fatalf("Chromium is needed to check the pages (%v): run scripts/setup, which installs Debian's chromium", err)
	}
}

// Browser is a headless Chromium for one test: Ctx is its tab.
type Browser struct {
	Ctx context.Context
	out *testkit.SyncBuffer

	mu       sync.Mutex
	messages []string // console errors and warnings, exceptions, browser log errors
	requests []string // URLs requested
}

// New starts Chromium with a fresh profile, for at most timeout; the
// test's cleanup stops it and removes the profile.
func New(t *testing.T, timeout time.Duration) *Browser {
	t.Helper()
	Need(t)
	profile, err := os.MkdirTemp("", "evosignal-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Chromium's helpers can write into the profile for a moment after
		// the browser exits.
		for range 50 {
			if err := os.RemoveAll(profile); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("remove the browser profile %s", profile)
	})
	b := &Browser{out: &testkit.SyncBuffer{}}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
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
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)
	if err := chromedp.Listen(ctx, b.record); err != nil {
		t.Fatalf("start %s: %v\n%s", ChromiumPath, err, b.Output())
	}
	b.Ctx = ctx
	return b
}

// record keeps the events the checks need. It runs on the tab's reading
// goroutine, so it only appends.
func (b *Browser) record(ev any) {
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

// argText is a console argument as the console shows it.
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

// Problems lists console errors and warnings, exceptions, and requests for
// anything but data: URLs and those allowed says yes to (each with why it
// is not allowed).
func (b *Browser) Problems(allowed func(url string) bool, why string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]string(nil), b.messages...)
	for _, u := range b.requests {
		if !allowed(u) && !strings.HasPrefix(u, "data:") {
			out = append(out, "the page requested "+u+": "+why)
		}
	}
	return out
}

// Output is what Chromium wrote, for a failure's message.
func (b *Browser) Output() string { return "chromium output:\n" + b.out.String() }

// Save writes an output file (a screenshot, the page's HTML) into the
// test's artifact directory and, when ScreenshotEnv names a directory,
// there too.
func Save(t *testing.T, name string, b []byte) {
	t.Helper()
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv(ScreenshotEnv); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("%s: %v", ScreenshotEnv, err)
		}
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", p)
	}
}
