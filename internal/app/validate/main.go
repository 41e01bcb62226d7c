// Package validate is the validate command: it checks JSON-lines files of
// events (or standard input) against the evosignal contract as the ingester
// accepts it (v1 and what v1.1 adds), without NATS or a database, and lists
// every violation of every line.
//
// It runs as `evosignal validate` (cmd/evosignal) and as its own command,
// cmd/validate.
package validate

import (
	"context"
	"errors"
	"io"

	"github.com/evosignal/evosignal/internal/cli"
)

// Main runs the validate command: args are its command line without the
// program name. It returns the exit status (cli.ExitStatus), 1 without a
// word more for invalid events: run printed every violation and the count.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdin, stdout, stderr)
	if errors.Is(err, errInvalid) {
		return 1
	}
	return cli.ExitStatus(stderr, "validate", err)
}
