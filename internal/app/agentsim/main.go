// Package agentsim is the agentsim command, a simulated fleet of agents: it
// drives the reference planner (agent/planner) with a simulated model
// instead of an LLM, as a scenario file describes, and publishes the events
// to NATS JetStream or writes them as JSON lines. It is the load generator
// of the benchmarks and the source of known ground truth for the analyzers.
//
//	agentsim [flags]          simulate a fleet once
//	agentsim demo [flags]     the closed loop: simulate → ingest → learn rules → publish → simulate again
//	agentsim truth [flags]    the ground truth a scenario implies
//	agentsim scenario         print the default scenario file
//
// docs/agentsim.md documents the scenario format and the demo.
//
// It runs as `evosignal agentsim` (cmd/evosignal) and as its own command,
// cmd/agentsim.
package agentsim

import (
	"context"
	"io"

	"github.com/evosignal/evosignal/internal/cli"
)

// Main runs the agentsim command: args are its command line without the
// program name. It returns the exit status (cli.ExitStatus).
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.ExitStatus(stderr, "agentsim", run(ctx, args, stdout, stderr))
}
