// Command bench measures the ingest pipeline on the embedded defaults (internal/bench) and
// prints its figures and peak memory: the ceilings of its parts (raw
// JetStream publish and consume, raw DuckDB append), the end-to-end rate of
// the real ingester, the cost of de-duplication, and the peak RSS of each
// phase. See `bench -h`.
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
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// errUsage is returned by run when the command line is wrong; the problem
// has already been printed.
var errUsage = errors.New("usage")
