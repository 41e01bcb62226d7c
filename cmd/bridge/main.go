// Command bridge turns the output of SkillLite's agent-rpc mode into
// evosignal events: it reads the JSON lines SkillLite writes (and, in a
// recorded transcript, the request lines it read), makes one evosignal
// session of each turn, and publishes the events to NATS JetStream or writes
// them as JSON lines for `ingest -file`. The mapping is documented in
// package internal/adapter/skilllite; `bridge -h` summarizes it.
//
// The same command is `evosignal bridge`; its code is in internal/app/bridge.
package main

import (
	"github.com/evosignal/evosignal/internal/app/bridge"
	"github.com/evosignal/evosignal/internal/cli"
)

func main() { cli.Main(bridge.Main) }
