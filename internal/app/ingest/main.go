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
	"errors"
	"fmt"
	"io"

	"github.com/evosignal/evosignal/internal/store"
)

// Main runs the ingest command: args are its command line without the
// program name. It returns the exit status: 2 for a wrong command line
// (already explained on stderr), 1 for an error, which it prints.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	store.LimitGoMemory() // the Go share of the memory budget (docs/operations.md)
	if err := run(ctx, args, stdin, stdout, stderr); err != nil {
		if errors.Is(err, errUsage) {
			return 2
		}
		fmt.Fprintln(stderr, "ingest:", err)
		return 1
	}
	return 0
}

var errUsage = errors.New("usage")
