// Package validate is the validate command: it checks JSON-lines files of
// events (or standard input) against the evosignal v1 contract, without NATS
// or a database, and lists every violation of every line.
//
// It runs as `evosignal validate` (cmd/evosignal) and as its own command,
// cmd/validate.
package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Main runs the validate command: args are its command line without the
// program name. It returns the exit status: 2 for a wrong command line
// (already explained on stderr), 1 for an error, which it prints.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if err := run(ctx, args, stdin, stdout, stderr); err != nil {
		if errors.Is(err, errUsage) {
			return 2
		}
		if errors.Is(err, errInvalid) {
			return 1 // run printed every violation and the count
		}
		fmt.Fprintln(stderr, "validate:", err)
		return 1
	}
	return 0
}

var errUsage = errors.New("usage")
