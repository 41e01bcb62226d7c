// Command validate checks JSON-lines files of events (or standard input)
// against the evosignal v1 contract, without NATS or a database, and lists
// every violation of every line.
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
		if errors.Is(err, errInvalid) {
			os.Exit(1) // run printed every violation and the count
		}
		fmt.Fprintln(os.Stderr, "validate:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")
