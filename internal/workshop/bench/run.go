// Package bench measures the ingest pipeline on the embedded defaults: the
// ceilings of its parts (raw JetStream publish and consume, apart and
// together, raw DuckDB append), the end-to-end rate of the real ingester,
// the cost of de-duplication, where a commit's time goes, and the peak
// memory of each phase. cmd/bench parses its flags into a Config and calls Run; Usage
// explains the phases.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/store"
)

// Usage is the bench command's help, before its flags: what each phase
// measures and how to read the figures.
const Usage = `Usage: bench [flags]

Measures the ingest pipeline on the embedded defaults (an in-process
nats-server with a JetStream file store, a DuckDB file, both in a temporary
directory) and prints one row per phase: events, seconds, events/s, MB/s, CPU
cores used, peak RSS and peak Go heap.

Phases, in order:

  limits (always)
    js-publish     async-publish N payloads to a separate stream BENCH (no
                   Nats-Msg-Id). The payloads cycle through a pool of -pool
                   pre-generated synth events, so their sizes are those of real
                   events and generating them is not timed.
    js-consume     read them back with a durable pull consumer (the ingester's
                   consumer settings, through Consume as the ingester reads),
                   acking each message, nothing else.
    js-both        js-publish's publisher and js-consume's consumer at the same
                   time, on a fresh stream of their own (removed afterwards):
                   N / (first publish → last message consumed and acked). Raw
                   JetStream's own rate at publishing and consuming together:
                   the limit of the concurrent phase.
    duckdb-append  append N rows with the columns of events into a fresh
                   database with the DuckDB Appender, committing every 10,000.
  end to end, -mode backlog
    publish        N synth events through agent.Publisher (defaults) to the EVO
                   stream; generating them is part of the time, as in an agent.
    ingest         the real ingester (ingest.Run, ingest.DefaultConfig) from an
                   empty database until its committed position is the stream's
                   last sequence; acks after commit, as always.
  end to end, -mode concurrent
    concurrent     the ingester runs while N synth events are published to an
                   empty stream: N / (first publish → last commit).
  export (on the backlog database, else the concurrent one)
    export         a first, full analyze export of the database of N events
                   (every table to Parquet, at the export's default memory
                   limit) into a directory removed afterwards.
  de-duplication (on the backlog database, else the concurrent one)
    dedup-open     store.Open of the database of N events, in a new process:
                   the time to load the key set, and its Go heap per key.
    dedup          two passes on that database, reported as
                   dedup-clean: ingest -dup-frac×N new events (the reference);
                   dedup-resent: re-send -dup-frac×N stored events without
                   Nats-Msg-Id (so JetStream keeps them) and ingest them, all
                   of which must be skipped.
  diagnostic
    write-steps    N events through store.Write in batches of 10,000 (-batch) on a
                   fresh database, each of its statements timed by the store
                   (store.Options.StepTimer): where a commit's time goes, with
                   DuckDB checkpointing inside commits at its 16MB default.
                   Then again with checkpoint_threshold=100GB
                   (write-steps-nockpt), to show what DuckDB's automatic
                   checkpoints cost, and with the store's own checkpointer
                   beside the writer (write-steps-store). All end with an
                   explicit CHECKPOINT, included in their time.

Each phase runs in its own process (the command re-executes itself with the
internal -phase flag), so each peak RSS (VmHWM) is that phase's own; the Go
heap peak is sampled every 20ms. MB/s counts JetStream stream bytes for the
NATS and ingest phases, JSON payload bytes for js-publish, js-consume,
js-both and duckdb-append. CPU is the process's CPU time over wall time
(2.00 = two cores busy); "others" is the cores other processes kept busy
meanwhile (from /proc/stat): anything well above 0 means the figures
understate the pipeline; "iowait" the cores idle waiting for disk I/O
meanwhile.
Progress goes to stderr every -progress; the report to stdout.

The curve: -events with several N (1000000,5000000,10000000) runs the
phases at each N in turn, each N in its own sub-directory removed once
measured (unless -keep), and ends with one line per N: the ingest
(backlog) and concurrent (steady state: publish and ingest together) rates,
each against its rate at the first N ("vs first"), and their peak RSS, and
the export's seconds and peak RSS. Whether the ingester keeps its pace and
bounded memory as the database grows is read there. Check the disk first:
at 10M events each JetStream store takes about 5 GB and each database 2 GB.

CPU an event: the ingest and concurrent phases always take a CPU profile
and print the process's CPU an event split by stage, each sample given to
the stage of the frame nearest its leaf that belongs to one: consume (the
NATS client and the ingester's loop), decode, validate, dedupe, append (rows
into the appenders and their flushes), commit (the batch's other statements
and COMMIT), checkpoint, facts (refreshes within the phase), duckdb-threads
(samples on DuckDB's own threads), gc (the collector's background work),
nats-server (the embedded server: a process of its own beyond one machine,
so the line also gives the figure without it) and other.

The targets: after the table, each figure the issue sets a target for,
judged against the limits of the same run: ingest ≥ 0.5× js-consume and
≥ 0.85× the raw parts' bound (the machine's cores over js-consume's CPU an
event plus duckdb-append's CPU a row times the rows the ingester wrote an
event: what an ingester that only consumed and appended could do);
concurrent ≥ 0.8× js-both; the longest COMMIT of ingest and concurrent
≤ 150 ms; the publisher ≥ 100,000 events/s; peak RSS ≤ 1 GiB; bytes a key;
the CPU an event ≤ 12 µs (above); and, for a curve, the rate at the largest
N within 15% of the rate at the first.

On a shared machine, -wait-idle waits before each phase until other processes
leave the CPUs idle, and -retries runs a contended phase again (all but dedup,
whose passes change the database) and keeps its least contended attempt; a
row still contended is marked contended=true in the notes.

  bench                                 1,000,000 events, every phase
  bench -events 100000 -mode backlog    a quicker look
  bench -wait-idle 10m -retries 3       on a machine others use too
  bench -events 1000000,5000000,10000000 -only publish,ingest,concurrent,export
                                        the curve: rate and peak RSS at 1M,
                                        5M and 10M events (about an hour)
  bench -cpuprofile ingest.pprof        profile the ingest phase, then:
                                        go tool pprof -top bench ingest.pprof
  bench -cpuprofile dup.pprof -profile dedup
                                        profile the re-sent pass instead

The ingest, concurrent and dedup phases profile their measured section only
(dedup: the re-sent pass); any other phase is profiled whole.

Flags:
`

