package agentsim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

func runTruth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agentsim truth", fmt.Sprintf(`Usage: %s [-scenario file] [-json]

Prints the ground truth a scenario implies, per task type: its share of the
tasks, the best tool and its success probability, the hints the model writes
(with each tool's success probability in the type), the systematic wrong
hints an analyzer should learn to avoid (hinted with probability ≥ %.2f and
succeeding at least %.2f less often than the best tool), and the best tool
as the hint to prefer. Validates the scenario file on the way.
`, cli.Cmd(ctx, "agentsim truth"), sim.SystematicHint, sim.WrongMargin), stderr)
	file := fs.String("scenario", "", scenarioHelp(ctx))
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlags(ctx, fs, args); err != nil {
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
	return tr.WriteTable(stdout)
}
