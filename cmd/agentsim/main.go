// Command agentsim is a simulated fleet of agents: it drives the reference
// planner (agent/planner) with a simulated model instead of an LLM, as a
// scenario file describes, and publishes the events to NATS JetStream or
// writes them as JSON lines. It is the load generator of the benchmarks and
// the source of known ground truth for the analyzers.
//
//	agentsim [flags]          simulate a fleet once
//	agentsim demo [flags]     the closed loop: simulate → ingest → learn rules → publish → simulate again
//	agentsim truth [flags]    the ground truth a scenario implies
//	agentsim scenario         print the default scenario file
//
// docs/agentsim.md documents the scenario format and the demo.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "agentsim:", err)
		os.Exit(1)
	}
}

// errUsage is returned by run for bad flags, after saying what is wrong.
var errUsage = errors.New("usage")
