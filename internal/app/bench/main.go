// Package bench is the bench command: it measures the ingest pipeline on the
// embedded defaults (internal/workshop/bench) and prints its figures and peak memory:
// the ceilings of its parts (raw JetStream publish and consume, raw DuckDB
// append), the end-to-end rate of the real ingester, the cost of
// de-duplication, and the peak RSS of each phase. See `bench -h`.
//
// It runs as `evosignal bench` (cmd/evosignal) and as its own command,
// cmd/bench.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Main runs the bench command: args are its command line without the
// program name. It returns the exit status: 2 for a wrong command line
// (already explained on stderr), 1 for an error, which it prints.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if err := run(ctx, args, stdout, stderr); err != nil {
		if errors.Is(err, errUsage) {
			return 2
		}
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	return 0
}

// errUsage is returned by run when the command line is wrong; the problem
// has already been printed.
var errUsage = errors.New("usage")
