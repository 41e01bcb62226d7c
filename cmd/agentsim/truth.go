package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/evosignal/evosignal/internal/sim"
)

func runTruth(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agentsim truth", fmt.Sprintf(`Usage: agentsim truth [-scenario file] [-json]

Prints the ground truth a scenario implies, per task type: its share of the
tasks, the best tool and its success probability, the hints the model writes
(with each tool's success probability in the type), the systematic wrong
hints an analyzer should learn to avoid (hinted with probability ≥ %.2f and
succeeding at least %.2f less often than the best tool), and the best tool
as the hint to prefer. Validates the scenario file on the way.
`, sim.SystematicHint, sim.WrongMargin), stderr)
	file := fs.String("scenario", "", scenarioHelp)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	sc, err := sim.Load(*file)
	if err != nil {
		return err
	}
	tr := sc.Truth()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(tr)
	}
	return writeTruth(stdout, tr)
}

func writeTruth(w io.Writer, tr sim.Truth) error {
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
			case h.Probability < sim.SystematicHint/2:
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
