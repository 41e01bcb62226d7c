package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/workshop/bench"
)

func parse(ctx context.Context, args []string, stderr io.Writer) (*bench.Config, error) {
	c := bench.DefaultConfig()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		// bench.Usage's head names the command; say it as the user runs it.
		fmt.Fprint(stderr, strings.Replace(bench.Usage, "Usage: bench ", "Usage: "+cli.Cmd(ctx, "bench")+" ", 1))
		fs.PrintDefaults()
	}
	fs.Var(eventsFlag{&c}, "events", "`N`: events per phase; a comma-separated list (1000000,5000000,10000000) runs the phases at each N in turn and prints the curve")
	fs.StringVar(&c.Mode, "mode", c.Mode, "end-to-end `mode`: backlog (publish, then ingest), concurrent (both at once), or both")
	fs.BoolVar(&c.JSON, "json", false, "print the results as JSON instead of a table")
	fs.StringVar(&c.Keep, "keep", "", "work in `dir` (created, must be empty) and keep the databases and JetStream stores there")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of one phase (see -profile) to `file`")
	fs.StringVar(&c.Profile, "profile", "", "the `phase` -cpuprofile profiles (default ingest, or concurrent with -mode concurrent)")
	fs.Float64Var(&c.DupFrac, "dup-frac", c.DupFrac, "share of N re-sent (and newly sent) in the de-duplication passes")
	fs.IntVar(&c.Pool, "pool", c.Pool, "pre-generated payloads the raw phases cycle through")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "synth seed")
	fs.IntVar(&c.Batch, "batch", 0, "fixed batches of `N` messages for ingest, concurrent, dedup and write-steps (the ingester's -batch and -max-batch); 0: the ingester's defaults (adaptive), write-steps 10,000")
	fs.IntVar(&c.BatchBytes, "batch-bytes", 0, "the ingester's -max-batch-bytes (`bytes`); 0: its default")
	fs.DurationVar(&c.Progress, "progress", c.Progress, "log progress to stderr this often")
	fs.StringVar(&c.DuckCheckpoint, "duckdb-checkpoint-threshold", "", "let DuckDB checkpoint inside the ingester's commits at this WAL size (e.g. 1GB, the store's setting before its own checkpointer), to compare; default: the store's checkpointer")
	fs.StringVar(&c.CheckpointThreshold, "checkpoint-threshold", "", "the store's checkpoint threshold in the ingest, concurrent and write-steps-store phases, as ingest -checkpoint-threshold (default: the store's)")
	fs.StringVar(&c.MemLimit, "memory-limit", "", "DuckDB memory limit of the ingester in the ingest and concurrent phases, as ingest -memory-limit (default: the ingester's default)")
	fs.StringVar(&c.Only, "only", "", "run only these comma-separated `phases` (the ones they depend on must have run in -keep dir)")
	fs.BoolVar(&c.InProcess, "in-process", false, "run every phase in this process (peak RSS is then approximate: memory a phase freed may still be held)")
	fs.DurationVar(&c.WaitIdle, "wait-idle", 0, "before each phase, wait up to this long for other processes to leave the CPUs idle (0: do not wait)")
	fs.IntVar(&c.Retries, "retries", 0, "run a phase again up to this many times while other processes took CPU during it (phases that can run again), keeping the least contended")
	fs.StringVar(&c.Phase, "phase", "", "internal: run one phase `name` in -dir and print its results as JSON")
	fs.StringVar(&c.Dir, "dir", "", "internal: the work `dir` of -phase")
	if err := cli.Parse(ctx, fs, args, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, flag.ErrHelp
		}
		return nil, cli.ErrUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected arguments %q\n", fs.Args())
		return nil, cli.ErrUsage
	}
	if err := c.Validate(); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return nil, cli.ErrUsage
	}
	c.Command = cli.Cmd(ctx, "bench "+strings.Join(args, " "))
	// The words that select this command in its own executable: none for
	// cmd/bench, "bench" under evosignal. Each phase re-runs the
	// executable with them.
	c.ChildArgs = strings.Fields(cli.Cmd(ctx, "bench"))[1:]
	return &c, nil
}

// eventsFlag is -events: one N, or the N of a curve.
type eventsFlag struct{ c *bench.Config }

func (f eventsFlag) String() string {
	if f.c == nil {
		return ""
	}
	if len(f.c.Curve) > 0 {
		return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(f.c.Curve)), ","), "[]")
	}
	return strconv.Itoa(f.c.Events)
}

func (f eventsFlag) Set(s string) error {
	var ns []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(p), "_", ""))
		if err != nil {
			return fmt.Errorf("%q is not a number of events", p)
		}
		ns = append(ns, n)
	}
	f.c.Events, f.c.Curve = ns[0], nil
	if len(ns) > 1 {
		f.c.Curve = ns
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parse(ctx, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return bench.Run(ctx, *c, stdout, stderr)
}
