package report_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/report"
	"github.com/evosignal/evosignal/internal/workshop/reporttest"
)

// generatedAt is the fixed clock of the fixture reports.
var generatedAt = time.Date(2025, 6, 10, 6, 0, 0, 0, time.UTC)

// fixtureConfig is the configuration the fixture is read with.
func fixtureConfig() report.Config {
	cfg := report.DefaultConfig()
	cfg.Since, cfg.Until = reporttest.Since, reporttest.Until
	cfg.Periods = 7
	cfg.Hints.MinCalls = reporttest.MinCalls
	cfg.Rules.MinCalls = reporttest.MinCalls
	return cfg
}

// buildFixture builds the report of a new fixture database.
func buildFixture(tb testing.TB) *report.Report {
	tb.Helper()
	return buildWith(tb, fixtureConfig())
}

func buildWith(tb testing.TB, cfg report.Config) *report.Report {
	tb.Helper()
	db := openFixture(tb)
	r, err := report.Build(context.Background(), metrics.DB{DB: db}, cfg, generatedAt)
	if err != nil {
		tb.Fatalf("Build: %v", err)
	}
	return r
}

func openFixture(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("duckdb", reporttest.DB(tb)+"?access_mode=read_only")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestReportSections(t *testing.T) {
	r := buildFixture(t)
	h := r.Headline
	if h.Sessions.Current != 61 || h.Sessions.Previous != 30 || h.Sessions.OpenCurrent != 1 {
		t.Errorf("sessions = %+v, want 61 ended and 1 open against 30", h.Sessions)
	}
	if len(h.Metrics) != 3 || h.Metrics[0].Metric != "first_try_success" || h.Metrics[1].Metric != "replan" {
		t.Fatalf("headline metrics = %+v", h.Metrics)
	}
	// The story of the range (the fixture's first day with data is
	// 2025-06-06, though the curve's range starts on 06-03), then the
	// change against the previous window.
	if want := "First-try success 53.3% → 62.3% since 2025-06-06 (+9.0 pts, within noise), +19.0 pts vs previous 24h (within noise); " +
		"replan rate 46.7% → 37.7% since 2025-06-06 (−9.0 pts, within noise), −19.0 pts vs previous 24h (within noise)"; h.Text != want {
		t.Errorf("headline = %q, want %q", h.Text, want)
	}
	if h.Start == nil || h.Start.Period != "2025-06-06" || h.Start.Metrics[0].Previous.Sessions != 30 {
		t.Errorf("headline start = %+v, want the period 2025-06-06 with its 30 ended sessions", h.Start)
	}
	if got := len(r.Trend); got != 4 {
		t.Errorf("%d trend periods, want 4 (2025-06-06 … 06-09)", got)
	}
	for _, w := range r.WorstHints {
		if !w.Supported || w.Hint == nil || w.Calls < reporttest.MinCalls {
			t.Errorf("worst hint %+v: want supported hints only", w)
		}
	}
	var newIDs, retiredIDs []string
	for _, n := range r.Rules.New {
		newIDs = append(newIDs, n.ID)
	}
	for _, x := range r.Rules.Retired {
		retiredIDs = append(retiredIDs, x.ID+" "+strings.Join(x.Reasons, ","))
	}
	if got, want := strings.Join(newIDs, " "), "prefer:analysis:python_exec prefer:search:search_web"; got != want {
		t.Errorf("new rules = %s, want %s", got, want)
	}
	if got, want := strings.Join(retiredIDs, "; "), "avoid:search:grep no_longer_holds"; got != want {
		t.Errorf("retired = %s, want %s", got, want)
	}
	q := r.DataQuality
	if q.DeadLetters != 4 || q.OpenSessions != 1 || q.ReportedReplansMismatch != 1 {
		t.Errorf("data quality = %d dead letters, %d open, %d mismatches; want 4, 1, 1", q.DeadLetters, q.OpenSessions, q.ReportedReplansMismatch)
	}
	var codes []string
	for _, d := range q.DeadLettersByReason {
		codes = append(codes, d.ReasonCode)
	}
	if got, want := strings.Join(codes, " "), "schema_violation malformed_json unknown_type"; got != want {
		t.Errorf("dead letter reasons = %s, want %s (most first, then by name)", got, want)
	}
}

// TestReportRetiresByEffect: what the effect analyzer marks retire is listed
// with its verdict, the rule set first, and a rule that also no longer
// holds keeps both reasons.
func TestReportRetiresByEffect(t *testing.T) {
	cfg := fixtureConfig()
	// With arms of 10 sessions enough and a nil margin of ±50 points, the
	// last day's rule set and each of its rules (success 40/40 against
	// 20/20) are nil.
	cfg.Effect = metrics.EffectConfig{MinSessions: 10, NilMargin: 0.5, Metric: metrics.EffectOnSuccess}
	r := buildWith(t, cfg)
	found := map[string]report.Retired{}
	for _, x := range r.Rules.Retired {
		found[x.ID] = x
	}
	set := found["rs-022822c0ccdb"]
	if set.Kind != "ruleset" || set.Verdict == nil || *set.Verdict != metrics.EffectNil {
		t.Errorf("rule set rs-022822c0ccdb = %+v, want kind ruleset, verdict nil", set)
	}
	grep := found["avoid:search:grep"]
	if got := strings.Join(grep.Reasons, ","); got != "no_longer_holds,nil" {
		t.Errorf("avoid:search:grep reasons = %s, want no_longer_holds,nil", got)
	}
	if grep.Rule == nil || grep.Rule.ID != "avoid:search:grep" {
		t.Errorf("avoid:search:grep: the last learned rule is missing: %+v", grep.Rule)
	}
	if len(r.Rules.Retired) == 0 || r.Rules.Retired[0].Kind != "ruleset" {
		t.Errorf("retired = %+v, want the rule set first", r.Rules.Retired)
	}
}

// TestReportMarkdown checks the Markdown holds every section, the headline
// and well-formed tables.
func TestReportMarkdown(t *testing.T) {
	r := buildFixture(t)
	var b bytes.Buffer
	if err := report.WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"# evosignal report\n",
		"> **" + r.Headline.Text + "**",
		"## Summary", "## Evolution curve", "## Worst hints", "## Task type → tool",
		"## Rules", "### New (2)", "### To retire (1)", "## Rule effects", "## Inferred re-decisions (estimate)", "## Data quality",
		"| Ended sessions without a plan | 0 | 0 |",
		"| First-try success | 62.3% (38 of 61) | 43.3% (13 of 30) | +19.0 pts |",
		"| prefer:search:search_web |",
		"| avoid:search:grep | avoid | no longer holds |",
		"| schema_violation | 2 |",
		"Per day since 2025-06-06 (the last period may be partial).", // the first day with data, not the range's 06-03
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if w := regexp.MustCompile(`\bnil\b`).FindString(md); w != "" {
		t.Errorf("Markdown says %q: jargon a reader does not know", w)
	}
	// A table's rows have as many cells as its header.
	lines := strings.Split(md, "\n")
	cells := func(l string) int { return len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(l, -1)) - 1 }
	for i := 1; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|---") {
			continue
		}
		want := cells(lines[i-1])
		for j := i + 1; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			if got := cells(lines[j]); got != want {
				t.Errorf("line %d has %d cells, its table's header %d:\n%s", j+1, got, want, lines[j])
			}
		}
	}
}

