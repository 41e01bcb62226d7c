package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// MainFunc is a command's main function: it runs the command line args
// (without the program name) on the given standard streams until done or
// ctx is cancelled, and returns the exit status: 0 on success, 1 when the
// command failed, 2 when the command line is wrong. Every command of
// evosignal has one (internal/app/<name>.Main); cmd/<name> and
// cmd/evosignal call it through Main.
type MainFunc func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// Main runs m with the process's arguments and standard streams, its
// context cancelled by an interrupt or SIGTERM, and exits with the status
// m returns. It is all a command's func main does.
func Main(m MainFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := m(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// ErrUsage is what a command's run returns for a wrong command line, after
// saying on stderr what is wrong; ExitStatus makes it exit status 2.
var ErrUsage = errors.New("usage")

// ExitStatus is the exit status of the command name whose run returned err,
// as a MainFunc returns it: 0 for nil, 2 for ErrUsage (already explained),
// and 1 for any other error, which it prints on stderr after the command's
// name.
func ExitStatus(stderr io.Writer, name string, err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	}
	fmt.Fprintln(stderr, name+":", err)
	return 1
}
