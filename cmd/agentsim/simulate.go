package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/rules"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/sim"
)

const simulateHead = usage + `
Simulate (agentsim [flags]): runs the scenario's sessions once. Events go to
NATS JetStream — an embedded server by default, whose store (-store) is where
the ingest command's embedded server keeps its own, so that a later
'go run ./cmd/ingest' ingests them; or -nats URL, e.g. a running ingester's
server — or, with -out, to a JSON-lines file for 'ingest -file'. Each session
loads the learned rules at its start: from -rules FILE, else from the NATS
key-value bucket (-rules-bucket), watched for updates. A summary goes to
stderr. While an ingester runs, publish to its server (-nats): two servers
must not share a store.

  agentsim -out - | head                      JSON lines on stdout
  agentsim -nats nats://127.0.0.1:4222 -rate 500 -sessions 100000
`

// defaultStore is the ingest command's default JetStream store.
const defaultStore = "evosignal.jetstream"

type simOptions struct {
	scenario, out, natsURL, storeDir, rulesFile, bucket, start, logLevel string
	seed                                                                 uint64
	sessions, concurrency                                                int
	rate                                                                 float64
	conn                                                                 bus.ConnConfig
	stream                                                               bus.StreamConfig
}

func parseSimulate(args []string, stderr io.Writer) (*simOptions, error) {
	o := &simOptions{stream: bus.DefaultStream()}
	fs := newFlagSet("agentsim", simulateHead, stderr)
	fs.StringVar(&o.scenario, "scenario", "", scenarioHelp)
	fs.Uint64Var(&o.seed, "seed", 1, "random `seed`: the same seed gives the same sessions")
	fs.IntVar(&o.sessions, "sessions", 0, "sessions to run (default: the scenario's fleet.sessions)")
	fs.IntVar(&o.concurrency, "concurrency", 0, "sessions at once (default: the scenario's fleet.concurrency)")
	fs.StringVar(&o.start, "start", sim.DefaultStart.Format(time.RFC3339), "simulated `time` of the first session (RFC 3339, or now)")
	fs.Float64Var(&o.rate, "rate", 0, "events per second across the fleet (wall clock); 0 = as fast as possible")
	fs.StringVar(&o.out, "out", "", "write JSON lines to `file` (- for stdout) instead of publishing to NATS")
	fs.StringVar(&o.natsURL, "nats", "", "NATS server `URL`(s), comma-separated; empty runs an embedded server (see -store)")
	cli.ConnFlags(fs, &o.conn)
	fs.StringVar(&o.storeDir, "store", defaultStore, "embedded server: JetStream store `dir` (the ingest command's default)")
	fs.StringVar(&o.stream.Name, "stream", o.stream.Name, "JetStream stream `name` (created with the ingester's defaults when missing)")
	fs.StringVar(&o.stream.Prefix, "prefix", o.stream.Prefix, "subject `prefix`: events go to <prefix>.<agent>")
	fs.StringVar(&o.rulesFile, "rules", "", "apply the rule set in this JSON `file` (as analyze rules writes it) instead of the bucket's")
	fs.StringVar(&o.bucket, "rules-bucket", ruleset.DefaultBucket, "key-value `bucket` of the learned rules; empty runs without rules")
	fs.StringVar(&o.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	var errs []error
	if o.sessions < 0 {
		errs = append(errs, fmt.Errorf("-sessions %d is negative", o.sessions))
	}
	if o.concurrency < 0 {
		errs = append(errs, fmt.Errorf("-concurrency %d is negative", o.concurrency))
	}
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
	o, err := parseSimulate(args, stderr)
	if err != nil {
		return helpOK(err)
	}
	log, err := newLogger(stderr, o.logLevel)
	if err != nil {
		return err
	}
	sc, err := sim.Load(o.scenario)
	if err != nil {
		return err
	}
	start, _ := parseStart(o.start) // checked by parseSimulate
	cfg := sim.Config{Scenario: sc, Seed: o.seed, Sessions: o.sessions, Concurrency: o.concurrency, Start: start, Rate: o.rate}
	if o.rulesFile != "" {
		b, err := os.ReadFile(o.rulesFile)
		if err != nil {
			return fmt.Errorf("-rules: %w", err)
		}
		rs, err := ruleset.Parse(b)
		if err != nil {
			return fmt.Errorf("-rules %s: %w", o.rulesFile, err)
		}
		cfg.Rules = func(string) ruleset.RuleSet { return rs }
	}
	total := sc.Fleet.Sessions
	if o.sessions > 0 {
		total = o.sessions
	}
	prog := newProgress(stderr, "simulated", total)
	defer prog.stop()
	cfg.Progress = prog.set

	t0 := time.Now()
	var sum sim.Summary
	var where string
	if o.out != "" && o.natsURL == "" {
		sum, err = simulateToFile(ctx, cfg, o.out, stdout)
		where = o.out
	} else {
		sum, where, err = simulateToNATS(ctx, cfg, o, stdout, log)
	}
	prog.stop()
	if err != nil {
		return err
	}
	el := time.Since(t0)
	fmt.Fprintf(stderr, "agentsim: %d sessions, %d events to %s in %s (%.0f events/s); first-try success %s, avg replans %.2f, tool failure rate %s\n",
		sum.Sessions, sum.Events, where, el.Round(time.Millisecond), float64(sum.Events)/el.Seconds(),
		pct(ratio(sum.FirstTry, sum.Sessions)), deref(ratio(sum.Replans, sum.Sessions)), pct(ratio(sum.FailedCalls, sum.RealCalls)))
	return nil
}

// simulateToFile writes the events as JSON lines, sessions whole and in
// order, so that a seed always gives the same file (ids aside).
func simulateToFile(ctx context.Context, cfg sim.Config, out string, stdout io.Writer) (sim.Summary, error) {
	cfg.Ordered = true
	if out == "-" {
		jw := agent.NewJSONLWriter(stdout)
		sum, err := sim.Run(ctx, cfg, jw)
		return sum, errors.Join(err, jw.Flush())
	}
	f, err := os.Create(out)
	if err != nil {
		return sim.Summary{}, fmt.Errorf("-out: %w", err)
	}
	jw := agent.NewJSONLWriter(f)
	sum, err := sim.Run(ctx, cfg, jw)
	if ferr := errors.Join(jw.Flush(), f.Close()); ferr != nil {
		err = errors.Join(err, fmt.Errorf("write %s: %w", out, ferr))
	}
	return sum, err
}

// simulateToNATS publishes to the -nats server or an embedded one; the
// rules come from the bucket unless -rules gave them. With -out as well,
// the events go to the file and only the rules come from NATS.
func simulateToNATS(ctx context.Context, cfg sim.Config, o *simOptions, stdout io.Writer, log *slog.Logger) (sim.Summary, string, error) {
	conn := o.conn
	where := o.natsURL
	if o.natsURL == "" {
		if err := checkStoreFree(o.storeDir); err != nil {
			return sim.Summary{}, "", err
		}
		srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: o.storeDir}, log)
		if err != nil {
			return sim.Summary{}, "", err
		}
		defer srv.Close()
		conn.InProcess, conn.Name = srv.NATS(), "evosignal-agentsim"
		where = "the embedded server (store " + o.storeDir + ")"
	}
	nc, err := bus.Connect(conn, log)
	if err != nil {
		return sim.Summary{}, "", err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return sim.Summary{}, "", fmt.Errorf("jetstream: %w", err)
	}
	if cfg.Rules == nil && o.bucket != "" {
		stop, err := watchRules(ctx, js, o.bucket, cfg.Scenario.Fleet.Agents, &cfg, log)
		if err != nil {
			return sim.Summary{}, "", err
		}
		defer stop()
	}
	if o.out != "" {
		sum, err := simulateToFile(ctx, cfg, o.out, stdout)
		return sum, o.out, err
	}
	if _, err := js.Stream(ctx, o.stream.Name); errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err := bus.EnsureStream(ctx, js, o.stream); err != nil {
			return sim.Summary{}, "", err
		}
	} else if err != nil {
		return sim.Summary{}, "", fmt.Errorf("look up stream %s: %w", o.stream.Name, err)
	}
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{Prefix: o.stream.Prefix})
	if err != nil {
		return sim.Summary{}, "", err
	}
	sum, err := sim.Run(ctx, cfg, pub)
	// Deliver what was sent even when the run stopped early.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if cerr := pub.Close(cctx); cerr != nil {
		err = errors.Join(err, fmt.Errorf("publish: %w", cerr))
	}
	return sum, "stream " + o.stream.Name + " on " + where, err
}

