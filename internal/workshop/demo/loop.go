package demo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/rules"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/output"
	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

// Generation is one point of the evolution curve. Rates are over the
// generation's ended sessions; failure_rate is over their real tool calls
// (control calls excluded). Rates are null when their denominator is 0.
type Generation struct {
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
	// TokensPerSession is the model calls' tokens (input + output) per
	// ended session; ReplanTokensPerSession the part of it spent after a
	// session's first replan (analyze cost -view segments: between_replans
	// and after_last_replan), over all ended sessions: what replanning cost.
	TokensPerSession       *float64 `json:"tokens_per_session"`
	ReplanTokensPerSession *float64 `json:"replan_tokens_per_session"`
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
	// Planted is the version published after this generation with harmful
	// rules planted among the learned ones (Config.PlantHarmful);
	// RolledBack the version whose harmful randomised effect made the
	// guard publish the last good set instead of the learned one.
	Planted    string `json:"planted,omitempty"`
	RolledBack string `json:"rolled_back,omitempty"`
	// Retired are the rules the guard retired after this generation, each
	// harmful alone by its own randomised effect (Config.RuleHoldout).
	Retired []string `json:"retired,omitempty"`
}

// runLoop runs the generations: simulate (the agents load the rules the
// bucket holds), ingest, read the curve, learn rules from all sessions so
// far, publish them, and wait until every agent's watcher has them.
func runLoop(ctx context.Context, cfg Config, storeDir, db string) (_ []Generation, err error) {
	say := func(format string, args ...any) { fmt.Fprintf(cfg.Progress, "agentsim demo: "+format+"\n", args...) }
	pc := pipeline.DefaultConfig()
	pc.DB = db
	pc.Server = bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: storeDir} // in-process connections only
	pc.NATS.Name = "evosignal-agentsim-demo"
	rb := bus.DefaultRulesBucket()
	pc.Rules = &rb
	pc.Ingest.FlushInterval = 50 * time.Millisecond
	pc.Log = cfg.Log
	e, err := pipeline.Start(ctx, pc)
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
		w, err := rules.Watch(ctx, e.JetStream(), ruleset.DefaultBucket, name)
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
	src := metrics.DB{DB: e.Store().DB()}
	tax := taxonomy.Default()

	var curve []Generation
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
		sum, err := simulateGeneration(ctx, e.JetStream(), sim.Config{
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
		last, err := e.WaitIngested(ctx)
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
		if g+1 == cfg.PlantHarmful {
			global = plantHarmful(global, cfg.Scenario)
			for k, set := range byAgent {
				byAgent[k] = plantHarmful(set, cfg.Scenario)
			}
		}
		metrics.SetHoldout(cfg.Holdout, global)
		metrics.SetRuleHoldout(cfg.RuleHoldout, global)
		for _, set := range byAgent {
			metrics.SetHoldout(cfg.Holdout, set)
			metrics.SetRuleHoldout(cfg.RuleHoldout, set)
		}
		if g+1 == cfg.PlantHarmful {
			// No guard after this generation (the planted set is to be
			// caught by the next), but the sets carry on what was retired.
			for key, set := range allSets(global, byAgent) {
				hist, err := rules.History(ctx, e.KV(), key)
				if err != nil {
					return curve, fmt.Errorf("generation %d: %w", g, err)
				}
				if len(hist) > 0 {
					metrics.Retire(set, &hist[0], nil, metrics.EffectOnFirstTry, until)
				}
			}
			gen.Planted = global.Version
			say("generation %d/%d: planted harmful rules: the next generation runs %s", g, cfg.Generations, global.Version)
		} else if g < cfg.Generations {
			// The guard: a set in force whose randomised effect is harmful
			// is replaced by the key's last good one.
			rows, err := metrics.Randomised(ctx, src, metrics.Filter{Until: until}, metrics.EffectOnFirstTry)
			if err != nil {
				return curve, fmt.Errorf("generation %d: %w", g, err)
			}
			sets := allSets(global, byAgent)
			rolled, err := metrics.GuardKeys(rows, sets, func(key string) ([]ruleset.RuleSet, error) { return rules.History(ctx, e.KV(), key) },
				metrics.EffectOnFirstTry, until)
			if err != nil {
				return curve, fmt.Errorf("generation %d: %w", g, err)
			}
			for _, x := range rolled {
				if x.RolledBack {
					r := x.Set.RolledBack
					gen.RolledBack = r.Version
					say("generation %d/%d: %s/%s's randomised effect is harmful (%+.1f pts [%+.1f, %+.1f]): rolled back to %s",
						g, cfg.Generations, ruleset.DefaultBucket, x.Key, 100*r.Effect, 100*r.Lo, 100*r.Hi, orNone(x.Set.Version))
				}
				for _, r := range x.Retired {
					if !slices.Contains(gen.Retired, r.Rule) {
						gen.Retired = append(gen.Retired, r.Rule)
					}
					say("generation %d/%d: %s/%s: rule %s retired, harmful alone (%+.1f pts [%+.1f, %+.1f], %d applying / %d holding it out)",
						g, cfg.Generations, ruleset.DefaultBucket, x.Key, r.Rule, 100*r.Effect, 100*r.Lo, 100*r.Hi, r.SessionsRules, r.SessionsHoldout)
				}
			}
			global = sets[ruleset.GlobalKey]
			delete(sets, ruleset.GlobalKey)
			byAgent = sets
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
		want, err := publishRules(ctx, e.KV(), global, byAgent)
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
	out, err := output.Publish(js, nil, agent.PublisherConfig{}, "")
	if err != nil {
		return sim.Summary{}, err
	}
	sum, _, err := run(ctx, cfg, out)
	return sum, err
}

// readGeneration reads the curve point of the sessions that started in
// [since, until) through the analyzers: the session rates from the replans
// analysis (one row: no grouping), the tool calls and the rule sets loaded
// from the trend's days.
func readGeneration(ctx context.Context, src metrics.Source, g int, since, until time.Time) (Generation, error) {
	f := metrics.Filter{Since: since, Until: until}
	rep, err := metrics.Replans(ctx, src, f)
	if err != nil {
		return Generation{}, fmt.Errorf("generation %d: read the curve: %w", g, err)
	}
	days, err := metrics.Trend(ctx, src, f, metrics.EveryDay)
	if err != nil {
		return Generation{}, fmt.Errorf("generation %d: read the curve: %w", g, err)
	}
	segs, err := metrics.CostBySegment(ctx, src, f)
	if err != nil {
		return Generation{}, fmt.Errorf("generation %d: read the cost: %w", g, err)
	}
	r := rep.Rows[0]
	var cost metrics.ReplanCost
	for _, sg := range segs {
		cost.Add(sg)
	}
	gen := Generation{Generation: g, Since: since, Until: until, Rules: []string{},
		Sessions: r.Sessions, FirstTrySuccessRate: r.FirstTrySuccessRate, SuccessRate: r.SuccessRate,
		AvgReplans: r.AvgReplans, ReplanRate: r.ReplanRate, StrippedHints: r.StrippedHints}
	rulesets := map[string]bool{}
	for _, d := range days {
		gen.RealToolCalls += d.RealToolCalls
		gen.FailedRealToolCalls += d.FailedRealToolCalls
		for _, v := range d.Rulesets {
			rulesets[v] = true
		}
	}
	gen.FailureRate = metrics.Rate(gen.FailedRealToolCalls, gen.RealToolCalls)
	gen.TokensPerSession, gen.ReplanTokensPerSession = metrics.Rate(cost.Tokens, cost.Sessions), metrics.Rate(cost.ReplanTokens, cost.Sessions)
	if len(rulesets) > 0 {
		v := strings.Join(slices.Sorted(maps.Keys(rulesets)), ",")
		gen.Ruleset = &v
	}
	return gen, nil
}

// plantHarmful is rs with a harmful rule added per task type: avoid the
// type's best tool, instead its worst one (the scenario's ground truth).
func plantHarmful(rs *ruleset.RuleSet, sc *sim.Scenario) *ruleset.RuleSet {
	out := *rs
	out.Rules = slices.Clone(rs.Rules)
	for _, tt := range sc.Truth().Types {
		worst := ""
		for _, t := range sc.Tools {
			if t.Name != tt.BestTool && (worst == "" || sc.Success(t.Name, tt.TaskType) < sc.Success(worst, tt.TaskType)) {
				worst = t.Name
			}
		}
		out.Rules = append(out.Rules, ruleset.Rule{ID: "planted:" + tt.TaskType + ":" + tt.BestTool, Kind: ruleset.KindAvoid,
			TaskType: tt.TaskType, ToolHint: tt.BestTool, Instead: worst, Instruction: "planted by the demo: harmful on purpose"})
	}
	out.Version = metrics.RuleSetVersion(out.Rules)
	return &out
}

func orNone(v string) string {
	if v == "" {
		return "no rules"
	}
	return v
}

// allSets is the global set and the agents' sets by their keys.
func allSets(global *ruleset.RuleSet, byAgent map[string]*ruleset.RuleSet) map[string]*ruleset.RuleSet {
	sets := map[string]*ruleset.RuleSet{ruleset.GlobalKey: global}
	maps.Copy(sets, byAgent)
	return sets
}
