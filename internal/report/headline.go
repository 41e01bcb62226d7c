package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/evosignal/evosignal/internal/metrics"
)

// Headline is the summary at the top: the window's key rates against the
// start of the range the evolution curve covers and against the previous
// window, and one sentence saying so.
type Headline struct {
	// Text is the sentence: the run's story, then the last change, e.g.
	// "First-try success 53.0% → 89.0% since 2025-06-03 (+36.0 pts,
	// significant), +1.7 pts vs previous 24h (within noise); replan rate …".
	Text     string     `json:"text"`
	Sessions Sessions   `json:"sessions"`
	Metrics  []Compared `json:"metrics"` // first_try_success, replan, success: the window against the previous window
	// Start is the window against the first period of the curve with an
	// ended session; null when that period is not wholly before the window
	// (or there is none).
	Start *Start `json:"start"`
}

// Start compares the window with the start of the range: Metrics are the
// same rates as Headline.Metrics, with Previous being the start period.
type Start struct {
	Period  string     `json:"period"` // first day of the start period (UTC), YYYY-MM-DD
	Metrics []Compared `json:"metrics"`
}

// Sessions counts the ended and open sessions of both windows.
type Sessions struct {
	Current      int64 `json:"current"` // ended sessions started in the window
	Previous     int64 `json:"previous"`
	OpenCurrent  int64 `json:"open_current"` // started in the window, never ended
	OpenPrevious int64 `json:"open_previous"`
	// Ended sessions of outcome unknown (no evidence of how they went):
	// left out of the success and first-try success rates.
	UnknownCurrent  int64 `json:"unknown_outcome_current"`
	UnknownPrevious int64 `json:"unknown_outcome_previous"`
}

// Assessments of a change.
const (
	Significant = "significant"  // the 95% interval of the difference excludes 0
	WithinNoise = "within noise" // it includes 0
	NoData      = "no data"      // a window has no ended session
)

// Compared is one rate of the window against the previous window's, as the
// replans analyzer counts them (over ended sessions).
type Compared struct {
	Metric string `json:"metric"` // first_try_success, replan or success
	Label  string `json:"label"`
	// HigherIsBetter: false for the replan rate.
	HigherIsBetter bool       `json:"higher_is_better"`
	Current        Proportion `json:"current"`
	Previous       Proportion `json:"previous"`
	// Change is current − previous (a difference of rates: ×100 for
	// percentage points), with Newcombe's 95% interval; null without data.
	Change     *float64          `json:"change"`
	ChangeCI   *metrics.Interval `json:"change_ci"`
	Assessment string            `json:"assessment"` // significant, within noise or no data
	// Direction is better, worse or unchanged (by HigherIsBetter; null
	// without data). Read it with the assessment: a change within noise
	// is no evidence of either.
	Direction *string `json:"direction"`
	Summary   string  `json:"summary"` // e.g. "Replan rate 12.0% (−3.1 pts vs previous 24h, within noise)"

	against string // what Previous is, in words: "previous 24h", "2025-06-03"
}

// Proportion is k of n sessions, with the rate and its Wilson 95% interval
// as the analyzer reports them. For the success rates, Sessions are those of
// known outcome: UnknownOutcome more ended sessions were left out.
type Proportion struct {
	Count          int64             `json:"count"`
	Sessions       int64             `json:"sessions"`
	UnknownOutcome int64             `json:"unknown_outcome"`
	Rate           *float64          `json:"rate"`
	CI             *metrics.Interval `json:"ci"`
}

// rates are the three headline rates of a window or period.
type rates struct {
	sessions, unknown                     int64 // ended sessions, those of them of outcome unknown
	firstTry, replanned, successes        int64
	firstTryRate, replanRate, successRate *float64
	firstTryCI, replanCI, successCI       *metrics.Interval
}

func ratesOfReplans(r metrics.ReplansRow) rates {
	return rates{r.Sessions, r.UnknownOutcome, r.FirstTrySuccesses, r.Replanned, r.Successes,
		r.FirstTrySuccessRate, r.ReplanRate, r.SuccessRate,
		r.FirstTrySuccessRateCI, r.ReplanRateCI, r.SuccessRateCI}
}

func ratesOfTrend(t metrics.TrendRow) rates {
	return rates{t.Sessions, t.UnknownOutcome, t.FirstTrySuccesses, t.Replanned, t.Successes,
		t.FirstTrySuccessRate, t.ReplanRate, t.SuccessRate,
		t.FirstTrySuccessRateCI, t.ReplanRateCI, t.SuccessRateCI}
}

// compareRates compares the headline rates of cur with those of prev,
// described as against ("previous 24h", "2025-06-03"); length is the
// window's. The success rates are over the sessions of known outcome, the
// replan rate over every ended session.
func compareRates(cur, prev rates, length, against string) []Compared {
	known := func(r rates, k int64, rate *float64, ci *metrics.Interval) Proportion {
		return Proportion{Count: k, Sessions: r.sessions - r.unknown, UnknownOutcome: r.unknown, Rate: rate, CI: ci}
	}
	return []Compared{
		compare("first_try_success", "First-try success", true, length, against,
			known(cur, cur.firstTry, cur.firstTryRate, cur.firstTryCI),
			known(prev, prev.firstTry, prev.firstTryRate, prev.firstTryCI)),
		compare("replan", "Replan rate", false, length, against,
			Proportion{Count: cur.replanned, Sessions: cur.sessions, Rate: cur.replanRate, CI: cur.replanCI},
			Proportion{Count: prev.replanned, Sessions: prev.sessions, Rate: prev.replanRate, CI: prev.replanCI}),
		compare("success", "Success", true, length, against,
			known(cur, cur.successes, cur.successRate, cur.successCI),
			known(prev, prev.successes, prev.successRate, prev.successCI)),
	}
}

