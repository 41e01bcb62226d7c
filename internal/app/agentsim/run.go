package agentsim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/sim"
)

const usage = `Usage:
  agentsim [flags]          simulate a fleet once (agentsim -h for the flags)
  agentsim demo [flags]     the closed loop over several generations: simulate → ingest →
                            analyze rules → publish → simulate again; prints the evolution curve
  agentsim truth [flags]    print the ground truth a scenario implies (best tool per task type,
                            the model's systematic wrong hints: what learned rules should fix)
  agentsim scenario         print the default scenario file, a starting point for your own

agentsim drives the reference planner (agent/planner) with a simulated model
instead of an LLM. A scenario file (JSON) sets the task types, the tools and
their success probability per task type, how often the model hints the wrong
tool or one that does not exist, how likely it is to replan after failures,
and how many agents, sessions and concurrent sessions run. Runs are seeded and
reproducible: the same seed gives the same events (ids aside), times
included (a simulated clock). docs/agentsim.md documents it all.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "demo":
			return runDemo(ctx, args[1:], stdout, stderr)
		case "truth":
			return runTruth(args[1:], stdout, stderr)
		case "scenario":
			return runScenario(args[1:], stdout, stderr)
		case "help":
			fmt.Fprint(stdout, usage)
			return nil
		case "run":
			args = args[1:]
		}
	}
	return runSimulate(ctx, args, stdout, stderr)
}

// newFlagSet returns a flag set whose -h prints head, then the flags.
func newFlagSet(name, head string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, head)
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; it returns flag.ErrHelp for -h, errUsage for bad
// flags or stray arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := cli.Parse(fs, args, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return flag.ErrHelp
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return errUsage
	}
	return nil
}

// usageError reports err (every problem of the flags) and returns errUsage.
func usageError(fs *flag.FlagSet, err error) error {
	fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
	return errUsage
}

// helpOK turns flag.ErrHelp into success.
func helpOK(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// parseStart reads -start: RFC 3339, or "now".
func parseStart(s string) (time.Time, error) {
	if strings.EqualFold(s, "now") {
		return time.Now().UTC().Truncate(time.Millisecond), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("-start %q: want an RFC 3339 time or now", s)
	}
	return t, nil
}

// scenarioFlag is the -scenario flag shared by the commands.
const scenarioHelp = "scenario `file` (JSON); default: the embedded default scenario (agentsim scenario prints it)"

func runScenario(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agentsim scenario", `Usage: agentsim scenario

Prints the embedded default scenario file. Save it, edit it, and pass it
with -scenario; docs/agentsim.md documents every member.
`, stderr)
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	_, err := stdout.Write(sim.DefaultJSON())
	return err
}
