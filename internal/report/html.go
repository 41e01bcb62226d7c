package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"

	"github.com/evosignal/evosignal/internal/metrics"
)

// The page is one file: the CSS is inlined, the charts are inline SVG, and
// there is no script, no font and no image to fetch.

//go:embed report.html.tmpl
var pageTemplate string

//go:embed report.css
var pageCSS string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":        pct,
	"pctCI":      pctCI,
	"pts":        ptsOf,
	"ptsCI":      ptsCI,
	"ratio":      ratio,
	"pValue":     pValue,
	"str":        str,
	"stamp":      stamp,
	"num2":       num2,
	"trendLabel": trendLabel,
	"rulesets":   rulesetsText,
	"windowTop":  windowTop,
	"evidence":   evidenceLine,
	"retireWhy":  retireWhy,
	"hintBar":    hintBar,
	"effect":     effectOf,
	"verdict":    verdictText,
	"verdictClass": func(v string) string {
		switch v {
		case metrics.EffectHelpful:
			return "good"
		case metrics.EffectHarmful:
			return "bad"
		case metrics.EffectNil:
			return "warn"
		}
		return "neutral"
	},
	"css":          func() template.CSS { return template.CSS(pageCSS) }, // a constant file of this package
	"plural":       plural,
	"outcomeClass": outcomeClassText,
	"segment":      segmentText,
	"state":        stateText,
	"num0":         num0,
	"meanCI":       meanCI,
	"meanCI2":      meanCI2,
	"seconds":      seconds,
	"rulesetName":  rulesetName,
	"byOutcome":    byOutcome,
	"list":         func(xs ...string) []string { return xs },
	"randomised":   randomisedOf,
	"assignment":   assignmentText,
	"len64":        func(n int64) int { return int(n) },
	"mul100":       func(v float64) float64 { return 100 * v },
}).Parse(pageTemplate))

// WriteHTML writes the report as one self-contained HTML page.
func WriteHTML(w io.Writer, r *Report) error {
	return page.Execute(w, view{r, r.toolColours()})
}

// view is what the template sees: the report and what the page derives
// from it for display.
type view struct {
	*Report
	colours map[string]int
}

// Title is the page's title.
func (v view) Title() string {
	return fmt.Sprintf("evosignal report · %s to %s", v.Window.Length, stamp(v.Window.Until))
}

// Lead is the main headline: the first-try success since the start of
// the range and against the previous window (Headline.Story), or why there
// is none.
func (v view) Lead() string {
	if v.Headline.Sessions.Current == 0 {
		return v.Headline.Text
	}
	return v.Headline.Story(0)
}

// SubLead is the headline's second line.
func (v view) SubLead() string {
	if v.Headline.Sessions.Current == 0 || len(v.Headline.Metrics) < 2 {
		return ""
	}
	return v.Headline.Story(1)
}

func (v view) WindowLine() string { return v.windowLine() }
func (v view) CurveSince() string { return v.curveSince() }
func (v view) FilterLine() string { return v.filterLine() }
func (v view) Glance() []string   { return v.glance() }
func (v view) RulesFrom() string  { return v.rulesFrom() }

// TrendChart, Spark, SessionSpark, EffectBar and MapBar draw the charts
// (chart.go).
func (v view) TrendChart() template.HTML                   { return v.trendChart() }
func (v view) Spark(metric string) template.HTML           { return v.sparkline(metric) }
func (v view) SessionSpark() template.HTML                 { return v.sessionSpark() }
func (v view) EffectBar(e metrics.EffectRow) template.HTML { return v.effectBar(e) }
func (v view) MapBar(m metrics.MappingRow) template.HTML   { return mappingBar(m, v.colours) }

// DeltaClass is good, bad or neutral for a compared rate: good or bad
// only for a significant change.
func (v view) DeltaClass(c Compared) string {
	if c.Assessment != Significant || c.Direction == nil {
		return "neutral"
	}
	switch *c.Direction {
	case "better":
		return "good"
	case "worse":
		return "bad"
	}
	return "neutral"
}

// Arrow points the way a compared rate moved.
func (v view) Arrow(c Compared) string {
	switch {
	case c.Change == nil:
		return ""
	case *c.Change > 0.0005:
		return "▲"
	case *c.Change < -0.0005:
		return "▼"
	}
	return "■"
}

// Weak reports whether a hint's evidence is weak (not significant).
func (v view) Weak(h metrics.HintRow) bool { return v.weak(h) }

// EffectScale is the half-width of the effect charts' scale, in points.
func (v view) EffectScale() string { return fmt.Sprintf("±%.0f pts", 100*v.effectScale()) }

// Legend lists the tools of the mapping bars with their colour classes.
func (v view) Legend() []legendItem {
	items := make([]legendItem, 0, len(v.colours))
	seen := map[int]bool{}
	for tool, c := range v.colours {
		if c == paletteSize {
			if !seen[c] {
				items = append(items, legendItem{"other tools", c})
			}
			seen[c] = true
			continue
		}
		items = append(items, legendItem{tool, c})
	}
	// By colour: the most used tool first.
	for i := 1; i < len(items); i++ {
		for j := i; j > 0 && items[j].Colour < items[j-1].Colour; j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
	return items
}

type legendItem struct {
	Tool   string
	Colour int
}
