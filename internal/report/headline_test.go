package report

import (
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/metrics"
)

func prop(k, n int64) Proportion {
	r, ci := metrics.Rate(k, n), metrics.Wilson(k, n, metrics.Z95)
	return Proportion{Count: k, Sessions: n, Rate: r, CI: ci}
}

func TestReportCompare(t *testing.T) {
	tests := []struct {
		name            string
		higherIsBetter  bool
		cur, prev       Proportion
		assessment      string
		direction       string // "" for null
		summary         string
		significantByCI bool
		changeIsNull    bool
	}{
		{"up beyond noise", true, prop(870, 1000), prop(820, 1000), Significant, "better",
			"First-try success 87.0% (+5.0 pts vs previous 24h, significant)", true, false},
		{"up within noise", true, prop(87, 100), prop(82, 100), WithinNoise, "better",
			"First-try success 87.0% (+5.0 pts vs previous 24h, within noise)", false, false},
		{"replans down is better", false, prop(100, 1000), prop(150, 1000), Significant, "better",
			"First-try success 10.0% (−5.0 pts vs previous 24h, significant)", true, false},
		{"down is worse", true, prop(400, 1000), prop(500, 1000), Significant, "worse",
			"First-try success 40.0% (−10.0 pts vs previous 24h, significant)", true, false},
		{"unchanged", true, prop(5, 10), prop(50, 100), WithinNoise, "unchanged",
			"First-try success 50.0% (±0.0 pts vs previous 24h, within noise)", false, false},
		{"no previous sessions", true, prop(5, 10), prop(0, 0), NoData, "",
			"First-try success 50.0% (no ended session in the previous 24h)", false, true},
		{"no sessions", true, prop(0, 0), prop(5, 10), NoData, "",
			"First-try success: no ended session in the last 24h", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := compare("first_try_success", "First-try success", tt.higherIsBetter, "24h", "previous 24h", tt.cur, tt.prev)
			if c.Assessment != tt.assessment {
				t.Errorf("assessment = %q, want %q (change %v, CI %+v)", c.Assessment, tt.assessment, c.Change, c.ChangeCI)
			}
			dir := ""
			if c.Direction != nil {
				dir = *c.Direction
			}
			if dir != tt.direction {
				t.Errorf("direction = %q, want %q", dir, tt.direction)
			}
			if c.Summary != tt.summary {
				t.Errorf("summary = %q, want %q", c.Summary, tt.summary)
			}
			if (c.Change == nil) != tt.changeIsNull || (c.ChangeCI == nil) != tt.changeIsNull {
				t.Errorf("change = %v, CI %v; want null: %v", c.Change, c.ChangeCI, tt.changeIsNull)
			}
			if c.ChangeCI != nil && (c.ChangeCI.Lo > 0 || c.ChangeCI.Hi < 0) != tt.significantByCI {
				t.Errorf("CI %+v: excludes 0 = %v, want %v", *c.ChangeCI, !tt.significantByCI, tt.significantByCI)
			}
		})
	}
}

