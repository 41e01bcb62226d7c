// Package sim is the simulated fleet behind cmd/agentsim: agents that drive
// the reference planner (agent/planner) with a simulated model instead of an
// LLM, as a scenario describes (scenario.go, docs/agentsim.md). A run is
// seeded and reproducible: the same scenario, seed and start time give the
// same sessions, event for event, with the same times (a simulated clock),
// whatever the concurrency; only the ids (UUIDv7) differ.
//
// It is the load generator of the benchmarks and the source of known ground
// truth (Truth) for analyzer tests. It knows neither NATS nor DuckDB: events
// go to an agent.Sink (a Publisher, a JSONLWriter), rules come from a
// function (an agent/rules Watcher's Current).
package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
)

// DefaultStart is the simulated time of the first session when Config.Start
// is zero: fixed, so that runs are reproducible, times included.
var DefaultStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// Config is one run of the fleet.
type Config struct {
	Scenario *Scenario
	// Seed selects the run: the same seed gives the same sessions.
	Seed uint64
	// Sessions and Concurrency override the scenario's fleet when > 0.
	Sessions    int
	Concurrency int
	// Start is the simulated start of session 0; session n starts
	// n × the scenario's session_interval later. Zero means DefaultStart.
	Start time.Time
	// Rate caps the events sent per second (wall clock) across the fleet;
	// 0 sends as fast as the sink takes them.
	Rate float64
	// Ordered delivers each session's events together, sessions in order
	// (session 0 first), so that the output of a seed is the same whatever
	// the concurrency (JSONL). Otherwise sessions interleave.
	Ordered bool
	// Rules returns the rule set an agent loads at session start (an
	// agent/rules Watcher's Current); nil runs without rules.
	Rules func(agent string) ruleset.RuleSet
	// Progress, if set, is called after each session with the number of
	// sessions done, from the goroutines running them.
	Progress func(done int)
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.Scenario == nil {
		errs = append(errs, errors.New("no scenario"))
	}
	if c.Sessions < 0 {
		errs = append(errs, fmt.Errorf("sessions %d is negative", c.Sessions))
	}
	if c.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("concurrency %d is negative", c.Concurrency))
	}
	if !(c.Rate >= 0) {
		errs = append(errs, fmt.Errorf("rate %v: want events per second ≥ 0", c.Rate))
	}
	return errors.Join(errs...)
}

// Summary counts what a run did, from the simulator's side (the analyzers
// count the same from the events).
type Summary struct {
	Sessions        int64            `json:"sessions"`
	Successes       int64            `json:"successes"`
	FirstTry        int64            `json:"first_try_successes"` // success without any replan
	Failures        int64            `json:"failures"`
	Replans         int64            `json:"replans"`
	RealCalls       int64            `json:"real_tool_calls"`
	FailedCalls     int64            `json:"failed_real_tool_calls"`
	Events          int64            `json:"events"`
	EventsByType    map[string]int64 `json:"events_by_type"`
	RulesetsApplied map[string]int64 `json:"rulesets"` // sessions per rule set version loaded ("" for none)

	// The truth of analyze cost and analyze stuck, as the simulator
	// counted it: cost per outcome class (first_try_success,
	// success_after_replans, failure) and per plan segment (no_replan,
	// before_first_replan, between_replans, after_last_replan); the stuck
	// states (loop, churn, depth_limit, soft_cap, pending_at_end); the
	// visible replan triggers; what followed the failed hinted calls, per
	// "hint next_step".
	Cost         map[string]*CostTruth         `json:"cost"`
	Segments     map[string]*CostTruth         `json:"segments"`
	Stuck        map[string]*StuckTruth        `json:"stuck"`
	Triggers     map[string]*TriggerTruth      `json:"triggers"`
	AfterFailure map[string]*AfterFailureTruth `json:"after_failure"`
	// Arms counts the sessions of each holdout arm ("rules", "holdout";
	// none without a holdout) with their successes, first-try successes
	// and sessions that replanned: the truth of the randomised effect.
	Arms map[string]*ArmTruth `json:"arms,omitempty"`
	// RuleArms counts, per rule with a holdout of its own and per arm, the
	// sessions of the rules arm that applied it ("rules") or held it out
	// ("holdout"), as Arms does.
	RuleArms map[string]map[string]*ArmTruth `json:"rule_arms,omitempty"`
}

// ArmTruth is what the sessions of one holdout arm did.
type ArmTruth struct {
	Sessions  int64 `json:"sessions"`
	Successes int64 `json:"successes"`
	FirstTry  int64 `json:"first_try_successes"`
	Replanned int64 `json:"replanned"` // with at least one replan
}

func (s *Summary) add(r sessionResult, ruleset string, byType map[events.Type]int64) {
	s.Sessions++
	switch r.outcome {
	case events.OutcomeSuccess:
		s.Successes++
		if r.replans == 0 {
			s.FirstTry++
		}
	default:
		s.Failures++
	}
	s.Replans += r.replans
	s.RealCalls += r.realCalls
	s.FailedCalls += r.failedCalls
	if s.EventsByType == nil {
		s.EventsByType, s.RulesetsApplied = map[string]int64{}, map[string]int64{}
	}
	for t, n := range byType {
		s.Events += n
		s.EventsByType[string(t)] += n
	}
	s.RulesetsApplied[ruleset]++
	class := classFailure
	if r.outcome == events.OutcomeSuccess {
		class = classFirstTry
		if r.replans > 0 {
			class = classAfterReplan
		}
	}
	r.ledger.addTo(s, class, r.outcome == events.OutcomeSuccess)
	if r.arm != "" {
		if s.Arms == nil {
			s.Arms = map[string]*ArmTruth{}
		}
		get(s.Arms, r.arm).count(r)
	}
	for _, ra := range r.ruleArms {
		if s.RuleArms == nil {
			s.RuleArms = map[string]map[string]*ArmTruth{}
		}
		if s.RuleArms[ra[0]] == nil {
			s.RuleArms[ra[0]] = map[string]*ArmTruth{}
		}
		get(s.RuleArms[ra[0]], ra[1]).count(r)
	}
}