// The phases, by name, in the order they run.
var phases = map[string]func(context.Context, *env) ([]Result, error){
	"js-publish":    phaseJSPublish,
	"js-consume":    phaseJSConsume,
	"js-both":       phaseJSBoth,
	"duckdb-append": phaseDuckDBAppend,
	"publish":       phasePublish,
	"ingest":        phaseIngest,
	"concurrent":    phaseConcurrent,
	"export":        phaseExport,
	"dedup-open":    phaseDedupOpen,
	"dedup":         phaseDedup,
	"write-steps":   phaseWriteSteps,
}

// ingester are the phases that run the ingester: their processes get its
// Go memory limit.
var ingester = map[string]bool{"ingest": true, "concurrent": true}

// selfProfiled are the phases that profile their measured section only.
var selfProfiled = map[string]bool{"ingest": true, "concurrent": true, "dedup": true}

// Config is one bench run: the bench command's flags.
type Config struct {
	Events     int           // N: events per phase
	Curve      []int         // run the plan at each of these N in turn (Events is ignored) and print the curve
	Mode       string        // backlog, concurrent or both
	JSON       bool          // print the results as JSON instead of a table
	Keep       string        // work in this directory and keep it
	CPUProfile string        // write a CPU profile of one phase (Profile) here
	Profile    string        // the phase CPUProfile profiles (default ingest, or concurrent)
	DupFrac    float64       // share of N re-sent in the de-duplication passes
	Pool       int           // pre-generated payloads the raw phases cycle through
	Seed       uint64        // synth seed
	Batch      int           // fixed batches of this many messages (ingester, write-steps); 0: the ingester's defaults
	BatchBytes int           // the ingester's MaxBatchBytes; 0: its default
	Progress   time.Duration // log progress this often
	MemLimit   string        // DuckDB memory_limit of the ingester's store; empty: its default
	// DuckCheckpoint, when set, makes DuckDB checkpoint inside the
	// ingester's commits at this WAL size, as before the store's own
	// checkpointer (store.Options.DuckDBCheckpointThreshold): the "before"
	// of issue 24. Empty: the store's checkpointer.
	DuckCheckpoint string
	// CheckpointThreshold is the store's (store.Options.CheckpointThreshold)
	// in the ingest, concurrent and write-steps-store phases; empty: its
	// default.
	CheckpointThreshold string
	Only                string        // run only these comma-separated phases
	InProcess           bool          // run every phase in this process
	WaitIdle            time.Duration // before each phase, wait up to this long for idle CPUs
	Retries             int           // run a contended phase again up to this many times
	Phase               string        // internal: run this one phase and print its results as JSON
	Dir                 string        // internal: the work directory of Phase
	Command             string        // the command line, for the report
	// ChildArgs select the bench in its own executable, before a phase's
	// flags, when a phase runs in a new process: none for cmd/bench,
	// "bench" for evosignal bench.
	ChildArgs []string
}

