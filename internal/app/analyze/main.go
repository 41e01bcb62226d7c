// Package analyze is the analyze command: it turns the event tables into evolution signals: replan
// statistics, hint-failure correlations, task-type → tool mappings, learned
// hint rules, rule effects and the evolution curve. Every number comes from
// one .sql file in queries/; `analyze <command> -h` explains each command.
//
// It runs as `evosignal analyze` (cmd/evosignal) and as its own command,
// cmd/analyze.
package analyze

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/evosignal/evosignal/internal/cli"
)

// command is one subcommand: its one-line summary and its run function.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands (one line each, no init registries).
var commands = map[string]command{
	"replans":  {summary: replansSummary, run: runReplans},
	"trend":    {summary: trendSummary, run: runTrend},
	"effect":   {summary: effectSummary, run: runEffect},
	"hints":    {summary: hintsSummary, run: runHints},
	"mappings": {summary: mappingsSummary, run: runMappings},
	"rules":    {summary: rulesSummary, run: runRules},
	"cost":     {summary: costSummary, run: runCost},
	"stuck":    {summary: stuckSummary, run: runStuck},
	"export":   {summary: exportSummary, run: runExport},
	"report":   {summary: reportSummary, run: runReport},
	"sql":      {summary: sqlSummary, run: runSQL},
}

// Main runs the analyze command: args are its command line without the
// program name. It returns the exit status: 2 for a wrong command line
// (already explained on stderr), 1 for an error, which it prints.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.ExitStatus(stderr, "analyze", run(ctx, args, stdout, stderr))
}

// errUsage is returned for a wrong command line, after saying what is
// wrong.
var errUsage = cli.ErrUsage

func usage(ctx context.Context, w io.Writer) {
	fmt.Fprintf(w, "Usage: %s <command> [flags]\n", cli.Cmd(ctx, "analyze"))
	fmt.Fprint(w, `

Reads a DuckDB file written by the ingester (-db), or a running ingester's
read-only query service (-nats URL), and prints evolution signals as a table,
CSV or JSON (-format). Every command takes -since/-until
(RFC 3339, a date, or a duration back from now such as 24h or 7d), the
filters -agent, -model, -task-type, and -by (a comma-separated list of
agent, agent_version, model, task_type, day, week, ruleset).

Commands:
`)
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
The SQL behind each number is in queries/analyze/; docs/analyze.md documents
the JSON shapes.
`)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(ctx, stderr)
		return errUsage
	}
	name := args[0]
	if name == "-h" || name == "-help" || name == "--help" || name == "help" {
		usage(ctx, stdout)
		return nil
	}
	if name == "-version" || name == "--version" {
		fmt.Fprintln(stdout, cli.Version(cli.Cmd(ctx, "analyze")))
		return nil
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "usage: %[1]s <command> [flags]  (run '%[1]s -h' for the commands)\nanalyze: %[2]s\n",
			cli.Cmd(ctx, "analyze"), wrongCommand(ctx, args))
		return errUsage
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

// wrongCommand says what is wrong with a command line whose first word is
// no command: flags before the command (analyze -db x replans) are told
// where they go, as the user runs analyze under ctx.
func wrongCommand(ctx context.Context, args []string) string {
	name := args[0]
	if !strings.HasPrefix(name, "-") {
		return fmt.Sprintf("unknown command %q; the commands are %s", name, strings.Join(commandNames(), ", "))
	}
	for i, a := range args {
		if _, ok := commands[a]; ok {
			rest := append([]string{a}, args[:i]...)
			rest = append(rest, args[i+1:]...)
			return fmt.Sprintf("flags go after the command: %s", cli.Cmd(ctx, "analyze "+strings.Join(rest, " ")))
		}
	}
	return fmt.Sprintf("%s is a flag: the command comes first, %s <command> %s; the commands are %s",
		name, cli.Cmd(ctx, "analyze"), strings.Join(args, " "), strings.Join(commandNames(), ", "))
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// splitList splits a comma-separated flag value, dropping empty parts.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
