package analyze

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/report"
	"github.com/evosignal/evosignal/internal/workshop/golden"
	"github.com/evosignal/evosignal/internal/workshop/reporttest"
)

// reportArgs are the flags the fixture report is made with: the last
// simulated day against the one before.
func reportArgs(db, out string) []string {
	return []string{"report", "-db", db, "-out", out, "-since", "24h", "-until", "2025-06-10T00:00:00Z",
		"-min-calls", "10", "-periods", "7"}
}

// TestReportGolden runs analyze report on the fixture database and compares
// report.json, generated_at masked, with testdata/report/report.golden.json
// (go test ./cmd/analyze -run Report -update rewrites it), and checks the
// Markdown beside it.
func TestReportGolden(t *testing.T) {
	db := reporttest.DB(t)
	out := t.TempDir()
	stdout := runForOutput(t, reportArgs(db, out)...)

	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "First-try success 53.3% → 62.3% since 2025-06-06 (+9.0 pts, within noise), +19.0 pts vs previous 24h (within noise)") {
		t.Fatalf("stdout = %q, want the headline and three paths", stdout)
	}
	for i, name := range []string{report.HTMLFile, report.MarkdownFile, report.JSONFile} {
		if want := filepath.Join(out, name); lines[i+1] != want {
			t.Errorf("stdout line %d = %q, want %q", i+2, lines[i+1], want)
		}
	}

	b, err := os.ReadFile(filepath.Join(out, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	got := generatedAt.ReplaceAll(b, []byte(`"generated_at": "(masked)"`))
	checkReportGolden(t, "report.golden.json", got)

	v := decodeJSON(t, got)
	headline := v["headline"].(map[string]any)["text"].(string)
	md, err := os.ReadFile(filepath.Join(out, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# evosignal report\n", "> **" + headline + "**",
		"Window: 2025-06-09 00:00 UTC → 2025-06-10 00:00 UTC, against the 24h before",
		"## Summary", "## Evolution curve", "## Worst hints", "## Task type → tool", "## Rules",
		"## Rule effects", "## Data quality",
		"| 2025-06-09 | 61 | 0 | 62.3% | 100.0% | 37.7% |",
		"- Dead letters received in the window: 4",
	} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, report.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("<h1 id=\"headline\">First-try success 53.3% → 62.3% since 2025-06-06")) {
		t.Error("report.html lacks the headline")
	}
}

// TestReportLive: through a running ingester's query service (-nats) the
// report holds the same numbers as from the file.
func TestReportLive(t *testing.T) {
	_, url := liveService(t, reporttest.DB(t))
	out := t.TempDir()
	args := reportArgs("", out)
	for i, a := range args {
		if a == "-db" {
			args[i], args[i+1] = "-nats", url
		}
	}
	runForOutput(t, args...)
	b, err := os.ReadFile(filepath.Join(out, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	checkReportGolden(t, "report.golden.json", generatedAt.ReplaceAll(b, []byte(`"generated_at": "(masked)"`)))
}

// checkReportGolden compares got with testdata/report/name (numbers to
// 1e-9), or rewrites it with -update.
func checkReportGolden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	golden.CheckJSON(tb, filepath.Join("..", "..", "..", "testdata", "report", name), got)
}

// TestReportWindow: -since as a duration counts back from -until; as a
// time it is taken as it is; -until defaults to now.
func TestReportWindow(t *testing.T) {
	now := time.Date(2025, 6, 12, 8, 30, 0, 0, time.UTC)
	tests := []struct {
		name         string
		args         []string
		since, until time.Time
	}{
		{"defaults", nil, now.Add(-24 * time.Hour), now},
		{"duration back from -until", []string{"-since", "7d", "-until", "2025-06-10"},
			time.Date(2025, 6, 3, 0, 0, 0, 0, time.UTC), time.Date(2025, 6, 10, 0, 0, 0, 0, time.UTC)},
		{"two times", []string{"-since", "2025-06-01T12:00:00Z", "-until", "2025-06-02T00:00:00Z"},
			time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC)},
		{"-until as a duration back from now", []string{"-since", "1h", "-until", "30m"}, now.Add(-90 * time.Minute), now.Add(-30 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			f, err := parseReport(t.Context(), append([]string{"-out", "x"}, tt.args...), now, &stderr)
			if err != nil {
				t.Fatalf("parseReport(%q) = %v\n%s", tt.args, err, stderr.String())
			}
			if !f.cfg.Since.Equal(tt.since) || !f.cfg.Until.Equal(tt.until) {
				t.Fatalf("parseReport(%q) window = [%s, %s), want [%s, %s)", tt.args, f.cfg.Since, f.cfg.Until, tt.since, tt.until)
			}
		})
	}
}

// TestReportUsage: bad flags are usage errors that say what is wrong, all
// at once.
func TestReportUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"no -out", []string{}, []string{"-out is required"}},
		{"stray argument", []string{"-out", "x", "extra"}, []string{`unexpected arguments ["extra"]`}},
		{"everything wrong", []string{"-out", "x", "-every", "month", "-periods", "0", "-top", "0", "-metric", "joy"},
			[]string{`trend period "month"`, "periods 0", "worst hints 0", `metric "joy"`}},
		{"since after until", []string{"-out", "x", "-since", "2025-06-10", "-until", "2025-06-09"}, []string{"is not before until"}},
		{"rules since inside the window", []string{"-out", "x", "-since", "2025-06-09", "-until", "2025-06-10", "-rules-since", "2025-06-09T12:00:00Z"},
			[]string{"rules since 2025-06-09T12:00:00Z must be before the window's start"}},
		{"bad since", []string{"-out", "x", "-since", "yesterday"}, []string{`-since "yesterday"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"report"}, tt.args...), &stdout, &stderr)
			if !errors.Is(err, errUsage) {
				t.Fatalf("analyze report %q = %v, want a usage error", tt.args, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// TestReportMissingDB: a database that is not there is an error, not an
// empty report.
func TestReportMissingDB(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"report", "-db", filepath.Join(out, "nope.duckdb"), "-out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "nope.duckdb") {
		t.Fatalf("err = %v, want one naming the missing database", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("wrote %d files for a missing database", len(entries))
	}
}
