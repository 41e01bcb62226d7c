// Package app is the evosignal command: one installable binary whose
// subcommands are the project's commands (internal/app/<name>), so that an
// install puts a single name into $GOBIN. cmd/evosignal runs Main; the
// commands also run on their own as cmd/<name>.
package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/evosignal/evosignal/internal/app/agentsim"
	"github.com/evosignal/evosignal/internal/app/analyze"
	"github.com/evosignal/evosignal/internal/app/bench"
	"github.com/evosignal/evosignal/internal/app/bridge"
	"github.com/evosignal/evosignal/internal/app/inferbench"
	"github.com/evosignal/evosignal/internal/app/ingest"
	"github.com/evosignal/evosignal/internal/app/validate"
	"github.com/evosignal/evosignal/internal/cli"
)

// Name is the name of the command.
const Name = "evosignal"

// A Command is one subcommand of evosignal.
type Command struct {
	Name    string
	Summary string // one line for the list of commands
	Main    cli.MainFunc
	// For is the command line a short command stands for, "agentsim demo"
	// for demo: it runs that command (whose Main is then nil), and the
	// texts of that command line name it by the short name.
	For string
}

// Commands are evosignal's subcommands, in the order the help lists them:
// the pipeline first, then the tools around it.
var Commands = []Command{
	{Name: "ingest", Summary: "move agent events from NATS JetStream (or a file) into DuckDB", Main: ingest.Main},
	{Name: "analyze", Summary: "evolution signals, learned rules, trends, exports, reports", Main: analyze.Main},
	{Name: "validate", Summary: "check events against the contract; lists every violation", Main: validate.Main},
	{Name: "bridge", Summary: "SkillLite, OpenTelemetry, Claude Code, Cursor output → events", Main: bridge.Main},
	{Name: "demo", Summary: "the closed loop, all in one process (agentsim demo)", For: "agentsim demo"},
	{Name: "agentsim", Summary: "a simulated fleet of agents: load, ground truth, the demo", Main: agentsim.Main},
	{Name: "bench", Summary: "measure the ingest pipeline: rates of its parts, peak memory", Main: bench.Main},
	{Name: "inferbench", Summary: "how well re-decisions are inferred for sessions without plans", Main: inferbench.Main},
}

func lookup(name string) (Command, bool) {
	for _, c := range Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// prog is evosignal as its commands name it in their help and hints.
func prog() cli.Prog {
	p := cli.Prog{Name: Name, Aliases: map[string]string{}}
	for _, c := range Commands {
		if c.For != "" {
			p.Aliases[c.For] = c.Name
		}
	}
	return p
}

func names() string {
	n := make([]string, len(Commands))
	for i, c := range Commands {
		n[i] = c.Name
	}
	return strings.Join(n, ", ")
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s <command> [arguments]\n\nCommands:\n", Name)
	for _, c := range Commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintf(w, `
'%[1]s help <command>' or '%[1]s <command> -h' explains a command
and its flags; '%[1]s -version' prints the build. In a clone, each
command also builds alone from cmd/<command>.
`, Name)
}

// Main runs the evosignal command line args (without the program name) and
// returns the exit status: the subcommand's, or 2 when no known command
// was given. The subcommand runs under evosignal (cli.WithProg): its help
// and hints name command lines as evosignal runs them.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx = cli.WithProg(ctx, prog())
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, cli.Version(Name))
		return 0
	case "help":
		if len(args) == 1 {
			usage(stdout)
			return 0
		}
		c, ok := lookup(args[1])
		if !ok {
			return unknown(stderr, args[1])
		}
		return run(ctx, c, append(args[2:len(args):len(args)], "-h"), stdin, stdout, stderr)
	}
	c, ok := lookup(args[0])
	if !ok {
		return unknown(stderr, args[0])
	}
	return run(ctx, c, args[1:], stdin, stdout, stderr)
}

// run runs command c, or for a short command the command line it stands
// for, with args after it.
func run(ctx context.Context, c Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if c.For == "" {
		return c.Main(ctx, args, stdin, stdout, stderr)
	}
	line := strings.Fields(c.For)
	target, _ := lookup(line[0])
	return target.Main(ctx, append(line[1:], args...), stdin, stdout, stderr)
}

func unknown(stderr io.Writer, name string) int {
	what := fmt.Sprintf("unknown command %q", name)
	if strings.HasPrefix(name, "-") {
		what = fmt.Sprintf("%s is a flag: the command comes first, %s <command> [flags]", name, Name)
	}
	fmt.Fprintf(stderr, "usage: %[1]s <command> [arguments]  (run '%[1]s -h' for the commands)\n%[1]s: %s; the commands are %s\n",
		Name, what, names())
	return 2
}
