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
//
// The same command is `evosignal agentsim`; its code is in internal/app/agentsim.
package main

import (
	"github.com/evosignal/evosignal/internal/app/agentsim"
	"github.com/evosignal/evosignal/internal/cli"
)

func main() { cli.Main(agentsim.Main) }
