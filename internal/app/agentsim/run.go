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
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

// usage is the help of agentsim, naming its commands as the user runs them
// under ctx.
func usage(ctx context.Context) string {
	return fmt.Sprintf(usageFormat, cli.Cmd(ctx, "agentsim"), cli.Cmd(ctx, "agentsim demo"),
		cli.Cmd(ctx, "agentsim truth"), cli.Cmd(ctx, "agentsim scenario"))
}

// usageFormat is usage with the command lines as %[1]s (agentsim), %[2]s
// (demo), %[3]s (truth) and %[4]s (scenario).
const usageFormat = `Usage:
  %[1]s [flags]
      simulate a fleet once (%[1]s -h for the flags)
  %[2]s [flags]
      the closed loop over several generations: simulate → ingest → analyze
      rules → publish → simulate again; prints the evolution curve
  %[3]s [flags]
      print the ground truth a scenario implies (best tool per task type, the
      model's systematic wrong hints: what learned rules should fix)
  %[4]s
      print the default scenario file, a starting point for your own

agentsim drives the reference planner (agent/planner) with a simulated model
instead of an LLM. A scenario file (JSON) sets the task types, the tools and
their success probability per task type, how often the model hints the wrong
tool or one that does not exist, how likely it is to replan after failures,
and how many agents, sessions and concurrent sessions run. Runs are seeded and
reproducible: the same seed gives the same events, ids and times included
(seeded ids, a simulated clock). docs/agentsim.md documents it all.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "demo":
			return runDemo(ctx, args[1:], stdout, stderr)
		case "truth":
			return runTruth(ctx, args[1:], stdout, stderr)
		case "scenario":
			return runScenario(ctx, args[1:], stdout, stderr)
		case "help":
			fmt.Fprint(stdout, usage(ctx))
			return nil
		case "run":
			args = args[1:]
		}
	}
	return runSimulate(ctx, args, stdout, stderr)
}

// newFlagSet returns a flag set whose -h prints head, then the flags.
// name is the command's own name ("agentsim demo"), the prefix of its
// errors; head names it as the user runs it (cli.Cmd).
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

// parseFlags parses args; it returns flag.ErrHelp for -h, cli.ErrUsage for
// bad flags or stray arguments.
func parseFlags(ctx context.Context, fs *flag.FlagSet, args []string) error {
	if err := cli.Parse(ctx, fs, args, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return flag.ErrHelp
		}
		return cli.ErrUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return cli.ErrUsage
	}
	return nil
}

// usageError reports err (every problem of the flags) and returns
// cli.ErrUsage.
func usageError(fs *flag.FlagSet, err error) error {
	fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
	return cli.ErrUsage
}

// helpOK turns flag.ErrHelp into success.
func helpOK(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// fleetOptions are the flags agentsim and agentsim demo share (each with
// its own help): the scenario file, the seed, the sessions to run and how
// many at once (0: the scenario's), and the log level.
type fleetOptions struct {
	scenario, logLevel    string
	seed                  uint64
	sessions, concurrency int
}

// problems reports what is wrong with the fleet flags, every problem.
func (o *fleetOptions) problems() []error {
	var errs []error
	if o.sessions < 0 {
		errs = append(errs, fmt.Errorf("-sessions %d is negative", o.sessions))
	}
	if o.concurrency < 0 {
		errs = append(errs, fmt.Errorf("-concurrency %d is negative", o.concurrency))
	}
	return errs
}

// load returns the logger of -log-level, writing to stderr, and the
// scenario of -scenario.
func (o *fleetOptions) load(stderr io.Writer) (*slog.Logger, *sim.Scenario, error) {
	log, err := newLogger(stderr, o.logLevel)
	if err != nil {
		return nil, nil, err
	}
	sc, err := sim.Load(o.scenario)
	if err != nil {
		return nil, nil, err
	}
	return log, sc, nil
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

// scenarioHelp is the help of the -scenario flag shared by the commands.
func scenarioHelp(ctx context.Context) string {
	return "scenario `file` (JSON); default: the embedded default scenario (" + cli.Cmd(ctx, "agentsim scenario") + " prints it)"
}

func runScenario(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agentsim scenario", fmt.Sprintf(`Usage: %s

Prints the embedded default scenario file. Save it, edit it, and pass it
with -scenario; docs/agentsim.md documents every member.
`, cli.Cmd(ctx, "agentsim scenario")), stderr)
	if err := parseFlags(ctx, fs, args); err != nil {
		return helpOK(err)
	}
	_, err := stdout.Write(sim.DefaultJSON())
	return err
}
