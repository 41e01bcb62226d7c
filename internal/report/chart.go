package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/metrics"
)

// The charts are inline SVG written here, so that the page needs no script
// and no network. Colours come from CSS classes (report.css), so that the
// charts follow the light and dark themes and print in light colours. Every
// mark carries a <title> (a tooltip, and text for screen readers), and the
// same numbers are in the tables next to each chart.

// svgBuf collects SVG markup.
type svgBuf struct{ strings.Builder }

func (s *svgBuf) f(format string, args ...any) { fmt.Fprintf(s, format, args...) }

func (s *svgBuf) html() template.HTML { return template.HTML(s.String()) } // built from escaped text only

var esc = html.EscapeString

// A series of the evolution curve.
type series struct {
	key, label string
	rate       func(metrics.TrendRow) *float64
	ci         func(metrics.TrendRow) *metrics.Interval // drawn as a band; nil: none
	marker     string                                   // circle, square, diamond or none
}

var trendSeries = []series{
	{"first", "First-try success", func(t metrics.TrendRow) *float64 { return t.FirstTrySuccessRate },
		func(t metrics.TrendRow) *metrics.Interval { return t.FirstTrySuccessRateCI }, "circle"},
	{"success", "Success", func(t metrics.TrendRow) *float64 { return t.SuccessRate }, nil, "diamond"},
	{"replan", "Replan rate", func(t metrics.TrendRow) *float64 { return t.ReplanRate }, nil, "square"},
	{"failure", "Tool failure rate", func(t metrics.TrendRow) *float64 { return t.ToolFailureRate }, nil, "none"},
}

