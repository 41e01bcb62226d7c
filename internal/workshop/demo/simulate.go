package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/rules"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/output"
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

// DefaultStore is the ingest command's default JetStream store, where an
// embedded server of Simulate keeps its own so that a later ingest reads
// what it published.
const DefaultStore = "evosignal.jetstream"

// SimulateConfig is one run of the fleet (agentsim without a subcommand).
type SimulateConfig struct {
	Sim sim.Config
	// Out writes JSON lines to this file ("-": stdout) instead of
	// publishing; with NATS.URL set too, only the rules come from NATS.
	Out string
	// NATS is the server to publish to; with an empty URL an embedded
	// server runs on StoreDir.
	NATS     bus.ConnConfig
	StoreDir string
	// Stream is created with the ingester's defaults when missing.
	Stream bus.StreamConfig
	// RulesFile is a rule set applied to every session instead of the
	// bucket's; RulesBucket is watched otherwise (empty: no rules).
	RulesFile   string
	RulesBucket string
	// Progress receives "simulated n/total sessions" lines once a second.
	Progress io.Writer
	Log      *slog.Logger
}

// Simulate runs the fleet once and returns its summary and where the
// events went.
func Simulate(ctx context.Context, cfg SimulateConfig, stdout io.Writer) (sim.Summary, string, error) {
	if cfg.RulesFile != "" {
		b, err := os.ReadFile(cfg.RulesFile)
		if err != nil {
			return sim.Summary{}, "", fmt.Errorf("-rules: %w", err)
		}
		rs, err := ruleset.Parse(b)
		if err != nil {
			return sim.Summary{}, "", fmt.Errorf("-rules %s: %w", cfg.RulesFile, err)
		}
		cfg.Sim.Rules = func(string) ruleset.RuleSet { return rs }
	}
	total := cfg.Sim.Scenario.Fleet.Sessions
	if cfg.Sim.Sessions > 0 {
		total = cfg.Sim.Sessions
	}
	prog := newProgress(cfg.Progress, "simulated", total)
	defer prog.stop()
	cfg.Sim.Progress = prog.set
	if cfg.Out != "" && cfg.NATS.URL == "" {
		return toFile(ctx, cfg.Sim, cfg.Out, stdout)
	}
	return toNATS(ctx, cfg, stdout)
}

// toFile writes the events as JSON lines, sessions whole and in order, so
// that a seed always gives the same file (ids aside).
func toFile(ctx context.Context, cfg sim.Config, name string, stdout io.Writer) (sim.Summary, string, error) {
	cfg.Ordered = true
	out, err := output.JSONL(name, stdout)
	if err != nil {
		return sim.Summary{}, "", fmt.Errorf("-out: %w", err)
	}
	return run(ctx, cfg, out)
}

// run runs cfg into out and closes it: what was made is delivered even
// when the run stopped early.
func run(ctx context.Context, cfg sim.Config, out *output.Output) (sim.Summary, string, error) {
	sum, err := sim.Run(ctx, cfg, out)
	return sum, out.Where, errors.Join(err, out.Close(ctx))
}

// toNATS publishes to the given server or an embedded one; the rules come
// from the bucket unless a file gave them. With Out as well, the events go
// to the file and only the rules come from NATS.
func toNATS(ctx context.Context, cfg SimulateConfig, stdout io.Writer) (sim.Summary, string, error) {
	conn := cfg.NATS
	where := conn.URL
	if conn.URL == "" {
		if err := checkStoreFree(cfg.StoreDir); err != nil {
			return sim.Summary{}, "", err
		}
		srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: cfg.StoreDir}, cfg.Log)
		if err != nil {
			return sim.Summary{}, "", err
		}
		defer srv.Close()
		conn.InProcess, conn.Name = srv.NATS(), "evosignal-agentsim"
		where = "the embedded server (store " + cfg.StoreDir + ")"
	}
	nc, err := bus.Connect(conn, cfg.Log)
	if err != nil {
		return sim.Summary{}, "", err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return sim.Summary{}, "", fmt.Errorf("jetstream: %w", err)
	}
	if cfg.Sim.Rules == nil && cfg.RulesBucket != "" {
		stop, err := watchRules(ctx, js, cfg.RulesBucket, cfg.Sim.Scenario.Fleet.Agents, &cfg.Sim, cfg.Log)
		if err != nil {
			return sim.Summary{}, "", err
		}
		defer stop()
	}
	if cfg.Out != "" {
		return toFile(ctx, cfg.Sim, cfg.Out, stdout)
	}
	if _, err := js.Stream(ctx, cfg.Stream.Name); errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err := bus.EnsureStream(ctx, js, cfg.Stream); err != nil {
			return sim.Summary{}, "", err
		}
	} else if err != nil {
		return sim.Summary{}, "", fmt.Errorf("look up stream %s: %w", cfg.Stream.Name, err)
	}
	out, err := output.Publish(js, nil, agent.PublisherConfig{Prefix: cfg.Stream.Prefix}, "stream "+cfg.Stream.Name+" on "+where)
	if err != nil {
		return sim.Summary{}, "", err
	}
	return run(ctx, cfg.Sim, out)
}

// checkStoreFree refuses the default store while a server listens on the
// default address: most likely `ingest` with its embedded server on that
// same store, which a second server would corrupt (a JetStream store has
// no lock).
func checkStoreFree(storeDir string) error {
	if storeDir != DefaultStore {
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