// newHeadline compares the window (cur) with the previous window (prev)
// and with start, the first period of the curve with an ended session, if
// it lies wholly before the window.
func newHeadline(cur, prev metrics.ReplansRow, length string, start *metrics.TrendRow) Headline {
	h := Headline{Sessions: Sessions{
		Current: cur.Sessions, Previous: prev.Sessions,
		OpenCurrent: cur.OpenSessions, OpenPrevious: prev.OpenSessions,
		UnknownCurrent: cur.UnknownOutcome, UnknownPrevious: prev.UnknownOutcome,
	}}
	h.Metrics = compareRates(ratesOfReplans(cur), ratesOfReplans(prev), length, "previous "+length)
	if start != nil {
		h.Start = &Start{Period: start.Period, Metrics: compareRates(ratesOfReplans(cur), ratesOfTrend(*start), length, start.Period)}
	}
	switch {
	case cur.Sessions == 0:
		h.Text = fmt.Sprintf("No session ended in the last %s", length)
		if cur.OpenSessions > 0 {
			h.Text += fmt.Sprintf(" (%d still open)", cur.OpenSessions)
		}
	default:
		h.Text = h.Story(0) + "; " + lowerFirst(h.Story(1))
	}
	return h
}

// Story tells the i-th headline rate: from the start of the range to the
// window, then the change against the previous window, e.g. "First-try
// success 53.0% → 89.0% since 2025-06-03 (+36.0 pts, significant), +1.7
// pts vs previous 24h (within noise)". Without a start it is the rate's
// Summary.
func (h Headline) Story(i int) string {
	m := h.Metrics[i]
	if h.Start == nil || m.Current.Rate == nil || h.Start.Metrics[i].Change == nil {
		return m.Summary
	}
	s := h.Start.Metrics[i]
	story := fmt.Sprintf("%s %s → %s since %s (%s, %s)", m.Label, pct(s.Previous.Rate), pct(m.Current.Rate), h.Start.Period, pts(*s.Change), s.Assessment)
	if m.Change == nil {
		return story
	}
	return fmt.Sprintf("%s, %s vs %s (%s)", story, pts(*m.Change), m.against, m.Assessment)
}

// compare sets two proportions side by side. The interval of the difference
// is Newcombe's (metrics.NewcombeDiff) on the analyzer's counts.
func compare(metric, label string, higherIsBetter bool, length, against string, cur, prev Proportion) Compared {
	c := Compared{Metric: metric, Label: label, HigherIsBetter: higherIsBetter, Current: cur, Previous: prev, Assessment: NoData, against: against}
	if cur.Rate != nil && prev.Rate != nil {
		d := *cur.Rate - *prev.Rate
		c.Change = &d
		c.ChangeCI = metrics.NewcombeDiff(cur.Count, cur.Sessions, prev.Count, prev.Sessions, metrics.Z95)
		c.Assessment = WithinNoise
		if c.ChangeCI != nil && (c.ChangeCI.Lo > 0 || c.ChangeCI.Hi < 0) {
			c.Assessment = Significant
		}
		dir := "unchanged"
		if d != 0 {
			if (d > 0) == higherIsBetter {
				dir = "better"
			} else {
				dir = "worse"
			}
		}
		c.Direction = &dir
	}
	switch {
	case cur.Rate == nil && cur.UnknownOutcome > 0:
		c.Summary = fmt.Sprintf("%s: no ended session of known outcome in the last %s", label, length)
	case cur.Rate == nil:
		c.Summary = fmt.Sprintf("%s: no ended session in the last %s", label, length)
	case prev.Rate == nil && prev.UnknownOutcome > 0:
		c.Summary = fmt.Sprintf("%s %s (no ended session of known outcome in the %s)", label, pct(cur.Rate), against)
	case prev.Rate == nil:
		c.Summary = fmt.Sprintf("%s %s (no ended session in the %s)", label, pct(cur.Rate), against)
	default:
		c.Summary = fmt.Sprintf("%s %s (%s vs %s, %s)", label, pct(cur.Rate), pts(*c.Change), against, c.Assessment)
	}
	return c
}

// pct writes a rate as a percentage with one decimal, or "–" for null.
func pct(r *float64) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100**r)
}

// pts writes a difference of rates in percentage points, signed, with a
// real minus sign.
func pts(d float64) string {
	v := math.Round(1000*d) / 10
	switch {
	case v > 0:
		return fmt.Sprintf("+%.1f pts", v)
	case v < 0:
		return fmt.Sprintf("−%.1f pts", -v)
	}
	return "±0.0 pts"
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
