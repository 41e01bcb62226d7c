package sim

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/planner"
)

// world is a scenario prepared for drawing: cumulative weights, hints in a
// fixed order (map order must not leak into the random sequence).
type world struct {
	sc        *Scenario
	toolNames []string
	types     []*typeInfo
	typeCum   []float64
}

type typeInfo struct {
	*TaskType
	hints   []string  // the type's hinted tools, sorted
	weights []float64 // their weights
}

func newWorld(sc *Scenario) *world {
	w := &world{sc: sc, toolNames: sc.ToolNames()}
	var sum float64
	for i := range sc.TaskTypes {
		tt := &sc.TaskTypes[i]
		ti := &typeInfo{TaskType: tt}
		for _, h := range sortedKeys(tt.Hints) {
			if tt.Hints[h] > 0 {
				ti.hints = append(ti.hints, h)
				ti.weights = append(ti.weights, tt.Hints[h])
			}
		}
		w.types = append(w.types, ti)
		sum += tt.Weight
		w.typeCum = append(w.typeCum, sum)
	}
	return w
}

func (w *world) typeNamed(name string) *typeInfo {
	for _, t := range w.types {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// model is the simulated LLM of one session: every decision draws from the
// session's own random source, in the order the session makes them.
type model struct {
	w    *world
	rng  *rand.Rand
	cost *rand.Rand // tokens and churn (sessionSpec.cost)
	// kinds maps a description to its task type in a session whose plans
	// carry none (model.unlabeled_tasks): the simulation still knows it.
	kinds map[string]string
}

// kindOf is the task type of t: its task_type, or what kinds knows.
func (m *model) kindOf(t agent.Task) string {
	if t.TaskType != "" {
		return t.TaskType
	}
	return m.kinds[t.Description]
}

func (m *model) chance(p float64) bool { return m.rng.Float64() < p }

func (m *model) between(r Range) int { return r[0] + m.rng.IntN(r[1]-r[0]+1) }

func (m *model) pick(xs []string) string { return xs[m.rng.IntN(len(xs))] }

func (m *model) ms(r Range) time.Duration { return time.Duration(m.between(r)) * time.Millisecond }

func (m *model) think() time.Duration { return m.ms(m.w.sc.Model.ThinkMS) }

// taskType draws a task type by weight.
func (m *model) taskType() *typeInfo {
	x := m.rng.Float64() * m.w.typeCum[len(m.w.typeCum)-1]
	for i, c := range m.w.typeCum {
		if x < c {
			return m.w.types[i]
		}
	}
	return m.w.types[len(m.w.types)-1]
}

// object draws what the session works on ("" when the scenario has none).
func (m *model) object() string {
	if len(m.w.sc.Objects) == 0 {
		return ""
	}
	return m.pick(m.w.sc.Objects)
}

func (m *model) describe(tt *typeInfo, object string) string {
	return strings.ReplaceAll(m.pick(tt.Descriptions), "{object}", object)
}

// hint is the tool hint the model writes for a task of type tt: none, a
// random tool, a tool that does not exist, or one drawn from its beliefs.
func (m *model) hint(tt *typeInfo) *string {
	md := m.w.sc.Model
	x := m.rng.Float64()
	var h string
	switch {
	case x < md.NoHint:
		return nil
	case x < md.NoHint+md.RandomHint:
		h = m.pick(m.w.toolNames)
	case x < md.NoHint+md.RandomHint+md.Hallucinate:
		h = m.pick(md.HallucinatedTools)
	default:
		if len(tt.hints) == 0 {
			return nil
		}
		h = m.belief(tt, nil)
	}
	return &h
}

// belief draws a tool for tt from the model's beliefs, leaving out the
// tools in exclude; when its beliefs leave nothing, it picks uniformly
// among the other tools, and among all when every tool is excluded.
func (m *model) belief(tt *typeInfo, exclude map[string]bool) string {
	var names []string
	var weights []float64
	var sum float64
	for i, h := range tt.hints {
		if !exclude[h] {
			names = append(names, h)
			weights = append(weights, tt.weights[i])
			sum += tt.weights[i]
		}
	}
	if len(names) > 0 {
		x := m.rng.Float64() * sum
		for i, wt := range weights {
			if x < wt {
				return names[i]
			}
			x -= wt
		}
		return names[len(names)-1]
	}
	var rest []string
	for _, t := range m.w.toolNames {
		if !exclude[t] {
			rest = append(rest, t)
		}
	}
	if len(rest) == 0 {
		rest = m.w.toolNames
	}
	return m.pick(rest)
}

// tool is the tool the model calls for task: the task's hint, most of the
// time (FollowHint), else one from its beliefs.
func (m *model) tool(task agent.Task, tt *typeInfo, exclude map[string]bool) string {
	if task.ToolHint != nil && m.chance(m.w.sc.Model.FollowHint) {
		return *task.ToolHint
	}
	return m.belief(tt, exclude)
}

// errorKinds are the failure classes a simulated call reports.
var errorKinds = []string{"exit_status", "timeout", "not_found", "invalid_args"}

func (m *model) failure(tool, taskType string) (kind, text string) {
	kind = m.pick(errorKinds)
	return kind, "simulated " + kind + ": " + tool + " on a " + taskType + " task"
}

// call is one model call: the model's time passes, and the planner records
// the call with tokens drawn from the cost stream (an iteration, and an
// agent.model.called).
func (m *model) call(ctx context.Context, p *planner.Planner, clk *clock, l *ledger) error {
	took := m.think()
	clk.advance(took)
	md := m.w.sc.Model
	draw := func(r Range) int64 { return int64(r[0] + m.cost.IntN(r[1]-r[0]+1)) }
	in, out := draw(md.InputTokens), draw(md.OutputTokens)
	cached := int64(float64(in) * md.CachedShare)
	if _, err := p.ModelCall(ctx, planner.ModelCall{InputTokens: &in, OutputTokens: &out, CachedInputTokens: &cached, Took: took}); err != nil {
		return err
	}
	l.model(in, out, cached)
	return nil
}
