package web

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"
)

// timeline is the session's tool calls drawn on one time axis: a lane per
// task of each plan version that had calls, a bar per call (its start to its
// end), dashed lines where a new plan version came into force and red ones
// where a depth limit was reached. The same calls are listed under their
// tasks beside it, with their hints, outcomes and durations.
type timeline struct {
	SVG   template.HTML
	Span  time.Duration
	Lanes int
}

func newTimeline(p *sessionPage) timeline {
	type lane struct {
		label string
		calls []call
	}
	var lanes []lane
	end := p.Start
	for _, v := range p.Plans {
		for _, t := range v.Tasks {
			if len(t.Calls) > 0 {
				lanes = append(lanes, lane{fmt.Sprintf("v%d · task %d", v.N, t.ID), t.Calls})
			}
		}
	}
	if len(p.Unplaced) > 0 {
		lanes = append(lanes, lane{"no task", p.Unplaced})
	}
	if len(lanes) == 0 {
		return timeline{}
	}
	for _, l := range lanes {
		for _, c := range l.calls {
			if c.Time.After(end) {
				end = c.Time
			}
		}
	}
	if p.Ended && p.EndedAt.After(end) {
		end = p.EndedAt
	}
	span := end.Sub(p.Start)
	if span <= 0 {
		span = time.Millisecond
	}
	const (
		w, left, right = 900.0, 120.0, 10.0
		laneH, top     = 18.0, 18.0
	)
	h := top + laneH*float64(len(lanes)) + 22
	x := func(d time.Duration) float64 { return left + (w-left-right)*float64(d)/float64(span) }
	esc := html.EscapeString
	var b strings.Builder
	f := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	f(`<svg class="timeline" viewBox="0 0 %g %g" role="img" aria-labelledby="timeline-title">`, w, h)
	f(`<title id="timeline-title">Tool calls over %s, a lane per task of each plan version; the list below has every call.</title>`, esc(span.Round(time.Millisecond).String()))
	for i, l := range lanes {
		y := top + laneH*float64(i)
		f(`<rect class="lane" x="%g" y="%.1f" width="%g" height="%g"/>`, left, y+1, w-left-right, laneH-2)
		f(`<text x="%g" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, left-6, y+laneH/2, esc(l.label))
		for _, c := range l.calls {
			x0 := x(c.Offset)
			cw := max(2, x(c.Offset+time.Duration(c.DurationMS)*time.Millisecond)-x0)
			cls := "ok"
			switch {
			case c.Control:
				cls = "control"
			case !c.OK:
				cls = "failed"
			}
			outcome := "ok"
			if !c.OK {
				outcome = "failed: " + c.ErrorKind
			}
			hint := "no hint"
			if c.Hint != nil {
				hint = "hint " + *c.Hint
			}
			f(`<rect class="call %s" x="%.1f" y="%.1f" width="%.1f" height="%g"><title>%s (%s), %s, %s</title></rect>`,
				cls, x0, y+3, cw, laneH-6, esc(c.Tool), esc(hint), esc(outcome), esc(millis(c.DurationMS)))
		}
	}
	bottom := top + laneH*float64(len(lanes))
	for _, v := range p.Plans[min(1, len(p.Plans)):] {
		xv := x(v.Time.Sub(p.Start))
		f(`<line class="plan-line" x1="%.1f" x2="%.1f" y1="%g" y2="%g"><title>plan version %d</title></line>`, xv, xv, top-4, bottom, v.N)
		f(`<text x="%.1f" y="%g">v%d</text>`, xv+2, top-6, v.N)
	}
	for _, d := range p.Limits {
		xd := x(d.Time.Sub(p.Start))
		f(`<line class="event-line" x1="%.1f" x2="%.1f" y1="%g" y2="%g"><title>depth limit of task %d reached (%d of %d calls)</title></line>`,
			xd, xd, top-4, bottom, d.TaskID, d.ToolCalls, d.Limit)
	}
	f(`<text x="%g" y="%g">0</text><text x="%g" y="%g" text-anchor="end">%s</text>`, left, bottom+16, w-right, bottom+16, esc(span.Round(time.Millisecond).String()))
	b.WriteString(`</svg>`)
	return timeline{SVG: template.HTML(b.String()), Span: span, Lanes: len(lanes)} // built from escaped text only
}