// DefaultConfig returns the bench command's defaults.
func DefaultConfig() Config {
	return Config{Events: 1_000_000, Mode: "both", DupFrac: 0.1, Pool: 50_000, Seed: 1, Progress: 5 * time.Second}
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if c.Events < 1 {
		errs = append(errs, fmt.Errorf("-events %d must be at least 1", c.Events))
	}
	for _, n := range c.Curve {
		if n < 1 {
			errs = append(errs, fmt.Errorf("-events: %d must be at least 1", n))
		}
	}
	if len(c.Curve) > 0 && c.Phase != "" {
		errs = append(errs, errors.New("-phase runs one N, not a curve"))
	}
	if c.Pool < 1 {
		errs = append(errs, fmt.Errorf("-pool %d must be at least 1", c.Pool))
	}
	if c.DupFrac <= 0 || c.DupFrac > 1 {
		errs = append(errs, fmt.Errorf("-dup-frac %g must be in (0, 1]", c.DupFrac))
	}
	if c.Batch < 0 {
		errs = append(errs, fmt.Errorf("-batch %d is negative", c.Batch))
	}
	if c.BatchBytes < 0 {
		errs = append(errs, fmt.Errorf("-batch-bytes %d is negative", c.BatchBytes))
	}
	if c.Retries < 0 {
		errs = append(errs, fmt.Errorf("-retries %d is negative", c.Retries))
	}
	if c.Progress <= 0 {
		errs = append(errs, fmt.Errorf("-progress %s must be positive", c.Progress))
	}
	if !slices.Contains([]string{"backlog", "concurrent", "both"}, c.Mode) {
		errs = append(errs, fmt.Errorf("-mode %q: want backlog, concurrent or both", c.Mode))
	}
	if c.Phase != "" {
		if phases[c.Phase] == nil {
			errs = append(errs, fmt.Errorf("-phase %q: no such phase", c.Phase))
		}
		if c.Dir == "" {
			errs = append(errs, errors.New("-phase needs -dir"))
		}
	}
	if c.Profile != "" && phases[c.Profile] == nil {
		errs = append(errs, fmt.Errorf("-profile: no phase %q", c.Profile))
	}
	for _, p := range onlyList(c.Only) {
		if phases[p] == nil {
			errs = append(errs, fmt.Errorf("-only: no phase %q", p))
		}
	}
	return errors.Join(errs...)
}

