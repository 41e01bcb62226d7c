package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/rules"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/sim"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// loopConfig is one demo run.
type loopConfig struct {
	Scenario    *sim.Scenario
	Generations int
	Sessions    int // per generation
	Concurrency int // 0: the scenario's
	Seed        uint64
	StoreDir    string // JetStream store
	DB          string // DuckDB file
	Rules       metrics.RulesConfig
	Progress    io.Writer // progress lines
	Log         *slog.Logger
}

// generation is one point of the evolution curve. Rates are over the
// generation's ended sessions; failure_rate is over their real tool calls
// (control calls excluded). Rates are null when their denominator is 0.
type generation struct {
	Generation          int      `json:"generation"`
	Sessions            int64    `json:"sessions"`
	FirstTrySuccessRate *float64 `json:"first_try_success_rate"`
	AvgReplans          *float64 `json:"avg_replans"`
	FailureRate         *float64 `json:"failure_rate"`
	SuccessRate         *float64 `json:"success_rate"`
	ReplanRate          *float64 `json:"replan_rate"`
	RealToolCalls       int64    `json:"real_tool_calls"`
	FailedRealToolCalls int64    `json:"failed_real_tool_calls"`
	StrippedHints       int64    `json:"stripped_hints"`
	Events              int64    `json:"events"`
	// Ruleset is the rule set version the generation's sessions loaded
	// (from the database; several are joined with ","), null for none;
	// Rules are its rule ids.
	Ruleset *string  `json:"ruleset"`
	Rules   []string `json:"rules"`
	// LearnedRuleset and LearnedRules are what analyze rules learned from
	// every session up to this generation, published for the next.
	LearnedRuleset string   `json:"learned_ruleset"`
	LearnedRules   []string `json:"learned_rules"`
	// Since and Until bound the generation's sessions in simulated time.
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
}

// runLoop runs the generations: simulate (the agents load the rules the
// bucket holds), ingest, read the curve, learn rules from all sessions so
// far, publish them, and wait until every agent's watcher has them.
func runLoop(ctx context.Context, cfg loopConfig) (_ []generation, err error) {
	say := func(format string, args ...any) { fmt.Fprintf(cfg.Progress, "agentsim demo: "+format+"\n", args...) }
	e, err := openEnv(ctx, cfg.StoreDir, cfg.DB, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, e.Close()) }()

	names := cfg.Scenario.Fleet.Agents
	watchers := map[string]*rules.Watcher{}
	defer func() {
		for _, w := range watchers {
			err = errors.Join(err, w.Close())
		}
	}()
	for _, name := range names {
		w, err := rules.Watch(ctx, e.js, ruleset.DefaultBucket, name)
		if err != nil {
			return nil, err
		}
		watchers[name] = w
	}

	sessions := cfg.Sessions
	if sessions <= 0 {
		sessions = cfg.Scenario.Fleet.Sessions
	}
	// Each generation gets its own stretch of simulated time (whole days),
	// so that `analyze trend -every day` shows one row per generation.
	span := time.Duration(sessions)*time.Duration(cfg.Scenario.Fleet.SessionInterval) + time.Hour
	gap := (span + 24*time.Hour - 1).Truncate(24 * time.Hour)
	src := metrics.DB{DB: e.st.DB()}
	tax := taxonomy.Default()

	var curve []generation
	for g := 1; g <= cfg.Generations; g++ {
		since := sim.DefaultStart.Add(time.Duration(g-1) * gap)
		until := since.Add(gap)
		loaded := watchers[names[0]].Current()
		ruleNote := "no rules"
		if loaded.Version != "" {
			ruleNote = fmt.Sprintf("rule set %s (%d rules)", loaded.Version, len(loaded.Rules))
		}
		say("generation %d/%d: simulating %d sessions with %s", g, cfg.Generations, sessions, ruleNote)
		t0 := time.Now()
		sum, err := simulateGeneration(ctx, e.js, sim.Config{
			Scenario:    cfg.Scenario,
			Seed:        cfg.Seed ^ uint64(g)<<32,
			Sessions:    sessions,
			Concurrency: cfg.Concurrency,
			Start:       since,
			Rules:       func(agent string) ruleset.RuleSet { return watchers[agent].Current() },
		})
		if err != nil {
			return curve, fmt.Errorf("generation %d: %w", g, err)
		}
		last, err := e.waitIngested(ctx)
		if err != nil {
			return curve, fmt.Errorf("generation %d: %w", g, err)
		}
		say("generation %d/%d: %d events published and ingested (stream seq %d) in %s",
			g, cfg.Generations, sum.Events, last, time.Since(t0).Round(time.Millisecond))

		gen, err := readGeneration(ctx, src, g, since, until)
		if err != nil {
			return curve, err
		}
		gen.Events = sum.Events
		gen.Rules = ruleIDs(watchers, names)

		// Learn from every session so far; "now" is the end of the
		// generation in simulated time.
		f := metrics.Filter{Until: until}
		global, err := metrics.LearnRules(ctx, src, f, tax, cfg.Rules, until)
		if err != nil {
			return curve, fmt.Errorf("generation %d: learn rules: %w", g, err)
		}
		byAgent, err := metrics.LearnRulesByAgent(ctx, src, f, tax, cfg.Rules, until)
		if err != nil {
			return curve, fmt.Errorf("generation %d: learn rules per agent: %w", g, err)
		}
		gen.LearnedRuleset = global.Version
		gen.LearnedRules = []string{}
		for _, r := range global.Rules {
			gen.LearnedRules = append(gen.LearnedRules, r.ID)
		}
		curve = append(curve, gen)
		if g == cfg.Generations {
			break // nothing runs with them; publishing would only confuse
		}
		want, err := publishRules(ctx, e.kv, global, byAgent)
		if err != nil {
			return curve, fmt.Errorf("generation %d: %w", g, err)
		}
		if err := waitRules(ctx, watchers, want); err != nil {
			return curve, fmt.Errorf("generation %d: %w", g, err)
		}
		say("generation %d/%d: learned %d rules (%s) from %d sessions; published to bucket %s (keys %s)",
			g, cfg.Generations, len(global.Rules), global.Version, int64(g)*int64(sessions), ruleset.DefaultBucket, strings.Join(slices.Sorted(maps.Keys(want)), ", "))
	}
	return curve, nil
}

