// Package inferbench is the inferbench command: it measures how well implicit re-decisions, inferred from
// tool calls alone (internal/infer), match the explicit replans of sessions
// whose plan events are hidden: it tunes the rule on one set of seeds and
// scenarios and prints precision and recall per scenario on another.
// docs/inferred-replans.md holds its figures.
//
//	go run ./cmd/inferbench
//	go run ./cmd/inferbench -json
package inferbench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/workshop/inferbench"
)

// Main runs the inferbench command: args are its command line without the
// program name. It returns the exit status: 0 after -h or -version too, 2
// for any error, which it prints.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdout, stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "inferbench:", err)
	return 2
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inferbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags]\n\nFlags:\n", cli.Cmd(ctx, "inferbench"))
		fs.PrintDefaults()
	}
	testdata := fs.String("testdata", "testdata", "the repository's testdata directory (scenarios and the SkillLite fixtures)")
	tune := fs.String("tune-seeds", seedList(inferbench.DefaultTuneSeeds), "comma-separated seeds the rule is tuned on")
	report := fs.String("report-seeds", seedList(inferbench.DefaultReportSeeds), "comma-separated seeds the figures are reported on")
	sessions := fs.Int("sessions", 200, "sessions per scenario and seed")
	window := fs.Int("window", 0, "calls an inferred re-decision may be away from an explicit replan and still match")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of Markdown")
	if err := cli.Parse(ctx, fs, args, stdout); err != nil {
		return err
	}
	var errs []error
	tuneSeeds, err := parseSeeds(*tune)
	errs = append(errs, err)
	reportSeeds, err := parseSeeds(*report)
	errs = append(errs, err)
	scenarios, err := inferbench.DefaultScenarios(*testdata)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	rep, err := inferbench.Run(ctx, inferbench.Config{
		Scenarios: scenarios, TuneSeeds: tuneSeeds, ReportSeeds: reportSeeds,
		Sessions: *sessions, Window: *window, Grid: inferbench.DefaultGrid(),
	})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return inferbench.WriteMarkdown(stdout, rep)
}

func seedList(seeds []uint64) string {
	s := make([]string, len(seeds))
	for i, n := range seeds {
		s[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join(s, ",")
}

func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seed %q: %w", f, err)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no seed in %q", s)
	}
	return out, nil
}