type options struct {
	env
	mode        string
	json        bool
	keep        string
	only        string
	profile     string
	inProcess   bool
	waitIdleMax time.Duration
	retries     int
	phase       string // internal: run this one phase and print its results as JSON
	command     string
	childArgs   []string
}

func (c Config) options() *options {
	return &options{
		env: env{dir: c.Dir, events: c.Events, pool: c.Pool, dupFrac: c.DupFrac, seed: c.Seed,
			cpuprofile: c.CPUProfile, progress: c.Progress, batch: c.Batch, batchBytes: c.BatchBytes, memLimit: c.MemLimit,
			duckCheckpoint: c.DuckCheckpoint, ckThreshold: c.CheckpointThreshold},
		mode: c.Mode, json: c.JSON, keep: c.Keep, only: c.Only, profile: c.Profile, inProcess: c.InProcess,
		waitIdleMax: c.WaitIdle, retries: c.Retries, phase: c.Phase, command: c.Command, childArgs: c.ChildArgs,
	}
}

func onlyList(only string) []string {
	if only == "" {
		return nil
	}
	return strings.Split(only, ",")
}

func (o *options) onlyList() []string { return onlyList(o.only) }

// plan lists the phases to run, in order.
func (o *options) plan() []string {
	p := []string{"js-publish", "js-consume", "js-both", "duckdb-append"}
	if o.mode != "concurrent" {
		p = append(p, "publish", "ingest")
	}
	if o.mode != "backlog" {
		p = append(p, "concurrent")
	}
	p = append(p, "export", "dedup-open", "dedup", "write-steps")
	if only := o.onlyList(); only != nil {
		p = slices.DeleteFunc(p, func(s string) bool { return !slices.Contains(only, s) })
	}
	return p
}

// profiled is the phase -cpuprofile applies to.
func (o *options) profiled() string {
	if o.profile != "" {
		return o.profile
	}
	if o.mode == "concurrent" {
		return "concurrent"
	}
	return "ingest"
}

// Run runs the phases of cfg, each in a new process of this executable
// unless cfg.InProcess, and prints the report to stdout, progress to
// stderr. With cfg.Phase it is that child: it runs the one phase and
// prints its results as JSON.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	o := cfg.options()
	if o.cpuprofile != "" {
		abs, err := filepath.Abs(o.cpuprofile)
		if err != nil {
			return err
		}
		o.cpuprofile = abs
	}
	var err error
	o.log = slog.New(slog.NewTextHandler(stderr, nil))
	if o.phase != "" {
		return runChild(ctx, o, stdout)
	}

	dir := o.keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "evosignal-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := emptyDir(dir, o.only != ""); err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	rep := Report{Machine: machineInfo(), Command: o.command, Events: o.events, Mode: o.mode, Sizes: cfg.Curve}
	var runErr error
	for _, n := range o.sizes(cfg) {
		o.events, o.dir = n, dir
		if len(cfg.Curve) > 0 {
			// Each size in its own directory, removed once measured
			// (unless -keep): at 10M events a JetStream store and a
			// database take several GB each.
			o.dir = filepath.Join(dir, fmt.Sprintf("n%d", n))
			if err := os.MkdirAll(o.dir, 0o755); err != nil {
				return err
			}
		}
		rs, err := o.runPlan(ctx, stderr)
		rep.Results = append(rep.Results, rs...)
		if len(cfg.Curve) > 0 && o.keep == "" {
			err = errors.Join(err, os.RemoveAll(o.dir))
		}
		if err != nil {
			runErr = err
			break
		}
	}
	rep.Curve = curve(rep.Results, cfg.Curve)
	if len(rep.Results) > 0 {
		if o.json {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(rep); err != nil {
				return errors.Join(runErr, err)
			}
		} else {
			rep.write(stdout)
		}
	}
	return runErr
}

// sizes are the N of each pass of the plan: the curve's, or the one.
func (o *options) sizes(cfg Config) []int {
	if len(cfg.Curve) > 0 {
		return cfg.Curve
	}
	return []int{o.events}
}