// trendChart draws the evolution curve: the rates per period on a 0–100%
// scale (first-try success with its 95% band), the periods of the current
// window shaded, rule set changes marked, and sessions per period as bars
// underneath.
func (r *Report) trendChart() template.HTML {
	const (
		w, h          = 760.0, 300.0
		left, right   = 44.0, 14.0
		top, plotBot  = 22.0, 212.0
		barTop, barBt = 244.0, 278.0
	)
	rows := r.Trend
	n := len(rows)
	if n == 0 {
		return ""
	}
	band := (w - left - right) / float64(n)
	x := func(i int) float64 { return left + band*(float64(i)+0.5) }
	y := func(v float64) float64 { return plotBot - (plotBot-top)*v }
	var s svgBuf
	s.f(`<svg class="chart trend" viewBox="0 0 %g %g" role="img" aria-labelledby="trend-title trend-desc">`, w, h)
	s.f(`<title id="trend-title">Evolution curve per %s</title>`, esc(r.Settings.Every))
	s.f(`<desc id="trend-desc">First-try success, success, replan and tool failure rates per %s from %s to %s; the table below lists the values.</desc>`,
		esc(r.Settings.Every), esc(rows[0].Period), esc(rows[n-1].Period))

	// The current window, shaded.
	for i, t := range rows {
		if r.periodInWindow(t.Period) {
			s.f(`<rect class="window" x="%.1f" y="%g" width="%.1f" height="%g"><title>in the report window</title></rect>`,
				left+band*float64(i), top-14, band, barBt-top+14)
		}
	}
	// Grid and axis labels.
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
		s.f(`<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/>`, left, w-right, y(v), y(v))
		s.f(`<text class="axis" x="%g" y="%.1f" text-anchor="end" dominant-baseline="middle">%d%%</text>`, left-6, y(v), int(100*v))
	}
	every := max(1, int(math.Ceil(float64(n)/10)))
	for i, t := range rows {
		if i%every == 0 || i == n-1 {
			s.f(`<text class="axis" x="%.1f" y="%g" text-anchor="middle">%s</text>`, x(i), barBt+18, esc(shortDate(t.Period)))
		}
	}
	// Rule set changes: a dashed line before the first period that loaded a
	// rule set the period before did not.
	for i := 1; i < n; i++ {
		var added []string
		for _, rs := range rows[i].Rulesets {
			if !slices.Contains(rows[i-1].Rulesets, rs) {
				added = append(added, rs)
			}
		}
		if len(added) == 0 || (len(rows[i-1].Rulesets) == 0 && rows[i-1].Sessions == 0 && rows[i-1].OpenSessions == 0) {
			continue
		}
		xl := left + band*float64(i)
		s.f(`<line class="ruleset" x1="%.1f" x2="%.1f" y1="%g" y2="%g"><title>rule set %s first loaded</title></line>`,
			xl, xl, top-14, plotBot, esc(strings.Join(added, ", ")))
		s.f(`<text class="ruleset-label" x="%.1f" y="%g">%s</text>`, xl+3, top-4, esc(added[0]))
	}
	// The first-try band, then the lines and their markers.
	for _, se := range trendSeries {
		if se.ci == nil {
			continue
		}
		for _, run := range runs(rows, func(t metrics.TrendRow) bool { return se.ci(t) != nil }) {
			var pts []string
			for _, i := range run {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(se.ci(rows[i]).Hi)))
			}
			for j := len(run) - 1; j >= 0; j-- {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(run[j]), y(se.ci(rows[run[j]]).Lo)))
			}
			if len(run) == 1 { // a lone period: a bar of the interval's width
				i := run[0]
				s.f(`<rect class="band s-%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, se.key, x(i)-band/6, y(se.ci(rows[i]).Hi), band/3,
					math.Max(1, y(se.ci(rows[i]).Lo)-y(se.ci(rows[i]).Hi)))
				continue
			}
			s.f(`<path class="band s-%s" d="M%sZ"/>`, se.key, strings.Join(pts, "L"))
		}
	}
	for _, se := range trendSeries {
		for _, run := range runs(rows, func(t metrics.TrendRow) bool { return se.rate(t) != nil }) {
			if len(run) < 2 {
				continue
			}
			var d []string
			for _, i := range run {
				d = append(d, fmt.Sprintf("%.1f,%.1f", x(i), y(*se.rate(rows[i]))))
			}
			s.f(`<path class="line s-%s" d="M%s"/>`, se.key, strings.Join(d, "L"))
		}
		for i, t := range rows {
			v := se.rate(t)
			if v == nil {
				continue
			}
			tip := fmt.Sprintf("%s, %s: %s", se.label, trendLabel(t.Period, r.Settings.Every), pct(v))
			if se.ci != nil && se.ci(t) != nil {
				tip += " (95% CI " + pctCI(se.ci(t)) + ")"
			}
			marker(&s, se.marker, se.key, x(i), y(*v), tip)
		}
	}
	// Sessions per period.
	var most int64
	for _, t := range rows {
		most = max(most, t.Sessions+t.OpenSessions)
	}
	s.f(`<text class="axis" x="%g" y="%g" text-anchor="end" dominant-baseline="middle">sessions</text>`, left-6, (barTop+barBt)/2)
	for i, t := range rows {
		if most == 0 {
			break
		}
		bh := (barBt - barTop) * float64(t.Sessions) / float64(most)
		oh := (barBt - barTop) * float64(t.OpenSessions) / float64(most)
		bw := math.Max(2, band*0.6)
		s.f(`<rect class="bar sessions" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %d ended sessions, %d open</title></rect>`,
			x(i)-bw/2, barBt-bh, bw, math.Max(bh, 0.5), esc(trendLabel(t.Period, r.Settings.Every)), t.Sessions, t.OpenSessions)
		if t.OpenSessions > 0 {
			s.f(`<rect class="bar open" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, x(i)-bw/2, barBt-bh-oh, bw, oh)
		}
		if band >= 28 && t.Sessions+t.OpenSessions > 0 {
			s.f(`<text class="count" x="%.1f" y="%.1f" text-anchor="middle">%d</text>`, x(i), barBt-bh-oh-3, t.Sessions)
		}
	}
	s.f(`<line class="axis-line" x1="%g" x2="%g" y1="%g" y2="%g"/>`, left, w-right, barBt, barBt)
	s.f(`</svg>`)
	return s.html()
}

