package bench

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Point is one N of a curve run (-events N1,N2,…): the figures of the
// phases whose cost grows with the database, each from its own process.
// A phase that did not run is zero.
type Point struct {
	Events int `json:"events"`
	// The ingester from an empty database through a backlog of N (ingest)
	// and while N are published (concurrent: steady state).
	Ingest     Leg `json:"ingest"`
	Concurrent Leg `json:"concurrent"`
	// A first, full export of the database of N events.
	Export Leg `json:"export"`
}

// Leg is one phase's figures at one N.
type Leg struct {
	Seconds    float64 `json:"seconds"`
	PerSec     float64 `json:"events_per_s"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	OtherCPU   float64 `json:"other_cpu_cores"`
	// CPUPerEvent is the phase's CPU an event in µs (ingest and
	// concurrent; 0 for export).
	CPUPerEvent float64 `json:"cpu_us_per_event,omitempty"`
	// VsFirst is PerSec over the same phase's at the curve's first N.
	VsFirst float64 `json:"vs_first,omitempty"`
}

// curve gathers the points of the sizes from results (nil for a run of
// one N).
func curve(results []Result, sizes []int) []Point {
	if len(sizes) == 0 {
		return nil
	}
	pts := make([]Point, len(sizes))
	for i, n := range sizes {
		pts[i].Events = n
		for _, r := range results {
			if r.Events != int64(n) {
				continue
			}
			l := Leg{Seconds: r.Seconds, PerSec: r.PerSec, PeakRSSMiB: r.PeakRSSMiB, OtherCPU: r.OtherCPU}
			if b, ok := breakdownOf(r); ok {
				l.CPUPerEvent = b.PerEvent
			}
			switch r.Phase {
			case "ingest":
				pts[i].Ingest = l
			case "concurrent":
				pts[i].Concurrent = l
			case "export":
				pts[i].Export = l
			}
		}
	}
	for i := range pts {
		for _, leg := range []func(*Point) *Leg{
			func(p *Point) *Leg { return &p.Ingest },
			func(p *Point) *Leg { return &p.Concurrent },
			func(p *Point) *Leg { return &p.Export },
		} {
			if first := leg(&pts[0]).PerSec; first > 0 {
				leg(&pts[i]).VsFirst = leg(&pts[i]).PerSec / first
			}
		}
	}
	return pts
}

// writeCurve prints the curve: one line per N.
func writeCurve(w io.Writer, pts []Point) {
	if len(pts) == 0 {
		return
	}
	fmt.Fprintf(w, "\ncurve: the same phases at each N, each in its own process (vs first: the rate over the rate at %s)\n", thousands(int64(pts[0].Events)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "events\tingest ev/s\tvs first\tCPU µs/ev\tRSS MiB\tothers\tconcurrent ev/s\tvs first\tCPU µs/ev\tRSS MiB\tothers\texport s\tRSS MiB\tothers\t")
	cell := func(l Leg) string {
		if l.Seconds == 0 {
			return "-\t-\t-\t-\t-"
		}
		return fmt.Sprintf("%s\t%.2f\t%.1f\t%.0f\t%.2f", thousands(int64(math.Round(l.PerSec))), l.VsFirst, l.CPUPerEvent, l.PeakRSSMiB, l.OtherCPU)
	}
	for _, p := range pts {
		ex := "-\t-\t-"
		if p.Export.Seconds > 0 {
			ex = fmt.Sprintf("%.1f\t%.0f\t%.2f", p.Export.Seconds, p.Export.PeakRSSMiB, p.Export.OtherCPU)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", thousands(int64(p.Events)), cell(p.Ingest), cell(p.Concurrent), ex)
	}
	tw.Flush()
	// The target: the rate at the largest N within curveTolerance of the
	// rate at the first.
	last := pts[len(pts)-1]
	for _, c := range []struct {
		name string
		leg  Leg
	}{{"ingest", last.Ingest}, {"concurrent", last.Concurrent}} {
		if c.leg.VsFirst == 0 || len(pts) < 2 {
			continue
		}
		verdict := "meets it"
		if c.leg.VsFirst < 1-curveTolerance {
			verdict = "BELOW it"
		}
		fmt.Fprintf(w, "  %s at %s: %.2f× its rate at %s; target within %.0f%%: %s\n", c.name, thousands(int64(last.Events)),
			c.leg.VsFirst, thousands(int64(pts[0].Events)), 100*curveTolerance, verdict)
	}
}

// curveTolerance: the rate at the curve's largest N may be this much below
// its rate at the first.
const curveTolerance = 0.15
