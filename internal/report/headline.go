package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/evosignal/evosignal/internal/metrics"
)

// Headline is the summary at the top: the window's key rates against the
// previous window's, and one sentence saying so.
type Headline struct {
	// Text is the sentence, e.g. "First-try success 87.0% (+5.0 pts vs
	// previous 24h, significant)".
	Text     string     `json:"text"`
	Sessions Sessions   `json:"sessions"`
	Metrics  []Compared `json:"metrics"` // first_try_success, replan, success
}

// Sessions counts the ended and open sessions of both windows.
type Sessions struct {
	Current      int64 `json:"current"` // ended sessions started in the window
	Previous     int64 `json:"previous"`
	OpenCurrent  int64 `json:"open_current"` // started in the window, never ended
	OpenPrevious int64 `json:"open_previous"`
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
}

// Proportion is k of n sessions, with the rate and its Wilson 95% interval
// as the analyzer reports them.
type Proportion struct {
	Count    int64             `json:"count"`
	Sessions int64             `json:"sessions"`
	Rate     *float64          `json:"rate"`
	CI       *metrics.Interval `json:"ci"`
}

func newHeadline(cur, prev metrics.ReplansRow, length string) Headline {
	h := Headline{Sessions: Sessions{
		Current: cur.Sessions, Previous: prev.Sessions,
		OpenCurrent: cur.OpenSessions, OpenPrevious: prev.OpenSessions,
	}}
	h.Metrics = []Compared{
		compare("first_try_success", "First-try success", true, length,
			Proportion{cur.FirstTrySuccesses, cur.Sessions, cur.FirstTrySuccessRate, cur.FirstTrySuccessRateCI},
			Proportion{prev.FirstTrySuccesses, prev.Sessions, prev.FirstTrySuccessRate, prev.FirstTrySuccessRateCI}),
		compare("replan", "Replan rate", false, length,
			Proportion{cur.Replanned, cur.Sessions, cur.ReplanRate, cur.ReplanRateCI},
			Proportion{prev.Replanned, prev.Sessions, prev.ReplanRate, prev.ReplanRateCI}),
		compare("success", "Success", true, length,
			Proportion{cur.Successes, cur.Sessions, cur.SuccessRate, cur.SuccessRateCI},
			Proportion{prev.Successes, prev.Sessions, prev.SuccessRate, prev.SuccessRateCI}),
	}
	switch {
	case cur.Sessions == 0:
		h.Text = fmt.Sprintf("No session ended in the last %s", length)
		if cur.OpenSessions > 0 {
			h.Text += fmt.Sprintf(" (%d still open)", cur.OpenSessions)
		}
	default:
		h.Text = h.Metrics[0].Summary + "; " + lowerFirst(h.Metrics[1].Summary)
	}
	return h
}

// compare sets two proportions side by side. The interval of the difference
// is Newcombe's (metrics.NewcombeDiff) on the analyzer's counts.
func compare(metric, label string, higherIsBetter bool, length string, cur, prev Proportion) Compared {
	c := Compared{Metric: metric, Label: label, HigherIsBetter: higherIsBetter, Current: cur, Previous: prev, Assessment: NoData}
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
	case cur.Rate == nil:
		c.Summary = fmt.Sprintf("%s: no ended session in the last %s", label, length)
	case prev.Rate == nil:
		c.Summary = fmt.Sprintf("%s %s (no ended session in the previous %s)", label, pct(cur.Rate), length)
	default:
		c.Summary = fmt.Sprintf("%s %s (%s vs previous %s, %s)", label, pct(cur.Rate), pts(*c.Change), length, c.Assessment)
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