// count adds one session of the arm.
func (a *ArmTruth) count(r sessionResult) {
	a.Sessions++
	if r.outcome == events.OutcomeSuccess {
		a.Successes++
		if r.replans == 0 {
			a.FirstTry++
		}
	}
	if r.replans > 0 {
		a.Replanned++
	}
}

// Run simulates the sessions and sends their events to sink. It returns
// when every session ended, or at the first error (a sink that fails, ctx
// done), after its goroutines stopped; the summary covers the sessions
// that ended.
func Run(ctx context.Context, cfg Config, sink agent.Sink) (Summary, error) {
	var sum Summary
	if err := cfg.Validate(); err != nil {
		return sum, fmt.Errorf("simulate: %w", err)
	}
	sc := cfg.Scenario
	sessions, conc := sc.Fleet.Sessions, sc.Fleet.Concurrency
	if cfg.Sessions > 0 {
		sessions = cfg.Sessions
	}
	if cfg.Concurrency > 0 {
		conc = cfg.Concurrency
	}
	start := cfg.Start
	if start.IsZero() {
		start = DefaultStart
	}
	if cfg.Rate > 0 {
		sink = newPacer(sink, cfg.Rate)
	}
	w := newWorld(sc)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ord := &orderer{waiting: map[int]chan struct{}{}}

	var mu sync.Mutex // guards sum
	one := func(n int) error {
		inst := n % sc.Fleet.Instances
		name := sc.Fleet.Agents[inst%len(sc.Fleet.Agents)]
		var rules ruleset.RuleSet
		if cfg.Rules != nil {
			rules = cfg.Rules(name)
		}
		start := start.Add(time.Duration(n) * time.Duration(sc.Fleet.SessionInterval))
		spec := sessionSpec{
			n:      n,
			id:     sessionID(cfg.Seed, n, start),
			agent:  name,
			source: fmt.Sprintf("%s/sim/worker-%d", name, inst+1),
			start:  start,
			rules:  rules,
			rng:    rand.New(rand.NewPCG(mix(cfg.Seed), mix(cfg.Seed^mix(uint64(n)+1)))),
			cost:   rand.New(rand.NewPCG(mix(cfg.Seed^0xc057), mix(cfg.Seed^mix(uint64(n)+1)^0xc057))),
		}
		t := &tally{byType: map[events.Type]int64{}}
		if cfg.Ordered {
			t.sink = &buffer{}
		} else {
			t.sink = sink
		}
		res, err := w.runSession(ctx, spec, t)
		if err != nil {
			return err
		}
		if cfg.Ordered {
			if err := ord.deliver(ctx, n, t.sink.(*buffer).events, sink); err != nil {
				return fmt.Errorf("session %d: %w", n, err)
			}
		}
		mu.Lock()
		sum.add(res, rules.Version, t.byType)
		done := int(sum.Sessions)
		mu.Unlock()
		if cfg.Progress != nil {
			cfg.Progress(done)
		}
		return nil
	}

	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(conc, sessions) {
		wg.Go(func() {
			for n := range jobs {
				if err := one(n); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
feed:
	for n := range sessions {
		select {
		case jobs <- n:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return sum, fmt.Errorf("simulate: %w", err)
	}
	return sum, nil
}

// mix is SplitMix64's finaliser: it spreads seeds and session numbers over
// the random sources' state.
// sessionID is session n's id: a UUIDv7 whose time is the session's start
// and whose other bits come from the seed and n, so that the same seed
// gives the same ids (and the same holdout arms), and another seed or start
// other ones.
func sessionID(seed uint64, n int, start time.Time) string {
	hi := mix(seed ^ mix(uint64(n)+0x5e55))
	lo := mix(hi ^ uint64(start.UnixNano()))
	ms := uint64(start.UnixMilli()) & (1<<48 - 1)
	return fmt.Sprintf("%08x-%04x-7%03x-%04x-%012x", ms>>16, ms&0xffff, hi&0xfff, 0x8000|lo>>48&0x3fff, lo&(1<<48-1))
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// tally counts a session's events by type on their way to sink.
type tally struct {
	sink   agent.Sink
	byType map[events.Type]int64 // one session: no lock needed
}

func (t *tally) Send(ctx context.Context, e *events.Event) error {
	t.byType[e.Type]++
	return t.sink.Send(ctx, e)
}

// buffer holds a session's events until its turn (Config.Ordered).
type buffer struct{ events []*events.Event }

func (b *buffer) Send(_ context.Context, e *events.Event) error {
	b.events = append(b.events, e)
	return nil
}

// orderer lets sessions deliver in the order of their numbers. Workers take
// sessions in order, so the lowest undelivered one is always running: the
// wait ends.
type orderer struct {
	mu      sync.Mutex
	next    int
	waiting map[int]chan struct{}
}

func (o *orderer) deliver(ctx context.Context, n int, evs []*events.Event, sink agent.Sink) error {
	o.mu.Lock()
	if o.next != n {
		ch := make(chan struct{})
		o.waiting[n] = ch
		o.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	} else {
		o.mu.Unlock()
	}
	for _, e := range evs {
		if err := sink.Send(ctx, e); err != nil {
			return err
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	if ch, ok := o.waiting[o.next]; ok {
		delete(o.waiting, o.next)
		close(ch)
	}
	return nil
}

var (
	_ agent.Sink = (*tally)(nil)
	_ agent.Sink = (*buffer)(nil)
)
