package report_test

import (
	"bytes"
	"context"
	"github.com/evosignal/evosignal/internal/workshop/browsertest"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/evosignal/evosignal/internal/report"
)

const chromiumPath = browsertest.ChromiumPath

// TestReportInBrowser opens the fixture's report page in a real headless
// Chromium from a file:// URL and checks that it renders: the title and
// headline, charts with real marks, no horizontal overflow, no console
// error or exception, no request beyond the page itself, a dark theme and a
// print layout. It saves screenshots into the test's artifact directory.
func TestReportInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is needed to check the report page (%v): run scripts/setup, which installs Debian's chromium", err)
	}
	r := buildFixture(t)
	dir := t.TempDir()
	if err := report.WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	pagePath := filepath.Join(dir, report.HTMLFile)
	pageURL := (&url.URL{Scheme: "file", Path: pagePath}).String()

	b := newBrowser(t)
	ctx := b.ctx
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("viewport: %v\n%s", err, b.output())
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("open %s: %v\n%s", pageURL, err, b.output())
	}

	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(title, "evosignal report") {
		t.Errorf("title = %q, want it to start with %q", title, "evosignal report")
	}
	headline, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("h1#headline").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	// The headline tells the run's story: first-try success from the
	// first day with data to the window, then the change against the
	// previous window.
	if want := "First-try success 53.3% → 62.3% since 2025-06-06 (+9.0 pts, within noise), +19.0 pts vs previous 24h (within noise)"; headline != want {
		t.Errorf("headline = %q, want %q", headline, want)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Replan rate 46.7% → 37.7% since 2025-06-06") {
		t.Errorf("page lacks the replan rate's story under the headline")
	}
	if !strings.Contains(text, "Per day since 2025-06-06;") {
		t.Errorf("the evolution curve does not start at the first day with data (2025-06-06)")
	}
	if w := regexp.MustCompile(`\bnil\b`).FindString(text); w != "" {
		t.Errorf("page says %q: jargon a reader does not know", w)
	}

	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartStats](chartStatsJS))
	if err != nil {
		t.Fatal(err)
	}
	checkCharts(t, r, charts)

	layout, err := chromedp.Run(ctx, chromedp.Evaluate[layoutStats](layoutJS))
	if err != nil {
		t.Fatal(err)
	}
	if layout.ScrollWidth > layout.InnerWidth+1 {
		t.Errorf("page is %dpx wide in a %dpx window: something overflows", layout.ScrollWidth, layout.InnerWidth)
	}
	for _, id := range []string{"summary", "trend", "hints", "mappings", "rules", "effects", "inferred", "quality"} {
		if !strings.Contains(layout.Sections, id+";") {
			t.Errorf("section #%s missing or empty (sections with content: %s)", id, layout.Sections)
		}
	}
	light := layout.Background
	contrast(t, ctx, "light")

	shot(t, ctx, "report.png")

	// Dark theme: the same page with prefers-color-scheme: dark.
	dark := []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: dark}); err != nil {
		t.Fatal(err)
	}
	if layout, err = chromedp.Run(ctx, chromedp.Evaluate[layoutStats](layoutJS)); err != nil {
		t.Fatal(err)
	}
	if layout.Background == light {
		t.Errorf("dark theme: background %s, the same as the light theme's", light)
	}
	contrast(t, ctx, "dark")
	shot(t, ctx, "report-dark.png")

	// Print: light colours, no navigation bar, and a PDF that is not empty.
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print", Features: dark}); err != nil {
		t.Fatal(err)
	}
	if layout, err = chromedp.Run(ctx, chromedp.Evaluate[layoutStats](layoutJS)); err != nil {
		t.Fatal(err)
	}
	if layout.Background != "rgb(255, 255, 255)" || layout.TocDisplay != "none" {
		t.Errorf("print: background %s and navigation display %q, want white and none", layout.Background, layout.TocDisplay)
	}
	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPrintBackground()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF")) || len(pdf) < 10_000 {
		t.Errorf("print to PDF: %d bytes, want a PDF", len(pdf))
	}
	browsertest.Save(t, "report.pdf", pdf)

	for _, m := range b.problems(pageURL) {
		t.Error(m)
	}
}

// TestReportBrowserCheckSeesProblems: the checks above would see a console
// error, an exception and a request for something else than the page (to
// a closed local port, so that nothing leaves the machine).
func TestReportBrowserCheckSeesProblems(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is needed to check the report page (%v): run scripts/setup, which installs Debian's chromium", err)
	}
	pagePath := filepath.Join(t.TempDir(), "bad.html")
	bad := `<!doctype html><title>bad</title><img src="http://127.0.0.1:9/x.png" alt="">` +
		`<script>console.error("drawn wrong"); throw new Error("boom")</script>`
	if err := os.WriteFile(pagePath, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: pagePath}).String()
	b := newBrowser(t)
	if err := chromedp.Do(b.ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("open %s: %v\n%s", pageURL, err, b.output())
	}
	got := strings.Join(b.problems(pageURL), "\n")
	for _, want := range []string{"console.error: drawn wrong", "exception at", "boom", "the page requested http://127.0.0.1:9/x.png"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
}