func TestReportHeadlineText(t *testing.T) {
	row := func(sessions, open, firstTry, replanned int64) metrics.ReplansRow {
		r := metrics.ReplansRow{Sessions: sessions, OpenSessions: open, FirstTrySuccesses: firstTry, Replanned: replanned, Successes: firstTry}
		r.FirstTrySuccessRate, r.FirstTrySuccessRateCI = metrics.Rate(firstTry, sessions), metrics.Wilson(firstTry, sessions, metrics.Z95)
		r.ReplanRate, r.ReplanRateCI = metrics.Rate(replanned, sessions), metrics.Wilson(replanned, sessions, metrics.Z95)
		r.SuccessRate, r.SuccessRateCI = r.FirstTrySuccessRate, r.FirstTrySuccessRateCI
		return r
	}
	// start is the first period of the curve: 53% first-try success.
	start := metrics.TrendRow{Period: "2025-06-01", Sessions: 100, FirstTrySuccesses: 53, Replanned: 40, Successes: 53}
	start.FirstTrySuccessRate, start.FirstTrySuccessRateCI = metrics.Rate(53, 100), metrics.Wilson(53, 100, metrics.Z95)
	start.ReplanRate, start.ReplanRateCI = metrics.Rate(40, 100), metrics.Wilson(40, 100, metrics.Z95)
	start.SuccessRate, start.SuccessRateCI = start.FirstTrySuccessRate, start.FirstTrySuccessRateCI
	tests := []struct {
		name      string
		cur, prev metrics.ReplansRow
		start     *metrics.TrendRow
		want      string
	}{
		{"both windows", row(1000, 0, 870, 100), row(1000, 0, 820, 150), nil,
			"First-try success 87.0% (+5.0 pts vs previous 7d, significant); replan rate 10.0% (−5.0 pts vs previous 7d, significant)"},
		{"the run's story", row(1000, 0, 890, 100), row(1000, 0, 873, 110), &start,
			"First-try success 53.0% → 89.0% since 2025-06-01 (+36.0 pts, significant), +1.7 pts vs previous 7d (within noise); " +
				"replan rate 40.0% → 10.0% since 2025-06-01 (−30.0 pts, significant), −1.0 pts vs previous 7d (within noise)"},
		{"no previous window", row(1000, 0, 890, 100), row(0, 0, 0, 0), &start,
			"First-try success 53.0% → 89.0% since 2025-06-01 (+36.0 pts, significant); " +
				"replan rate 40.0% → 10.0% since 2025-06-01 (−30.0 pts, significant)"},
		{"nothing ended", row(0, 3, 0, 0), row(10, 0, 5, 5), &start, "No session ended in the last 7d (3 still open)"},
		{"nothing at all", row(0, 0, 0, 0), row(0, 0, 0, 0), nil, "No session ended in the last 7d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newHeadline(tt.cur, tt.prev, "7d", tt.start).Text; got != tt.want {
				t.Errorf("headline = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReportFormatLength(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{24 * time.Hour, "24h"},
		{48 * time.Hour, "2d"},
		{7 * 24 * time.Hour, "7d"},
		{36 * time.Hour, "36h"},
		{90 * time.Minute, "90m"},
		{90 * time.Second, "1m30s"},
	}
	for _, tt := range tests {
		if got := formatLength(tt.d); got != tt.want {
			t.Errorf("formatLength(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestReportTrendSince(t *testing.T) {
	tests := []struct {
		name    string
		until   string
		every   string
		periods int
		want    string
	}{
		{"midnight: the day before is the last", "2025-06-10T00:00:00Z", metrics.EveryDay, 7, "2025-06-03"},
		{"mid-day: today is the last", "2025-06-10T08:30:00Z", metrics.EveryDay, 7, "2025-06-04"},
		{"one period", "2025-06-10T08:30:00Z", metrics.EveryDay, 1, "2025-06-10"},
		{"weeks start on Monday", "2025-06-12T08:00:00Z", metrics.EveryWeek, 3, "2025-05-26"}, // Thursday
		{"Monday midnight ends the week before", "2025-06-09T00:00:00Z", metrics.EveryWeek, 1, "2025-06-02"},
		{"an offset is read in UTC", "2025-06-10T01:00:00+02:00", metrics.EveryDay, 1, "2025-06-09"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			until, err := time.Parse(time.RFC3339, tt.until)
			if err != nil {
				t.Fatal(err)
			}
			if got := trendSince(until, tt.every, tt.periods).Format(time.DateOnly); got != tt.want {
				t.Errorf("trendSince(%s, %s, %d) = %s, want %s", tt.until, tt.every, tt.periods, got, tt.want)
			}
		})
	}
}

func TestReportConfigValidate(t *testing.T) {
	at := func(s string) time.Time {
		v, _ := time.Parse(time.DateOnly, s)
		return v
	}
	ok := DefaultConfig()
	ok.Since, ok.Until = at("2025-06-09"), at("2025-06-10")
	if err := ok.Validate(); err != nil {
		t.Fatalf("Validate() = %v for a good config", err)
	}
	bad := ok
	bad.Since, bad.Until = bad.Until, bad.Since
	bad.Every, bad.Periods, bad.WorstHints, bad.MappingWindows = "month", 0, 0, 0
	bad.RulesSince = at("2025-06-11")
	bad.Effect.Metric = "joy"
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate() = nil for a bad config")
	}
	for _, want := range []string{"is not before until", `trend period "month"`, "periods 0", "worst hints 0", "mapping windows 0",
		"rules since", `metric "joy"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to say %q", err, want)
		}
	}
}

func TestReportPts(t *testing.T) {
	tests := []struct {
		d    float64
		want string
	}{
		{0.05, "+5.0 pts"}, {-0.0312, "−3.1 pts"}, {0.00004, "±0.0 pts"}, {-0.00004, "±0.0 pts"}, {1, "+100.0 pts"},
	}
	for _, tt := range tests {
		if got := pts(tt.d); got != tt.want {
			t.Errorf("pts(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// The headline's success rates are over the sessions of known outcome, as
// the analyzer's are; the replan rate is over every ended session. The left
// out sessions are counted and shown.
func TestReportHeadlineUnknownOutcome(t *testing.T) {
	row := func(sessions, unknown, firstTry, replanned, successes int64) metrics.ReplansRow {
		r := metrics.ReplansRow{Sessions: sessions, UnknownOutcome: unknown, FirstTrySuccesses: firstTry, Replanned: replanned, Successes: successes}
		r.FirstTrySuccessRate, r.FirstTrySuccessRateCI = metrics.Rate(firstTry, sessions-unknown), metrics.Wilson(firstTry, sessions-unknown, metrics.Z95)
		r.SuccessRate, r.SuccessRateCI = metrics.Rate(successes, sessions-unknown), metrics.Wilson(successes, sessions-unknown, metrics.Z95)
		r.ReplanRate, r.ReplanRateCI = metrics.Rate(replanned, sessions), metrics.Wilson(replanned, sessions, metrics.Z95)
		return r
	}
	h := newHeadline(row(100, 20, 40, 30, 60), row(50, 0, 10, 10, 25), "24h", nil)
	if h.Sessions.UnknownCurrent != 20 || h.Sessions.UnknownPrevious != 0 {
		t.Fatalf("sessions = %+v, want 20 and 0 of unknown outcome", h.Sessions)
	}
	want := map[string][2]int64{"first_try_success": {40, 80}, "replan": {30, 100}, "success": {60, 80}}
	for _, m := range h.Metrics {
		w := want[m.Metric]
		if m.Current.Count != w[0] || m.Current.Sessions != w[1] {
			t.Errorf("%s current = %d of %d, want %d of %d", m.Metric, m.Current.Count, m.Current.Sessions, w[0], w[1])
		}
		wantUnknown := int64(20)
		if m.Metric == "replan" {
			wantUnknown = 0
		}
		if m.Current.UnknownOutcome != wantUnknown {
			t.Errorf("%s current unknown_outcome = %d, want %d", m.Metric, m.Current.UnknownOutcome, wantUnknown)
		}
		if got, w := *m.ChangeCI, *metrics.NewcombeDiff(m.Current.Count, m.Current.Sessions, m.Previous.Count, m.Previous.Sessions, metrics.Z95); got != w {
			t.Errorf("%s change CI = %+v, want %+v", m.Metric, got, w)
		}
	}
	if got, want := propText(h.Metrics[2].Current), "75.0% (60 of 80; 20 of unknown outcome left out)"; got != want {
		t.Errorf("propText(success) = %q, want %q", got, want)
	}
	all := newHeadline(row(5, 5, 0, 1, 0), row(0, 0, 0, 0, 0), "24h", nil)
	if got, want := all.Metrics[2].Summary, "Success: no ended session of known outcome in the last 24h"; got != want {
		t.Errorf("summary with every outcome unknown = %q, want %q", got, want)
	}
}