// TestReportHTMLSelfContained: the page references nothing outside itself
// but its two sibling files.
func TestReportHTMLSelfContained(t *testing.T) {
	r := buildFixture(t)
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"http://", "https://", "<script", "<link", "<img", "@import", "url(", "//fonts."} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must need no network and no script", bad)
		}
	}
	hrefs := regexp.MustCompile(`(?:href|src)="([^"#][^"]*)"`).FindAllStringSubmatch(page, -1)
	for _, h := range hrefs {
		if h[1] != report.JSONFile && h[1] != report.MarkdownFile {
			t.Errorf("page links to %q", h[1])
		}
	}
	if !strings.Contains(page, "<svg class=\"chart trend\"") {
		t.Error("page has no trend chart")
	}
}

// TestReportJSONRoundTrip: the JSON decodes into the same shape (the
// report's own types, not only the golden text).
func TestReportJSONRoundTrip(t *testing.T) {
	r := buildFixture(t)
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"report", "version", "generated_at", "window", "filter", "settings", "classifier",
		"headline", "trend", "worst_hints", "mappings", "rules", "effects", "data_quality"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if back["generated_at"] != "2025-06-10T06:00:00Z" {
		t.Errorf("generated_at = %v", back["generated_at"])
	}
}

// TestReportEmptyWindow: a window without sessions still makes a report
// that says so.
func TestReportEmptyWindow(t *testing.T) {
	cfg := fixtureConfig()
	cfg.Since, cfg.Until = time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 7, 2, 0, 0, 0, 0, time.UTC)
	r := buildWith(t, cfg)
	if r.Headline.Text != "No session ended in the last 24h" {
		t.Errorf("headline = %q", r.Headline.Text)
	}
	for _, m := range r.Headline.Metrics {
		if m.Assessment != report.NoData || m.Change != nil {
			t.Errorf("%s: %s, change %v; want no data", m.Metric, m.Assessment, m.Change)
		}
	}
	var md, page bytes.Buffer
	if err := report.WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "No session started in these periods.") {
		t.Error("the empty page does not say that the curve is empty")
	}
}
