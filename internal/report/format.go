package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/metrics"
)

// What the Markdown and HTML renderings share: numbers written for people.

// ptsCI writes the interval of a difference of rates in percentage points.
func ptsCI(ci *metrics.Interval) string {
	if ci == nil {
		return "–"
	}
	return fmt.Sprintf("[%s, %s]", signed(100*ci.Lo), signed(100*ci.Hi))
}

// pctCI writes a rate's interval in percent.
func pctCI(ci *metrics.Interval) string {
	if ci == nil {
		return "–"
	}
	return fmt.Sprintf("[%.1f, %.1f]", 100*ci.Lo, 100*ci.Hi)
}

// signed writes v with one decimal and a sign (a real minus).
func signed(v float64) string {
	v = math.Round(10*v) / 10
	switch {
	case v > 0:
		return fmt.Sprintf("+%.1f", v)
	case v < 0:
		return fmt.Sprintf("−%.1f", -v)
	}
	return "0.0"
}

// ptsOf writes a nullable difference in percentage points.
func ptsOf(d *float64) string {
	if d == nil {
		return "–"
	}
	return pts(*d)
}

// ratio writes a nullable ratio such as a lift.
func ratio(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f×", *v)
}

// pValue writes a p-value the way papers do.
func pValue(p *float64) string {
	switch {
	case p == nil:
		return "–"
	case *p < 0.0001:
		return "< 0.0001"
	case *p < 0.001:
		return fmt.Sprintf("%.4f", *p)
	}
	return fmt.Sprintf("%.3f", *p)
}

func str(s *string) string {
	if s == nil {
		return "–"
	}
	return *s
}

// stamp writes a time in UTC to the minute, seconds when they are set.
func stamp(t time.Time) string {
	t = t.UTC()
	if t.Second() != 0 || t.Nanosecond() != 0 {
		return t.Format("2006-01-02 15:04:05") + " UTC"
	}
	return t.Format("2006-01-02 15:04") + " UTC"
}

// windowLine is the window in words.
func (r *Report) windowLine() string {
	return fmt.Sprintf("%s → %s, against the %s before (%s → %s)",
		stamp(r.Window.Since), stamp(r.Window.Until), r.Window.Length,
		stamp(r.Window.PreviousSince), stamp(r.Window.PreviousUntil))
}

// verdictText is an effect verdict in words: the analyzer's "nil" (an
// effect too small to matter) is "no effect"; the others read as they are.
func verdictText(v string) string {
	if v == metrics.EffectNil {
		return "no effect"
	}
	return v
}

// curveSince is the first day the evolution curve shows: its first period
// with a session, or the start of its range when it has none.
func (r *Report) curveSince() string {
	if len(r.Trend) > 0 {
		return r.Trend[0].Period
	}
	return r.Settings.TrendSince.Format(time.DateOnly)
}