// simulateGeneration publishes one generation's sessions and waits until
// JetStream has acknowledged every event.
func simulateGeneration(ctx context.Context, js jetstream.JetStream, cfg sim.Config) (sim.Summary, error) {
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{})
	if err != nil {
		return sim.Summary{}, err
	}
	sum, err := sim.Run(ctx, cfg, pub)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if cerr := pub.Close(cctx); cerr != nil {
		err = errors.Join(err, fmt.Errorf("publish: %w", cerr))
	}
	return sum, err
}

// readGeneration reads the curve point of the sessions that started in
// [since, until) through the analyzers' trend query, summing its days.
func readGeneration(ctx context.Context, src metrics.Source, g int, since, until time.Time) (generation, error) {
	rows, err := metrics.Trend(ctx, src, metrics.Filter{Since: since, Until: until}, metrics.EveryDay)
	if err != nil {
		return generation{}, fmt.Errorf("generation %d: read the curve: %w", g, err)
	}
	gen := generation{Generation: g, Since: since, Until: until, Rules: []string{}}
	var first, valid, replanned, successes int64
	rulesets := map[string]bool{}
	for _, r := range rows {
		gen.Sessions += r.Sessions
		first += r.FirstTrySuccesses
		successes += r.Successes
		valid += r.ValidReplans
		replanned += r.Replanned
		gen.RealToolCalls += r.RealToolCalls
		gen.FailedRealToolCalls += r.FailedRealToolCalls
		gen.StrippedHints += r.StrippedHints
		for _, v := range r.Rulesets {
			rulesets[v] = true
		}
	}
	gen.FirstTrySuccessRate = ratio(first, gen.Sessions)
	gen.SuccessRate = ratio(successes, gen.Sessions)
	gen.AvgReplans = ratio(valid, gen.Sessions)
	gen.ReplanRate = ratio(replanned, gen.Sessions)
	gen.FailureRate = ratio(gen.FailedRealToolCalls, gen.RealToolCalls)
	if len(rulesets) > 0 {
		v := strings.Join(slices.Sorted(maps.Keys(rulesets)), ",")
		gen.Ruleset = &v
	}
	return gen, nil
}

// publishRules publishes the rule sets as analyze rules -publish does
// (rules.Publish) and returns the version each key now holds; an agent
// without a key of its own gets the global one.
func publishRules(ctx context.Context, kv jetstream.KeyValue, global *ruleset.RuleSet, byAgent map[string]*ruleset.RuleSet) (map[string]string, error) {
	pubs, err := rules.Publish(ctx, kv, global, byAgent)
	if err != nil {
		return nil, err
	}
	want := map[string]string{}
	for _, p := range pubs {
		if p.Action == rules.Put || p.Action == rules.Unchanged {
			want[p.Key] = p.Version
		}
	}
	return want, nil
}

// waitRules waits until each watcher holds the version published for its
// agent (the global one when none was).
func waitRules(ctx context.Context, watchers map[string]*rules.Watcher, want map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for name, w := range watchers {
		v, ok := want[name]
		if !ok {
			v = want[ruleset.GlobalKey]
		}
		for {
			ch := w.Changed()
			if w.Current().Version == v {
				break
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return fmt.Errorf("agent %s did not see rule set %s (holds %q; last problem: %v): %w", name, v, w.Current().Version, w.Err(), ctx.Err())
			}
		}
	}
	return nil
}

// ruleIDs is the union of the rule ids the agents hold, sorted.
func ruleIDs(watchers map[string]*rules.Watcher, names []string) []string {
	ids := map[string]bool{}
	for _, n := range names {
		for _, id := range watchers[n].Current().IDs() {
			ids[id] = true
		}
	}
	return append([]string{}, slices.Sorted(maps.Keys(ids))...)
}
