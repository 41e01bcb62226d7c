package cli

import (
	"context"
	"strings"
)

// Prog is the program a command runs under, for the texts that tell a user
// what to type: help, usage lines and hints name a command line as Cmd
// gives it, so that a person can copy it. A context without a Prog is a
// standalone command (cmd/<name>), its own program.
type Prog struct {
	// Name is the program's name, the first word of every command line
	// under it: evosignal.
	Name string
	// Aliases are the program's shorter names for command lines, by the
	// command line they stand for: "agentsim demo" is "demo".
	Aliases map[string]string
}

type progKey struct{}

// WithProg returns ctx for running a command under program p: cmd/evosignal
// runs every command so.
func WithProg(ctx context.Context, p Prog) context.Context {
	return context.WithValue(ctx, progKey{}, p)
}

// Cmd returns line, a command line that starts with a command's own name
// ("analyze trend -every day"), as the user runs it under ctx's program:
// "evosignal analyze trend -every day" under evosignal, and line itself
// for a standalone command. An alias of the program replaces the command
// line it stands for: "agentsim demo -h" is "evosignal demo -h".
func Cmd(ctx context.Context, line string) string {
	p, _ := ctx.Value(progKey{}).(Prog)
	if p.Name == "" {
		return line
	}
	best := ""
	for long := range p.Aliases {
		if (line == long || strings.HasPrefix(line, long+" ")) && len(long) > len(best) {
			best = long
		}
	}
	if best != "" {
		line = p.Aliases[best] + line[len(best):]
	}
	return p.Name + " " + line
}
