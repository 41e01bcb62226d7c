// Package inferbench measures the inference of implicit re-decisions
// (internal/infer) against explicit replans: it takes sessions that made
// explicit replans — simulated by internal/workshop/sim, or recorded as event files
// — hides their plan events, runs the rule, and reports precision and
// recall per scenario. The rule's parameters are tuned on one set of seeds
// and scenarios and reported on another. cmd/inferbench prints its report;
// docs/inferred-replans.md holds the figures.
package inferbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/infer"
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

// Scenario is one source of sessions with explicit replans: a simulator
// scenario (run once per seed) or a file of recorded events (seeds do not
// apply).
type Scenario struct {
	Name string
	Sim  *sim.Scenario // nil for an events file
	File string        // JSON lines of events, when Sim is nil
	// Tune: the scenario's sessions from the tuning seeds take part in
	// tuning. Scenarios without Tune are held out entirely.
	Tune bool
}

// Config is one benchmark run.
type Config struct {
	Scenarios   []Scenario
	TuneSeeds   []uint64
	ReportSeeds []uint64
	Sessions    int // per scenario and seed
	// Window is how many calls apart an inferred re-decision and an
	// explicit replan may be and still match (0: the same position).
	Window int
	// Grid is the rules tuning chooses from, in order of preference on a
	// tie of F1.
	Grid []infer.Rule
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if len(c.Scenarios) == 0 {
		errs = append(errs, errors.New("no scenario"))
	}
	for _, s := range c.Scenarios {
		if (s.Sim == nil) == (s.File == "") {
			errs = append(errs, fmt.Errorf("scenario %q: want a simulator scenario or an events file", s.Name))
		}
		if s.Tune && s.Sim == nil {
			errs = append(errs, fmt.Errorf("scenario %q: only simulated scenarios can be tuned on", s.Name))
		}
	}
	if len(c.TuneSeeds) == 0 || len(c.ReportSeeds) == 0 {
		errs = append(errs, errors.New("want tuning seeds and report seeds"))
	}
	for _, s := range c.TuneSeeds {
		if slices.Contains(c.ReportSeeds, s) {
			errs = append(errs, fmt.Errorf("seed %d is both a tuning and a report seed", s))
		}
	}
	if c.Sessions < 1 {
		errs = append(errs, fmt.Errorf("sessions %d: want ≥ 1", c.Sessions))
	}
	if c.Window < 0 {
		errs = append(errs, fmt.Errorf("window %d is negative", c.Window))
	}
	if len(c.Grid) == 0 {
		errs = append(errs, errors.New("empty grid"))
	}
	for i, r := range c.Grid {
		if err := r.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("grid rule %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// DefaultGrid is every combination of a minimum streak of 1 to 4 failures,
// families per tool or infer.DefaultFamilies, and no cap or a cap of 3 (the
// usual soft cap on replans): 16 rules, simplest first.
func DefaultGrid() []infer.Rule {
	var g []infer.Rule
	for _, cap := range []int{0, 3} {
		for _, fams := range []map[string]string{nil, infer.DefaultFamilies()} {
			for k := 1; k <= 4; k++ {
				g = append(g, infer.Rule{MinFailures: k, Families: fams, Cap: cap})
			}
		}
	}
	return g
}

// Row is one rule's or one scenario's score.
type Row struct {
	Name    string      `json:"name"`
	HeldOut bool        `json:"held_out,omitempty"` // not seen in tuning
	Score   infer.Score `json:"score"`
}

// Report is a benchmark's result.
type Report struct {
	Rule        infer.Rule `json:"-"`
	RuleName    string     `json:"rule"`
	Grid        []Row      `json:"grid"`         // each grid rule on the tuning set
	Tuning      Row        `json:"tuning"`       // the chosen rule on the tuning set
	PerScenario []Row      `json:"per_scenario"` // the chosen rule on the report set
	Total       Row        `json:"total"`        // the report set, all scenarios
}

// Run simulates (or reads) every scenario, tunes the rule on the tuning
// set, and scores the chosen rule per scenario on the report set.
func Run(ctx context.Context, cfg Config) (Report, error) {
	var rep Report
	if err := cfg.Validate(); err != nil {
		return rep, fmt.Errorf("infer bench: %w", err)
	}
	var tuneSet []infer.Session
	for _, sc := range cfg.Scenarios {
		if !sc.Tune {
			continue
		}
		ss, err := simulate(ctx, sc.Sim, cfg.TuneSeeds, cfg.Sessions)
		if err != nil {
			return rep, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		tuneSet = append(tuneSet, ss...)
	}
	best := -1.0
	for _, r := range cfg.Grid {
		s := infer.Evaluate(r, tuneSet, cfg.Window)
		rep.Grid = append(rep.Grid, Row{Name: RuleName(r), Score: s})
		if s.F1() > best {
			best, rep.Rule, rep.Tuning = s.F1(), r, Row{Name: "tuning set", Score: s}
		}
	}
	rep.RuleName = RuleName(rep.Rule)
	rep.Total.Name = "all (report set)"
	for _, sc := range cfg.Scenarios {
		var ss []infer.Session
		var err error
		if sc.Sim != nil {
			ss, err = simulate(ctx, sc.Sim, cfg.ReportSeeds, cfg.Sessions)
		} else {
			ss, err = readEvents(sc.File)
		}
		if err != nil {
			return rep, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		row := Row{Name: sc.Name, HeldOut: !sc.Tune, Score: infer.Evaluate(rep.Rule, ss, cfg.Window)}
		rep.PerScenario = append(rep.PerScenario, row)
		rep.Total.Score.Add(row.Score)
	}
	return rep, nil
}

// ChosenRule is the rule the bench chose when last run on its defaults
// (docs/inferred-replans.md, "Chosen rule"): a change of tool after at
// least one failed call, every tool its own family, at most 3 per session.
// queries/include/inferred_rule.sql applies it to the stored tool calls;
// the tests of that view (internal/store) and of the report hold them to it.
func ChosenRule() infer.Rule { return infer.Rule{MinFailures: 1, Cap: 3} }

// RuleName writes a rule's parameters.
func RuleName(r infer.Rule) string {
	fams := "tool"
	if r.Families != nil {
		fams = "family"
	}
	name := fmt.Sprintf("k=%d %s", r.MinFailures, fams)
	if r.Cap > 0 {
		name += fmt.Sprintf(" cap=%d", r.Cap)
	}
	return name
}

// collector is an agent.Sink that keeps the events it is sent.
type collector struct {
	mu  sync.Mutex
	evs []*events.Event
}

func (c *collector) Send(_ context.Context, e *events.Event) error {
	c.mu.Lock()
	c.evs = append(c.evs, e)
	c.mu.Unlock()
	return nil
}

// simulate runs sc once per seed and returns the sessions, plans hidden.
func simulate(ctx context.Context, sc *sim.Scenario, seeds []uint64, sessions int) ([]infer.Session, error) {
	var out []infer.Session
	for _, seed := range seeds {
		c := &collector{}
		if _, err := sim.Run(ctx, sim.Config{Scenario: sc, Seed: seed, Sessions: sessions, Concurrency: 1, Ordered: true}, c); err != nil {
			return nil, fmt.Errorf("simulate seed %d: %w", seed, err)
		}
		ss, err := infer.FromEvents(c.evs)
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed, err)
		}
		out = append(out, ss...)
	}
	return out, nil
}

// readEvents reads a JSON-lines events file into sessions, plans hidden.
func readEvents(path string) ([]infer.Session, error) {
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer f.Close()
	var evs []*events.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		e, err := events.Decode(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("read events %s line %d: %w", path, n, err)
		}
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read events %s: %w", path, err)
	}
	return infer.FromEvents(evs)
}
