package validate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/validate"
)

// usage is the help of validate before its flags, naming it as the user
// runs it under ctx.
func usage(ctx context.Context) string { return fmt.Sprintf(usageFormat, cli.Cmd(ctx, "validate")) }

// usageFormat is usage with the command as %[1]s.
const usageFormat = `Usage: %[1]s [flags] [file ...]

Checks events, one JSON event a line (CloudEvents v1 in the structured JSON
form, see schema/README.md), against the evosignal contract without a
database, and prints every violation of every line as

  file:line: /json/pointer: what is wrong

It exits 1 when any line is invalid, 0 when all are valid. With no file, or
with -, it reads standard input.

  %[1]s events.jsonl
  my-agent --dry-run | %[1]s

Flags:
`

// errInvalid is returned when a line breaks the contract.
var errInvalid = errors.New("invalid events")

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage(ctx))
		fs.PrintDefaults()
	}
	maxBytes := fs.Int("max-event-bytes", ingest.DefaultConfig().MaxEventBytes, "report events larger than this as oversize, as the ingester's -max-event-bytes dead-letters them (0: no limit)")
	if err := cli.Parse(ctx, fs, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return cli.ErrUsage
	}
	if *maxBytes < 0 {
		fmt.Fprintf(stderr, "validate: -max-event-bytes %d must not be negative\n", *maxBytes)
		return cli.ErrUsage
	}
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	v, err := validate.New()
	if err != nil {
		return err
	}
	var total validate.Summary
	for _, name := range files {
		sum, err := validateFile(ctx, v, name, *maxBytes, stdin, stdout)
		total.Events += sum.Events
		total.Invalid += sum.Invalid
		if err != nil {
			return err
		}
	}
	if total.Invalid > 0 {
		fmt.Fprintf(stderr, "%d of %d events invalid\n", total.Invalid, total.Events)
		return fmt.Errorf("%w: %d of %d", errInvalid, total.Invalid, total.Events)
	}
	fmt.Fprintf(stderr, "%d events valid\n", total.Events)
	return nil
}

func validateFile(ctx context.Context, v *validate.Validator, name string, maxBytes int, stdin io.Reader, stdout io.Writer) (validate.Summary, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return validate.Summary{}, fmt.Errorf("open events file: %w", err)
		}
		defer f.Close()
		r = f
	}
	sum, err := v.File(ctx, r, maxBytes, func(line int64, viol validate.Violation) {
		fmt.Fprintf(stdout, "%s:%d: %s\n", name, line, viol)
	})
	if err != nil {
		return sum, fmt.Errorf("%s: %w", name, err)
	}
	return sum, nil
}
