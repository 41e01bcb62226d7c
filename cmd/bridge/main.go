// Command bridge turns the output of SkillLite's agent-rpc mode into
// evosignal events: it reads the JSON lines SkillLite writes (and, in a
// recorded transcript, the request lines it read), makes one evosignal
// session of each turn, and publishes the events to NATS JetStream or writes
// them as JSON lines for `ingest -file`. The mapping is documented in
// package internal/adapter/skilllite; `bridge -h` summarizes it.
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
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "bridge:", err)
		os.Exit(1)
	}
}

// errUsage is returned by run for bad flags, after saying what is wrong.
var errUsage = errors.New("usage")
