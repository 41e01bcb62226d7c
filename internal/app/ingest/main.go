// Package ingest is the ingest command: it moves agent events from NATS
// JetStream into a DuckDB file.
//
// With no -nats URL it runs an embedded nats-server with JetStream, so
// `evosignal ingest` works on a fresh machine; agents in other processes
// publish to its -listen address. With -file it loads a JSON-lines file (or
// stdin with -file -) without NATS and exits.
//
// It runs as `evosignal ingest` (cmd/evosignal) and as its own command,
// cmd/ingest.
package ingest

import (
	"context"
	"io"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/store"
)

// Main runs the ingest command: args are its command line without the
// program name. It returns the exit status (cli.ExitStatus).
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	store.LimitGoMemory() // the Go share of the memory budget (docs/operations.md)
	return cli.ExitStatus(stderr, "ingest", run(ctx, args, stdin, stdout, stderr))
}
