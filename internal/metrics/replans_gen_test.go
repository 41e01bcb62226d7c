package metrics

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// popModel is a population of agent sessions with known probabilities. The
// replans, trend and effect analyzers must recover them from the events it
// generates (see TestRecoversKnownProbabilities).
type popModel struct {
	Sessions int
	Start    time.Time // 00:00 UTC of the first day
	Days     int       // sessions start uniformly over this many days

	Types []popType // drawn by weight; Name "" is an unknown task type

	RulesetProb float64   // the session loads rule set "rs-gen", then applies one of Rules, uniformly
	Rules       []popRule //
	DayShift    float64   // added to the success probability per day after the first

	MoreReplanProb float64 // after a valid replan, the probability of another one…
	MaxReplans     int     // …up to this many
	InvalidProb    float64 // one rejected update_task_plan call, before any valid one

	OpenProb      float64 // the session never ends
	MisreportProb float64 // the agent reports one replan more than it made

	ToolFailProb     float64 // per real tool call, on the first day
	ToolFailDayShift float64 // added per day
	StripProbs       [3]float64

	FirstReplanMin, FirstReplanMax time.Duration // first attempt, uniformly after the start
}

type popType struct {
	Name                            string
	Weight, ReplanProb, SuccessProb float64
}

type popRule struct {
	ID           string
	SuccessShift float64
}

// popTestModel is the population the recovery test uses.
func popTestModel() popModel {
	return popModel{
		Sessions: 4000,
		Start:    time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC),
		Days:     4,
		Types: []popType{
			{Name: "coding", Weight: 0.5, ReplanProb: 0.6, SuccessProb: 0.5},
			{Name: "docs", Weight: 0.3, ReplanProb: 0.2, SuccessProb: 0.65},
			{Name: "", Weight: 0.2, ReplanProb: 0.35, SuccessProb: 0.6},
		},
		RulesetProb:      0.5,
		Rules:            []popRule{{"r-help", 0.15}, {"r-harm", -0.15}, {"r-nil", 0}},
		DayShift:         0.05,
		MoreReplanProb:   0.45,
		MaxReplans:       5,
		InvalidProb:      0.1,
		OpenProb:         0.05,
		MisreportProb:    0.03,
		ToolFailProb:     0.3,
		ToolFailDayShift: -0.05,
		StripProbs:       [3]float64{0.6, 0.3, 0.1},
		FirstReplanMin:   10 * time.Second,
		FirstReplanMax:   50 * time.Second,
	}
}

