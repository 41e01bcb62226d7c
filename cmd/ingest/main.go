// Command ingest moves agent events from NATS JetStream into a DuckDB file.
//
// With no -nats URL it runs an embedded nats-server with JetStream, so
// `go run ./cmd/ingest` works on a fresh machine; agents in other processes
// publish to its -listen address. With -file it loads a JSON-lines file (or
// stdin with -file -) without NATS and exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/evosignal/evosignal/internal/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store.LimitGoMemory() // the Go share of the memory budget (docs/operations.md)
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "ingest:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")
