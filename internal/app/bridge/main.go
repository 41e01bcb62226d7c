// Package bridge is the bridge command: it turns the output of SkillLite's
// agent-rpc mode into evosignal events: it reads the JSON lines SkillLite
// writes (and, in a recorded transcript, the request lines it read), makes
// one evosignal session of each turn, and publishes the events to NATS
// JetStream or writes them as JSON lines for `ingest -file`. The mapping is
// documented in package internal/adapter/skilllite; `bridge -h` summarizes
// it.
//
// It runs as `evosignal bridge` (cmd/evosignal) and as its own command,
// cmd/bridge.
package bridge

import (
	"context"
	"io"

	"github.com/evosignal/evosignal/internal/cli"
)

// Main runs the bridge command: args are its command line without the
// program name. It returns the exit status: 2 for a wrong command line
// (already explained on stderr), 1 for an error, which it prints.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.ExitStatus(stderr, "bridge", run(ctx, args, stdin, stdout, stderr))
}

// errUsage is returned by run for bad flags, after saying what is wrong.
var errUsage = cli.ErrUsage