// runPlan runs the phases of the plan at o.events in o.dir, each in a new
// process unless -in-process, and returns their results up to the first
// that fails.
func (o *options) runPlan(ctx context.Context, stderr io.Writer) ([]Result, error) {
	var out []Result
	for _, name := range o.plan() {
		o.log.Info("phase", "name", name, "events", o.events, "dir", o.dir)
		rs, err := o.runWithRetries(ctx, name, func(profile string) ([]Result, error) {
			if o.inProcess {
				return runPhase(ctx, o, name, profile)
			}
			return o.spawn(ctx, name, profile, stderr)
		})
		if err != nil {
			return out, fmt.Errorf("phase %s at %d events: %w", name, o.events, err)
		}
		for _, r := range rs {
			o.log.Info("result", "phase", r.Phase, "events", r.Events, "seconds", round(r.Seconds, 2),
				"events_per_s", int64(r.PerSec), "peak_rss_mib", int(r.PeakRSSMiB))
		}
		out = append(out, rs...)
	}
	return out, nil
}

// emptyDir creates dir, or checks that it is empty unless reuse.
func emptyDir(dir string, reuse bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("-keep %s: %w", dir, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("-keep %s: %w", dir, err)
	}
	if len(ents) > 0 && !reuse {
		return fmt.Errorf("-keep %s: directory is not empty (a run needs a fresh one; -only reuses it)", dir)
	}
	return nil
}

// spawn runs one phase in a new process of this executable.
func (o *options) spawn(ctx context.Context, name, profile string, stderr io.Writer) ([]Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	args := append(slices.Clone(o.childArgs), "-phase", name, "-dir", o.dir, "-events", strconv.Itoa(o.events),
		"-pool", strconv.Itoa(o.pool), "-dup-frac", strconv.FormatFloat(o.dupFrac, 'g', -1, 64),
		"-seed", strconv.FormatUint(o.seed, 10), "-progress", o.progress.String(),
		"-batch", strconv.Itoa(o.batch), "-batch-bytes", strconv.Itoa(o.batchBytes))
	if o.memLimit != "" {
		args = append(args, "-memory-limit", o.memLimit)
	}
	if o.duckCheckpoint != "" {
		args = append(args, "-duckdb-checkpoint-threshold", o.duckCheckpoint)
	}
	if o.ckThreshold != "" {
		args = append(args, "-checkpoint-threshold", o.ckThreshold)
	}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("run %s: %w", strings.Join(append([]string{filepath.Base(exe)}, args[:len(o.childArgs)+2]...), " "), err)
	}
	var rs []Result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		return nil, fmt.Errorf("read results of phase %s: %w", name, err)
	}
	return rs, nil
}

// runChild runs the phase of -phase and prints its results as JSON.
func runChild(ctx context.Context, o *options, stdout io.Writer) error {
	o.log = o.log.With("phase", o.phase)
	if ingester[o.phase] {
		store.LimitGoMemory() // as the ingest command runs
	}
	rs, err := runPhase(ctx, o, o.phase, o.cpuprofile)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(rs)
}

// runPhase runs one phase here, writing a CPU profile to profile if set,
// and fills in its memory figures.
func runPhase(ctx context.Context, o *options, name, profile string) ([]Result, error) {
	e := o.env
	e.cpuprofile = profile
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	h := startHeapSampler(ctx)
	stopProfile := func() []byte { return nil }
	if !selfProfiled[name] && profile != "" {
		var err error
		if stopProfile, err = e.startProfile(); err != nil {
			return nil, err
		}
	}
	rs, err := phases[name](ctx, &e)
	stopProfile()
	heap := h.Close()
	if err != nil {
		return nil, err
	}
	rss := procStatus("VmHWM")
	for i := range rs {
		rs[i].PeakRSSMiB = mib(rss)
		rs[i].HeapPeakMiB = mib(int64(heap))
	}
	return rs, nil
}
