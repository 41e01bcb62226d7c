package sim

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the truth as a table, one row per task type, with a
// note on how to read the hints.
func (tr Truth) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario %s\n\n", tr.Scenario)
	fmt.Fprintln(tw, "task type\tshare\tbest tool\tsuccess\tmodel's hints (probability → success)\tavoid\tprefer")
	for _, t := range tr.Types {
		var hints []string
		var other, ghost float64
		for _, h := range t.Hints {
			switch {
			case !h.Exists:
				ghost += h.Probability
			case h.Probability < SystematicHint/2:
				other += h.Probability
			default:
				hints = append(hints, fmt.Sprintf("%s %.2f→%.2f", h.Tool, h.Probability, h.Success))
			}
		}
		for _, x := range []struct {
			what string
			p    float64
		}{{"other tools", other}, {"no such tool", ghost}, {"none", t.NoHint}} {
			if x.p > 0 {
				hints = append(hints, fmt.Sprintf("%s %.2f", x.what, x.p))
			}
		}
		avoid := strings.Join(t.Avoid, ", ")
		if avoid == "" {
			avoid = "-"
		}
		prefer := t.Prefer
		if prefer == "" {
			prefer = "-"
		}
		fmt.Fprintf(tw, "%s\t%.0f%%\t%s\t%.2f\t%s\t%s\t%s\n", t.TaskType, 100*t.Share, t.BestTool, t.BestSuccess, strings.Join(hints, ", "), avoid, prefer)
	}
	fmt.Fprintf(tw, "\nHints are planned hints before any rule: probability → the tool's success probability in the type.\n"+
		"\"other tools\" sums the rare ones (random hints), \"no such tool\" the hallucinated ones (stripped by the planner);\n"+
		"agentsim truth -json lists each.\n")
	return tw.Flush()
}