// chartStats describes one SVG chart as the browser laid it out.
type chartStats struct {
	Class  string  `json:"cls"`
	Width  float64 `json:"w"`
	Height float64 `json:"h"`
	Marks  int     `json:"marks"` // paths, rects, circles and lines drawn with a non-zero size
	Line   float64 `json:"line"`  // length of the first-try line (trend chart)
	Stroke string  `json:"stroke"`
}

const chartStatsJS = `[...document.querySelectorAll("svg.chart, svg.spark")].map(svg => {
  const r = svg.getBoundingClientRect();
  let marks = 0;
  for (const el of svg.querySelectorAll("path, rect, circle, line")) {
    const b = el.getBBox();
    if (b.width > 0 || b.height > 0) marks++;
  }
  const line = svg.querySelector("path.line.s-first");
  return {cls: svg.getAttribute("class"), w: r.width, h: r.height, marks,
          line: line ? line.getTotalLength() : 0,
          stroke: line ? getComputedStyle(line).stroke : ""};
})`

func checkCharts(t *testing.T, r *report.Report, charts []chartStats) {
	t.Helper()
	count := map[string]int{}
	for _, c := range charts {
		count[c.Class]++
		if c.Width < 20 || c.Height < 10 || c.Marks < 1 {
			t.Errorf("chart %q is %.0f×%.0f px with %d marks: not drawn", c.Class, c.Width, c.Height, c.Marks)
		}
		if c.Class == "chart trend" {
			if c.Width < 600 || c.Height < 200 {
				t.Errorf("trend chart is %.0f×%.0f px, want at least 600×200", c.Width, c.Height)
			}
			// Grid, window, bands, lines, a marker per period and rate, bars.
			if c.Marks < 4*len(r.Trend) {
				t.Errorf("trend chart has %d marks for %d periods", c.Marks, len(r.Trend))
			}
			if c.Line < 200 {
				t.Errorf("first-try line is %.0f px long", c.Line)
			}
			if c.Stroke == "" || c.Stroke == "none" {
				t.Errorf("first-try line has stroke %q: the stylesheet did not apply", c.Stroke)
			}
		}
	}
	want := map[string]int{
		"chart trend": 1,
		"spark":       len(r.Headline.Metrics) + 1, // and sessions
		"chart cell":  len(r.WorstHints) + len(r.Mappings) + len(r.Effects),
	}
	for cls, n := range want {
		if count[cls] != n {
			t.Errorf("%d charts of class %q, want %d", count[cls], cls, n)
		}
	}
}

type layoutStats struct {
	ScrollWidth int    `json:"scrollWidth"`
	InnerWidth  int    `json:"innerWidth"`
	Background  string `json:"background"`
	TocDisplay  string `json:"toc"`
	Sections    string `json:"sections"` // ids of the sections with text, each followed by ";"
}

const layoutJS = `({
  scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth,
  background: getComputedStyle(document.body).backgroundColor,
  toc: getComputedStyle(document.querySelector("nav.toc")).display,
  sections: [...document.querySelectorAll("main > section")].filter(s => s.innerText.trim().length > 40).map(s => s.id + ";").join(""),
})`

// shot saves a full-page screenshot.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	img, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if cfg.Width < 1000 || cfg.Height < 1500 {
		t.Errorf("screenshot %s is %d×%d px: the page did not render in full", name, cfg.Width, cfg.Height)
	}
	browsertest.Save(t, name, img)
}

// browser is the suite's headless Chromium (internal/workshop/browsertest).
type browser struct {
	*browsertest.Browser
	ctx context.Context
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	b := browsertest.New(t, 2*time.Minute)
	return &browser{Browser: b, ctx: b.Ctx}
}

// problems lists console errors and warnings, exceptions, and requests for
// anything but the page itself.
func (b *browser) problems(pageURL string) []string {
	return b.Problems(func(u string) bool { return u == pageURL }, "it must be self-contained")
}

func (b *browser) output() string { return b.Output() }

// contrast checks that every text of the page meets WCAG 2 AA contrast
// (browsertest.ContrastJS) in the colour scheme it is shown in.
func contrast(t *testing.T, ctx context.Context, scheme string) {
	t.Helper()
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](browsertest.ContrastJS))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range bad {
		t.Errorf("contrast (%s): %s", scheme, m)
	}
}
