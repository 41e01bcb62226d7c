package report_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/report"
	"github.com/evosignal/evosignal/internal/workshop/inferbench"
)

// The report cites the rule the view applies (inferbench.ChosenRule, named
// as cmd/inferbench names it) and the precision and recall that
// docs/inferred-replans.md reports for it over the whole report set.
func TestInferredCitesTheMeasuredRule(t *testing.T) {
	r := buildFixture(t)
	in := r.Inferred
	if !in.Estimate || in.Rule != inferbench.RuleName(inferbench.ChosenRule()) {
		t.Fatalf("inferred section: estimate %v rule %q, want true and %q", in.Estimate, in.Rule, inferbench.RuleName(inferbench.ChosenRule()))
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(in.MeasuredIn)))
	if err != nil {
		t.Fatalf("the measurement the report cites: %v", err)
	}
	for _, want := range []string{
		"Chosen rule: **" + in.Rule + "**",
		fmt.Sprintf("| %.3f | %.3f |\n", in.Precision, in.Recall),
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("%s does not say %q", in.MeasuredIn, want)
		}
	}
	all := ""
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "| all (report set) |") {
			all = l
		}
	}
	if want := fmt.Sprintf("| %.3f | %.3f |", in.Precision, in.Recall); !strings.HasSuffix(all, want) {
		t.Errorf("%s row %q, want it to end with %q", in.MeasuredIn, all, want)
	}
	// The fixture's sessions all have a plan.
	if in.Current.PlanlessSessions != 0 || in.Current.InferredRate != nil {
		t.Errorf("current window %+v, want no plan-less session", in.Current)
	}
}

// The section shows the window's figures, in Markdown and HTML, apart from
// the replans.
func TestInferredSection(t *testing.T) {
	r := buildFixture(t)
	rate, avg := 2.0/3, 5.0/3
	r.Inferred.Current = report.InferredWindow{PlanlessSessions: 3, InferredSessions: 2, InferredRate: &rate,
		InferredRateCI: metrics.Wilson(2, 3, metrics.Z95), InferredRedecisions: 5, AvgInferred: &avg}
	var md, page bytes.Buffer
	if err := report.WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| Ended sessions without a plan | 3 | 0 |",
		"| With an inferred re-decision | 66.7% (2 of 3) [20.8, 93.9] | – |",
		"| Inferred re-decisions per session | 1.67 | – |",
		"precision 0.709 and recall 0.907 (docs/inferred-replans.md)",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	html := page.String()
	at := strings.Index(html, `<section id="inferred"`)
	if at < 0 {
		t.Fatal("HTML has no section #inferred")
	}
	sec, _, _ := strings.Cut(html[at:], "</section>")
	for _, want := range []string{"estimate", "66.7%", "[20.8, 93.9]", "1.67", "precision 0.709 and recall 0.907"} {
		if !strings.Contains(sec, want) {
			t.Errorf("HTML section #inferred lacks %q", want)
		}
	}
}
