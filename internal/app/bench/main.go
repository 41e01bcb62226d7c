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
	"io"

	"github.com/evosignal/evosignal/internal/cli"
)

// Main runs the bench command: args are its command line without the
// program name. It returns the exit status (cli.ExitStatus).
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.ExitStatus(stderr, "bench", run(ctx, args, stdout, stderr))
}