// checkStoreFree refuses the default store while a server listens on the
// default address: most likely `ingest` with its embedded server on that
// same store, which a second server would corrupt (a JetStream store has
// no lock).
func checkStoreFree(storeDir string) error {
	if storeDir != defaultStore {
		return nil
	}
	c, err := net.DialTimeout("tcp", bus.DefaultListen, 200*time.Millisecond)
	if err != nil {
		return nil
	}
	c.Close()
	return fmt.Errorf("a NATS server is listening on %s (a running ingester, whose embedded server uses the store %s?): "+
		"publish to it with -nats nats://%s, or give the embedded server another -store", bus.DefaultListen, storeDir, bus.DefaultListen)
}

// watchRules starts one rules Watcher per agent name and points cfg.Rules
// at them; stop closes them. A missing bucket means no rules yet.
func watchRules(ctx context.Context, js jetstream.JetStream, bucket string, agents []string, cfg *sim.Config, log *slog.Logger) (stop func(), err error) {
	watchers := map[string]*rules.Watcher{}
	stop = func() {
		for _, w := range watchers {
			w.Close()
		}
	}
	for _, name := range agents {
		w, err := rules.Watch(ctx, js, bucket, name)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			log.Info("no rules bucket; running without learned rules", "bucket", bucket)
			return stop, nil
		}
		if err != nil {
			stop()
			return nil, err
		}
		watchers[name] = w
		rs, key := w.CurrentKey()
		log.Info("rules loaded", "agent", name, "key", key, "ruleset", rs.Version, "rules", len(rs.Rules))
	}
	cfg.Rules = func(agent string) ruleset.RuleSet { return watchers[agent].Current() }
	return stop, nil
}

// progress prints "simulated n/total sessions" on stderr at most once a
// second while a run is long.
type progress struct {
	w     io.Writer
	what  string
	total int

	mu   sync.Mutex
	done int
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func newProgress(w io.Writer, what string, total int) *progress {
	p := &progress{w: w, what: what, total: total, quit: make(chan struct{})}
	p.wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.mu.Lock()
				done := p.done
				p.mu.Unlock()
				fmt.Fprintf(p.w, "agentsim: %s %d/%d sessions\n", p.what, done, p.total)
			case <-p.quit:
				return
			}
		}
	})
	return p
}

func (p *progress) set(done int) {
	p.mu.Lock()
	p.done = max(p.done, done)
	p.mu.Unlock()
}

// stop ends the progress goroutine and waits for it; safe to call twice.
func (p *progress) stop() {
	p.once.Do(func() { close(p.quit) })
	p.wg.Wait()
}

func ratio(k, n int64) *float64 {
	if n == 0 {
		return nil
	}
	r := float64(k) / float64(n)
	return &r
}

func pct(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**r)
}

func deref(r *float64) float64 {
	if r == nil {
		return 0
	}
	return *r
}