// filterLine is the filter in words, or "".
func (r *Report) filterLine() string {
	var parts []string
	for _, p := range [][2]string{{"agent", r.Filter.Agent}, {"model", r.Filter.Model}, {"task type", r.Filter.TaskType}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	return strings.Join(parts, ", ")
}

// effectOf returns the deciding metric of an effect row.
func effectOf(e metrics.EffectRow, metric string) metrics.EffectMetric {
	switch metric {
	case metrics.EffectOnFirstTry:
		return e.FirstTrySuccess
	case metrics.EffectOnReplan:
		return e.Replan
	}
	return e.Success
}

// reasonText explains a retirement reason.
func reasonText(reason string) string {
	switch reason {
	case RetireNoLongerHolds:
		return "no longer holds"
	case RetireHarmful:
		return "effect harmful"
	case RetireNil:
		return "no effect (too small to matter)"
	}
	return reason
}

// evidenceLine is a learned rule's evidence in one line.
func evidenceLine(r ruleset.Rule) string {
	switch e := r.Evidence.(type) {
	case *metrics.CallEvidence:
		s := fmt.Sprintf("%d calls, %d failed (%.1f%%", e.Calls, e.Failed, 100*e.FailureRate)
		if e.BaselineFailureRate != nil {
			s += fmt.Sprintf(" vs %.1f%% for the type's other calls", 100**e.BaselineFailureRate)
		}
		s += ")"
		if e.Lift != nil {
			s += fmt.Sprintf(", lift %.2f×", *e.Lift)
		}
		if e.PValue != nil {
			s += ", p " + pValue(e.PValue)
		}
		return s
	case *metrics.ReplaceEvidence:
		return fmt.Sprintf("%d replans swapped it; %d of %d replacement tasks succeeded (%.1f%%)", e.Replans, e.Succeeded, e.Added, 100*e.SuccessRate)
	}
	return ""
}

// trendLabel names a trend period.
func trendLabel(period, every string) string {
	if every == metrics.EveryWeek {
		return "week of " + period
	}
	return period
}

// weak reports whether a hint's evidence is weak: its test's p-value is not
// below the rules' alpha.
func (r *Report) weak(h metrics.HintRow) bool {
	return h.PValue == nil || *h.PValue >= r.Settings.Thresholds.Alpha
}

// glance lists what changed, in a few lines for the top of the report.
func (r *Report) glance() []string {
	var out []string
	ids := func(n int, f func(int) string) string {
		var s []string
		for i := range min(n, 4) {
			s = append(s, f(i))
		}
		if n > 4 {
			s = append(s, fmt.Sprintf("and %d more", n-4))
		}
		return strings.Join(s, ", ")
	}
	switch n := len(r.Rules.New); n {
	case 0:
		out = append(out, "No new rules.")
	default:
		out = append(out, fmt.Sprintf("%s: %s.", plural(n, "new rule", "new rules"), ids(n, func(i int) string { return r.Rules.New[i].ID })))
	}
	switch n := len(r.Rules.Retired); n {
	case 0:
		out = append(out, "Nothing to retire.")
	default:
		out = append(out, fmt.Sprintf("%s to retire: %s.", plural(n, "rule", "rules"), ids(n, func(i int) string {
			return r.Rules.Retired[i].ID + " (" + retireWhy(r.Rules.Retired[i]) + ")"
		})))
	}
	// The worst hint with significant evidence, else the first.
	if len(r.WorstHints) > 0 {
		h, sig := r.WorstHints[0], false
		for _, w := range r.WorstHints {
			if !r.weak(w) {
				h, sig = w, true
				break
			}
		}
		s := fmt.Sprintf("Worst hint: %s for %s tasks fails %s of %d calls (the type's other calls %s",
			str(h.Hint), str(h.TaskType.Value()), pct(h.FailureRate), h.Calls, pct(h.OtherFailureRate))
		if h.Lift != nil {
			s += ", lift " + ratio(h.Lift)
		}
		s += ", p " + pValue(h.PValue)
		if !sig {
			s += ", not significant"
		}
		out = append(out, s+").")
	}
	q := r.DataQuality
	if q.DeadLetters == 0 && q.OpenSessions == 0 && q.ReportedReplansMismatch == 0 {
		out = append(out, "Data quality: no dead letters, no open sessions, no replan-count mismatches.")
	} else {
		out = append(out, fmt.Sprintf("Data quality: %s, %s, %s.",
			plural(int(q.DeadLetters), "dead letter", "dead letters"),
			plural(int(q.OpenSessions), "open session", "open sessions"),
			plural(int(q.ReportedReplansMismatch), "replan-count mismatch", "replan-count mismatches")))
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// retireWhy is a retirement's reasons in words.
func retireWhy(x Retired) string {
	var s []string
	for _, r := range x.Reasons {
		s = append(s, reasonText(r))
	}
	return strings.Join(s, "; ")
}

// rulesFrom says which sessions the rule sets were learned from.
func (r *Report) rulesFrom() string {
	if r.Settings.RulesSince == nil {
		return "since the first one"
	}
	return "since " + stamp(*r.Settings.RulesSince)
}

// rulesetsText lists the rule sets of a trend period.
func rulesetsText(sets []string, without int64) string {
	s := strings.Join(sets, ", ")
	if without > 0 {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("%d without", without)
	}
	if s == "" {
		return "–"
	}
	return s
}

// windowTop is a mapping's top tool in the current window.
func windowTop(m metrics.MappingRow) string {
	if len(m.Windows) == 0 || m.Windows[0].TopTool == nil {
		return "no calls"
	}
	w := m.Windows[0]
	return fmt.Sprintf("%s %s of %d", *w.TopTool, pct(w.TopShare), w.Calls)
}

// toolsText lists a mapping's tools with their shares.
func toolsText(m metrics.MappingRow) string {
	var s []string
	for _, t := range m.Tools {
		s = append(s, fmt.Sprintf("%s %s", t.Tool, pct(t.Share)))
	}
	return strings.Join(s, ", ")
}
