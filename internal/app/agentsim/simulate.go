package agentsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/workshop/demo"
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

// simulateHead is the help of agentsim, naming the commands as the user
// runs them under ctx.
func simulateHead(ctx context.Context) string {
	return usage(ctx) + fmt.Sprintf(simulateHeadFormat, cli.Cmd(ctx, "agentsim"), cli.Cmd(ctx, "ingest"))
}

// simulateHeadFormat is the part of simulateHead after usage, with the
// command lines as %[1]s (agentsim) and %[2]s (ingest).
const simulateHeadFormat = `
Simulate (%[1]s [flags]): runs the scenario's sessions once.
Events go to NATS JetStream — an embedded server by default, whose store
(-store) is where the ingest command's embedded server keeps its own, so
that a later '%[2]s' ingests them; or -nats URL, e.g. a running
ingester's server — or, with -out, to a JSON-lines file for
'%[2]s -file'. Each session loads the learned rules at its start:
from -rules FILE, else from the NATS key-value bucket (-rules-bucket),
watched for updates. A summary goes to stderr. While an ingester runs,
publish to its server (-nats): two servers must not share a store.

  %[1]s -out - | head                      JSON lines on stdout
  %[1]s -nats nats://127.0.0.1:4222 -rate 500 -sessions 100000
`

type simOptions struct {
	fleetOptions
	out, natsURL, storeDir, rulesFile, bucket, start string
	rate                                             float64
	conn                                             bus.ConnConfig
	stream                                           bus.StreamConfig
}

func parseSimulate(ctx context.Context, args []string, stderr io.Writer) (*simOptions, error) {
	o := &simOptions{stream: bus.DefaultStream()}
	fs := newFlagSet("agentsim", simulateHead(ctx), stderr)
	fs.StringVar(&o.scenario, "scenario", "", scenarioHelp(ctx))
	fs.Uint64Var(&o.seed, "seed", 1, "random `seed`: the same seed gives the same sessions")
	fs.IntVar(&o.sessions, "sessions", 0, "sessions to run (default: the scenario's fleet.sessions)")
	fs.IntVar(&o.concurrency, "concurrency", 0, "sessions at once (default: the scenario's fleet.concurrency)")
	fs.StringVar(&o.start, "start", sim.DefaultStart.Format(time.RFC3339), "simulated `time` of the first session (RFC 3339, or now)")
	fs.Float64Var(&o.rate, "rate", 0, "events per second across the fleet (wall clock); 0 = as fast as possible")
	fs.StringVar(&o.out, "out", "", "write JSON lines to `file` (- for stdout) instead of publishing to NATS")
	fs.StringVar(&o.natsURL, "nats", cli.URLFromEnv(), "NATS server `URL`(s), comma-separated (default $NATS_URL); empty runs an embedded server (see -store)")
	cli.ConnFlags(fs, &o.conn)
	fs.StringVar(&o.storeDir, "store", demo.DefaultStore, "embedded server: JetStream store `dir` (the ingest command's default)")
	fs.StringVar(&o.stream.Name, "stream", o.stream.Name, "JetStream stream `name` (created with the ingester's defaults when missing)")
	fs.StringVar(&o.stream.Prefix, "prefix", o.stream.Prefix, "subject `prefix`: events go to <prefix>.<agent>")
	fs.StringVar(&o.rulesFile, "rules", "", "apply the rule set in this JSON `file` (as analyze rules writes it) instead of the bucket's")
	fs.StringVar(&o.bucket, "rules-bucket", ruleset.DefaultBucket, "key-value `bucket` of the learned rules; empty runs without rules")
	fs.StringVar(&o.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	if err := parseFlags(ctx, fs, args); err != nil {
		return nil, err
	}
	errs := o.problems()
	if !(o.rate >= 0) {
		errs = append(errs, fmt.Errorf("-rate %v: want events per second ≥ 0", o.rate))
	}
	if _, err := parseStart(o.start); err != nil {
		errs = append(errs, err)
	}
	if o.out == "" {
		errs = append(errs, o.stream.Validate())
	}
	if o.natsURL != "" {
		o.conn.URL, o.conn.Name = o.natsURL, "evosignal-agentsim"
		errs = append(errs, o.conn.Validate())
	}
	if err := errors.Join(errs...); err != nil {
		return nil, usageError(fs, err)
	}
	return o, nil
}

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseSimulate(ctx, args, stderr)
	if err != nil {
		return helpOK(err)
	}
	log, sc, err := o.load(stderr)
	if err != nil {
		return err
	}
	start, _ := parseStart(o.start) // checked by parseSimulate
	t0 := time.Now()
	sum, where, err := demo.Simulate(ctx, demo.SimulateConfig{
		Sim:         sim.Config{Scenario: sc, Seed: o.seed, Sessions: o.sessions, Concurrency: o.concurrency, Start: start, Rate: o.rate},
		Out:         o.out,
		NATS:        o.conn,
		StoreDir:    o.storeDir,
		Stream:      o.stream,
		RulesFile:   o.rulesFile,
		RulesBucket: o.bucket,
		Progress:    stderr,
		Log:         log,
	}, stdout)
	if err != nil {
		return err
	}
	el := time.Since(t0)
	fmt.Fprintf(stderr, "agentsim: %d sessions, %d events to %s in %s (%.0f events/s); first-try success %s, avg replans %.2f, tool failure rate %s\n",
		sum.Sessions, sum.Events, where, el.Round(time.Millisecond), float64(sum.Events)/el.Seconds(),
		demo.Pct(metrics.Rate(sum.FirstTry, sum.Sessions)), demo.Deref(metrics.Rate(sum.Replans, sum.Sessions)), demo.Pct(metrics.Rate(sum.FailedCalls, sum.RealCalls)))
	return nil
}