// runs splits the indexes of rows into runs of consecutive rows that have
// a value.
func runs(rows []metrics.TrendRow, has func(metrics.TrendRow) bool) [][]int {
	var out [][]int
	var cur []int
	for i, t := range rows {
		if has(t) {
			cur = append(cur, i)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func marker(s *svgBuf, kind, key string, cx, cy float64, tip string) {
	switch kind {
	case "circle":
		s.f(`<circle class="mark s-%s" cx="%.1f" cy="%.1f" r="3.5"><title>%s</title></circle>`, key, cx, cy, esc(tip))
	case "square":
		s.f(`<rect class="mark s-%s" x="%.1f" y="%.1f" width="6" height="6"><title>%s</title></rect>`, key, cx-3, cy-3, esc(tip))
	case "diamond":
		s.f(`<path class="mark s-%s" d="M%.1f,%.1fl4,4l-4,4l-4,-4Z"><title>%s</title></path>`, key, cx, cy-4, esc(tip))
	default: // an invisible target that still carries the tooltip
		s.f(`<circle class="hit" cx="%.1f" cy="%.1f" r="4"><title>%s</title></circle>`, cx, cy, esc(tip))
	}
}

// periodInWindow reports whether a trend period overlaps the report window.
func (r *Report) periodInWindow(period string) bool {
	start, err := time.Parse(time.DateOnly, period)
	if err != nil {
		return false
	}
	end := start.AddDate(0, 0, 1)
	if r.Settings.Every == metrics.EveryWeek {
		end = start.AddDate(0, 0, 7)
	}
	return start.Before(r.Window.Until) && end.After(r.Window.Since)
}

// shortDate writes 2025-06-09 as Jun 9.
func shortDate(period string) string {
	t, err := time.Parse(time.DateOnly, period)
	if err != nil {
		return period
	}
	return t.Format("Jan 2")
}

// sparkline draws one rate over the trend periods, scaled to its own range
// (at least 10 points high) so that a change shows; the trend chart has the
// 0–100% scale.
func (r *Report) sparkline(metric string) template.HTML {
	var se series
	for _, s := range trendSeries {
		if s.key == metricSeries[metric] {
			se = s
		}
	}
	n := len(r.Trend)
	if se.rate == nil || n == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range r.Trend {
		if v := se.rate(t); v != nil {
			lo, hi = math.Min(lo, *v), math.Max(hi, *v)
		}
	}
	if math.IsInf(lo, 0) {
		return ""
	}
	if span := hi - lo; span < 0.1 {
		mid := (lo + hi) / 2
		lo, hi = math.Max(0, mid-0.05), math.Min(1, mid+0.05)
		if hi-lo < 0.1 { // at an edge of 0–100%
			lo, hi = math.Min(lo, 1-0.1), math.Max(hi, 0.1)
		}
	}
	const w, h, pad = 160.0, 36.0, 4.0
	x := func(i int) float64 {
		if n == 1 {
			return w / 2
		}
		return pad + (w-2*pad)*float64(i)/float64(n-1)
	}
	y := func(v float64) float64 { return h - pad - (h-2*pad)*(v-lo)/(hi-lo) }
	var s svgBuf
	s.f(`<svg class="spark" viewBox="0 0 %g %g" aria-hidden="true" preserveAspectRatio="none">`, w, h)
	for _, run := range runs(r.Trend, func(t metrics.TrendRow) bool { return se.rate(t) != nil }) {
		var d []string
		for _, i := range run {
			d = append(d, fmt.Sprintf("%.1f,%.1f", x(i), y(*se.rate(r.Trend[i]))))
		}
		if len(run) > 1 {
			s.f(`<path class="line s-%s" d="M%s"/>`, se.key, strings.Join(d, "L"))
		}
		// The last value as a dot: a round-capped stroke of no length,
		// which stays round however the line is stretched.
		last := run[len(run)-1]
		s.f(`<path class="end s-%s" d="M%.1f,%.1fh0"/>`, se.key, x(last), y(*se.rate(r.Trend[last])))
	}
	s.f(`</svg>`)
	return s.html()
}

// sessionSpark draws the ended sessions per trend period as bars.
func (r *Report) sessionSpark() template.HTML {
	n := len(r.Trend)
	var most int64
	for _, t := range r.Trend {
		most = max(most, t.Sessions)
	}
	if n == 0 || most == 0 {
		return ""
	}
	const w, h = 160.0, 36.0
	band := w / float64(n)
	var s svgBuf
	s.f(`<svg class="spark" viewBox="0 0 %g %g" aria-hidden="true" preserveAspectRatio="none">`, w, h)
	for i, t := range r.Trend {
		bh := (h - 2) * float64(t.Sessions) / float64(most)
		cls := "bar sessions"
		if r.periodInWindow(t.Period) {
			cls = "bar current"
		}
		s.f(`<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, cls, band*float64(i)+band*0.15, h-bh, band*0.7, math.Max(bh, 0.5))
	}
	s.f(`</svg>`)
	return s.html()
}

// metricSeries maps a headline metric to its trend series.
var metricSeries = map[string]string{"first_try_success": "first", "success": "success", "replan": "replan"}

// effectScale is the half-width of the effect charts' shared x scale, in
// rate units: the widest interval, rounded up to 5 points, at least 10.
func (r *Report) effectScale() float64 {
	m := 0.1
	for _, e := range r.Effects {
		if ci := effectOf(e, r.Settings.Metric).DifferenceCI; ci != nil {
			m = math.Max(m, math.Max(math.Abs(ci.Lo), math.Abs(ci.Hi)))
		}
	}
	return math.Min(1, math.Ceil(m*20)/20) // to the next 5 points
}

// effectBar draws one effect's difference and its 95% interval against 0,
// with the nil margin shaded: a row of a forest plot.
func (r *Report) effectBar(e metrics.EffectRow) template.HTML {
	m := effectOf(e, r.Settings.Metric)
	scale := r.effectScale()
	const w, h = 180.0, 26.0
	x := func(v float64) float64 { return w/2 + (w/2-8)*v/scale }
	var s svgBuf
	s.f(`<svg class="chart cell" width="%g" height="%g" viewBox="0 0 %[1]g %[2]g" role="img" aria-label="%s">`, w, h, esc(fmt.Sprintf("difference %s, 95%% CI %s", ptsOf(m.Difference), ptsCI(m.DifferenceCI))))
	nm := r.Settings.NilMargin
	s.f(`<rect class="nil-band" x="%.1f" y="3" width="%.1f" height="%g"/>`, x(-nm), x(nm)-x(-nm), h-6)
	s.f(`<line class="zero" x1="%.1f" x2="%.1f" y1="1" y2="%g"/>`, x(0), x(0), h-1)
	if m.Difference != nil && m.DifferenceCI != nil {
		cls := "v-" + e.Verdict
		s.f(`<line class="ci %s" x1="%.1f" x2="%.1f" y1="%g" y2="%g"/>`, cls, x(m.DifferenceCI.Lo), x(m.DifferenceCI.Hi), h/2, h/2)
		s.f(`<rect class="dot %s" x="%.1f" y="%g" width="8" height="8"><title>%s</title></rect>`, cls, x(*m.Difference)-4, h/2-4,
			esc(fmt.Sprintf("%s %s: %s, 95%% CI %s (%s)", e.Kind, e.ID, ptsOf(m.Difference), ptsCI(m.DifferenceCI), verdictText(e.Verdict))))
	} else {
		s.f(`<text class="axis" x="%g" y="%g" text-anchor="middle" dominant-baseline="middle">no comparable sessions</text>`, w/2, h/2)
	}
	s.f(`</svg>`)
	return s.html()
}

// hintBar draws a hint's failure rate with its 95% interval, and the
// failure rate of the type's other calls as a tick, on 0–100%.
func hintBar(h metrics.HintRow) template.HTML {
	const w, ht = 160.0, 26.0
	x := func(v float64) float64 { return 4 + (w-8)*v }
	var s svgBuf
	s.f(`<svg class="chart cell" width="%g" height="%g" viewBox="0 0 %[1]g %[2]g" role="img" aria-label="%s">`, w, ht,
		esc(fmt.Sprintf("failure rate %s, 95%% CI %s; other calls %s", pct(h.FailureRate), pctCI(h.FailureCI), pct(h.OtherFailureRate))))
	s.f(`<rect class="track" x="%g" y="%g" width="%g" height="6" rx="3"/>`, x(0), ht/2-3, x(1)-x(0))
	if h.OtherFailureRate != nil {
		bx := x(*h.OtherFailureRate)
		s.f(`<rect class="baseline" x="%.1f" y="3" width="3" height="%g"><title>%s</title></rect>`, bx-1.5, ht-6,
			esc("the type's other calls fail "+pct(h.OtherFailureRate)))
	}
	if h.FailureRate != nil && h.FailureCI != nil {
		s.f(`<rect class="ci-bar" x="%.1f" y="%g" width="%.1f" height="6" rx="3"/>`, x(h.FailureCI.Lo), ht/2-3, math.Max(2, x(h.FailureCI.Hi)-x(h.FailureCI.Lo)))
		s.f(`<circle class="dot bad" cx="%.1f" cy="%g" r="5"><title>%s</title></circle>`, x(*h.FailureRate), ht/2,
			esc(fmt.Sprintf("%s fails %s (95%% CI %s)", str(h.Hint), pct(h.FailureRate), pctCI(h.FailureCI))))
	}
	s.f(`</svg>`)
	return s.html()
}

// toolColours assigns each tool a colour class, by total calls over every
// task type, so that a tool has the same colour in every bar.
func (r *Report) toolColours() map[string]int {
	total := map[string]int64{}
	for _, m := range r.Mappings {
		for _, t := range m.Tools {
			total[t.Tool] += t.Calls
		}
	}
	tools := make([]string, 0, len(total))
	for t := range total {
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b string) int {
		if total[a] != total[b] {
			if total[a] > total[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	out := make(map[string]int, len(tools))
	for i, t := range tools {
		out[t] = min(i, paletteSize) // paletteSize: "other"
	}
	return out
}

// paletteSize is the number of distinct tool colours (report.css t0 … t6);
// further tools share the "other" colour t7.
const paletteSize = 7

// mappingBar draws a task type's calls as one bar split by tool.
func mappingBar(m metrics.MappingRow, colours map[string]int) template.HTML {
	const w, h = 240.0, 24.0
	var s svgBuf
	s.f(`<svg class="chart cell" width="%g" height="%g" viewBox="0 0 %[1]g %[2]g" role="img" aria-label="%s">`, w, h, esc("calls by tool: "+toolsText(m)))
	xPos := 0.0
	for _, t := range m.Tools {
		if t.Share == nil {
			continue
		}
		bw := w * *t.Share
		c := colours[t.Tool]
		s.f(`<rect class="t%d" x="%.1f" y="2" width="%.1f" height="%g"><title>%s</title></rect>`, c, xPos, math.Max(bw-1, 0.5), h-4,
			esc(fmt.Sprintf("%s: %d calls (%s), %s succeeded", t.Tool, t.Calls, pct(t.Share), pct(t.SuccessRate))))
		if bw >= 9+6.5*float64(len(t.Tool)) { // the name fits
			s.f(`<text class="seg t%d" x="%.1f" y="%g" dominant-baseline="middle">%s</text>`, c, xPos+5, h/2, esc(t.Tool))
		}
		xPos += bw
	}
	s.f(`</svg>`)
	return s.html()
}