// generate writes the sessions of m, drawn with seed, to sink.
func (m popModel) generate(ctx context.Context, seed uint64, sink agent.Sink) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	var totalWeight float64
	for _, t := range m.Types {
		totalWeight += t.Weight
	}
	for i := range m.Sessions {
		tt := m.Types[len(m.Types)-1]
		for x, j := rng.Float64()*totalWeight, 0; j < len(m.Types); j++ {
			if x < m.Types[j].Weight {
				tt = m.Types[j]
				break
			}
			x -= m.Types[j].Weight
		}
		day := rng.IntN(m.Days)
		now := m.Start.AddDate(0, 0, day).Add(time.Duration(rng.IntN(20*3600)) * time.Second)
		start := now
		s := agent.NewSession(sink, "gen/host-1", fmt.Sprintf("g-%05d", i)).WithClock(func() time.Time { return now })
		tick := func(d time.Duration) { now = now.Add(d) }

		p := tt.SuccessProb + m.DayShift*float64(day)
		started := agent.SessionStarted{Goal: "generated", Agent: "gen", AgentVersion: "1.0.0", Model: "m-1",
			Tools: []string{"write_file", "complete_task", "update_task_plan"}, TaskType: tt.Name}
		if rng.Float64() < m.RulesetProb {
			r := m.Rules[rng.IntN(len(m.Rules))]
			started.Ruleset, started.Rules = "rs-gen", []string{r.ID}
			p += r.SuccessShift
		}
		if err := s.Started(ctx, started); err != nil {
			return err
		}
		hint := "write_file"
		task := agent.Task{ID: 1, Description: "generated task", ToolHint: &hint}
		tick(500 * time.Millisecond)
		if err := s.PlanCreated(ctx, agent.PlanCreated{Tasks: []agent.Task{task}, Origin: events.OriginModel}); err != nil {
			return err
		}
		strips := 0
		if x := rng.Float64(); x >= m.StripProbs[0] {
			strips = 1
			if x >= m.StripProbs[0]+m.StripProbs[1] {
				strips = 2
			}
		}
		for range strips {
			tick(time.Millisecond)
			if err := s.HintStripped(ctx, agent.HintStripped{TaskID: 1, ToolHint: "hallucinated", Phase: events.PhasePlan, Reason: events.StripUnavailable}); err != nil {
				return err
			}
		}

		invalid := rng.Float64() < m.InvalidProb
		valid := 0
		if rng.Float64() < tt.ReplanProb {
			valid = 1
			for valid < m.MaxReplans && rng.Float64() < m.MoreReplanProb {
				valid++
			}
		}
		attempts := valid
		if invalid {
			attempts++
		}
		for n := 1; n <= attempts; n++ {
			if n == 1 {
				now = start.Add(m.FirstReplanMin + time.Duration(rng.Int64N(int64(m.FirstReplanMax-m.FirstReplanMin))))
			} else {
				tick(time.Second)
			}
			u := agent.PlanUpdated{Replan: int64(n), Trigger: events.TriggerToolFailures, Reason: "generated",
				Tasks: []agent.Task{task}, Kept: []int64{}, Dropped: []agent.Task{}, OverCap: n >= 3, Valid: true}
			if invalid && n == 1 {
				u.Trigger, u.Tasks, u.Valid, u.Error = events.TriggerModel, []agent.Task{}, false, "empty task list"
			}
			if err := s.PlanUpdated(ctx, u); err != nil {
				return err
			}
		}

		failProb := m.ToolFailProb + m.ToolFailDayShift*float64(day)
		calls, failed := 1+rng.IntN(3), 0
		for range calls {
			tick(time.Second)
			id := int64(1)
			c := agent.ToolCalled{TaskID: &id, Tool: "write_file", Hint: &hint, OK: true, DurationMS: 5}
			if rng.Float64() < failProb {
				c.OK, c.ErrorKind, c.Error = false, "exit_status", "exit status 1"
				failed++
			}
			if err := s.ToolCalled(ctx, c); err != nil {
				return err
			}
		}
		tick(time.Second)
		id := int64(1)
		if err := s.ToolCalled(ctx, agent.ToolCalled{TaskID: &id, Tool: "complete_task", Hint: &hint, OK: true, DurationMS: 1, Control: true}); err != nil {
			return err
		}
		if rng.Float64() < m.OpenProb {
			continue
		}
		outcome := events.OutcomeFailure
		if rng.Float64() < p {
			outcome = events.OutcomeSuccess
		}
		reported := int64(attempts)
		if rng.Float64() < m.MisreportProb {
			reported++
		}
		tick(time.Second)
		if err := s.Ended(ctx, agent.SessionEnded{Outcome: outcome, Replans: reported, ToolCalls: int64(calls + 1),
			FailedToolCalls: int64(failed), Iterations: int64(calls + 2), DurationMS: now.Sub(start).Milliseconds()}); err != nil {
			return err
		}
	}
	return nil
}

// popDB loads the sessions of m, drawn with seed, into a new database and
// returns it as a Source.
func popDB(tb testing.TB, m popModel, seed uint64) Source {
	tb.Helper()
	d := testdb.New(tb, testdb.Options{})
	d.Load(tb, testdb.Generate(tb, "generated", func(ctx context.Context, sink agent.Sink) error {
		return m.generate(ctx, seed, sink)
	}))
	return DB{DB: d.Store().DB()}
}

// popCell is one combination of task type, day and rule (-1: no rule set),
// with its probability.
type popCell struct {
	t    popType
	day  int
	rule int
	prob float64
}

// cells enumerates the population.
func (m popModel) cells() []popCell {
	var total float64
	for _, t := range m.Types {
		total += t.Weight
	}
	var out []popCell
	for _, t := range m.Types {
		for d := range m.Days {
			base := t.Weight / total / float64(m.Days)
			out = append(out, popCell{t, d, -1, base * (1 - m.RulesetProb)})
			for r := range m.Rules {
				out = append(out, popCell{t, d, r, base * m.RulesetProb / float64(len(m.Rules))})
			}
		}
	}
	return out
}

func (m popModel) success(c popCell) float64 {
	p := c.t.SuccessProb + m.DayShift*float64(c.day)
	if c.rule >= 0 {
		p += m.Rules[c.rule].SuccessShift
	}
	return p
}

// replanDist is P(valid replans = k | the session replans), k = 1…MaxReplans.
func (m popModel) replanDist() []float64 {
	d := make([]float64, m.MaxReplans+1)
	q := 1.0
	for k := 1; k < m.MaxReplans; k++ {
		d[k] = q * (1 - m.MoreReplanProb)
		q *= m.MoreReplanProb
	}
	d[m.MaxReplans] = q
	return d
}

// expect is E[f(cell) | cell in sel] over the population.
func (m popModel) expect(sel func(popCell) bool, f func(popCell) float64) float64 {
	var num, den float64
	for _, c := range m.cells() {
		if sel(c) {
			num += c.prob * f(c)
			den += c.prob
		}
	}
	return num / den
}
