package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/planner"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
)

// sessionSpec is one session to simulate.
type sessionSpec struct {
	n      int    // index in the run, from 0
	id     string // the session id: seeded (sessionID), so a run's arms are too
	agent  string
	source string
	start  time.Time
	rules  ruleset.RuleSet
	rng    *rand.Rand
	// cost draws the model calls' tokens and the churn: a stream of its
	// own, so that neither changes what rng gives.
	cost *rand.Rand
}

// sessionResult is what one session did.
type sessionResult struct {
	outcome     events.Outcome
	replans     int64
	realCalls   int64
	failedCalls int64
	ledger      *ledger
	arm         string      // the holdout arm, "" without a holdout
	ruleArms    [][2]string // each rule's own arm (rule id, arm), in the rules arm
}

// clock is a session's simulated time: it moves only when the session says
// so, which makes event times reproducible.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// task is the model's state for the task it is working on. A replan that
// re-hints the task gives it a new id in the plan, but it is the same piece
// of work: the state carries over.
type task struct {
	tt       *typeInfo
	need     int             // successful calls still needed
	attempts int             // calls made for it
	streak   int             // consecutive failures of the current tool
	tool     string          // the tool the model calls next
	failed   map[string]bool // tools that failed for it
}

// runSession drives one session through the reference planner: plan,
// call tools, replan after failures, complete tasks, end.
func (w *world) runSession(ctx context.Context, spec sessionSpec, sink agent.Sink) (sessionResult, error) {
	var res sessionResult
	sc := w.sc
	m := &model{w: w, rng: spec.rng, cost: spec.cost, kinds: map[string]string{}}
	clk := &clock{t: spec.start}
	s := agent.NewSession(sink, spec.source, spec.id).WithClock(clk.now).
		WithEventIDs(func(seq int64) string { return fmt.Sprintf("%s-%d", spec.id, seq) })
	p, err := planner.New(s, planner.Config{Tools: w.toolNames, Rules: spec.rules, Clock: clk.now, TaskToolBudget: sc.Model.TaskToolBudget})
	if err != nil {
		return res, fmt.Errorf("session %d: %w", spec.n, err)
	}

	object := m.object()
	tasks := make([]agent.Task, m.between(sc.Model.TasksPerSession))
	for i := range tasks {
		tt := m.taskType()
		tasks[i] = agent.Task{Description: m.describe(tt, object), ToolHint: m.hint(tt), TaskType: tt.Name}
		if sc.Model.UniqueDescriptions {
			tasks[i].Description += fmt.Sprintf(" (session %d, step %d)", spec.n, i+1)
		}
		if sc.Model.UnlabeledTasks {
			m.kinds[tasks[i].Description] = tt.Name // the truth, which the events no longer say
			tasks[i].TaskType = ""
		}
	}
	goal := fmt.Sprintf("Complete %d tasks", len(tasks))
	if object != "" {
		goal = fmt.Sprintf("Improve %s (%d tasks)", object, len(tasks))
	}
	if err := p.Start(ctx, planner.StartInfo{Goal: goal, Agent: spec.agent, AgentVersion: sc.Fleet.AgentVersion, Model: sc.Model.Name}); err != nil {
		return res, fmt.Errorf("session %d: %w", spec.n, err)
	}
	if a := p.Assignment(); a != nil {
		res.arm = string(a.Arm)
		for _, r := range a.Rules {
			res.ruleArms = append(res.ruleArms, [2]string{r.ID, string(r.Arm)})
		}
	}
	res.ledger = newLedger(clk.now())
	if err := m.call(ctx, p, clk, res.ledger); err != nil {
		return res, fmt.Errorf("session %d: %w", spec.n, err)
	}
	if _, err := p.NewPlanFromTasks(ctx, tasks); err != nil {
		return res, fmt.Errorf("session %d: %w", spec.n, err)
	}

	outcome, err := w.execute(ctx, p, m, clk, &res)
	if err != nil {
		return res, fmt.Errorf("session %d: %w", spec.n, err)
	}
	res.outcome = outcome
	res.replans = p.Replans()
	clk.advance(m.think())
	// A task is still pending when it is neither completed nor closed (a
	// failed task stays in the plan, not completed, but closed).
	pending := slices.ContainsFunc(p.Tasks(), func(t agent.Task) bool { return !t.Completed && t.ID != res.ledger.closed })
	if err := p.End(ctx, outcome, ""); err != nil {
		return res, fmt.Errorf("session %d: %w", spec.n, err)
	}
	res.ledger.ended(clk.now(), pending)
	return res, nil
}

// execute works through the plan until every task is done (success) or the
// model gives up on one (failure).
func (w *world) execute(ctx context.Context, p *planner.Planner, m *model, clk *clock, res *sessionResult) (events.Outcome, error) {
	md := w.sc.Model
	overCap := false
	var st *task
	for {
		cur, ok := p.Current()
		if !ok {
			return events.OutcomeSuccess, nil
		}
		if st == nil {
			tt := w.typeNamed(m.kindOf(cur))
			st = &task{tt: tt, need: m.between(md.CallsPerTask), failed: map[string]bool{}}
			st.tool = m.tool(cur, tt, nil)
		}
		if err := m.call(ctx, p, clk, res.ledger); err != nil {
			return "", err
		}
		took := m.ms(w.toolDuration(st.tool))
		clk.advance(took)
		ok = m.chance(w.sc.Success(st.tool, m.kindOf(cur)))
		var kind, text string
		if !ok {
			kind, text = m.failure(st.tool, m.kindOf(cur))
		}
		args := fmt.Sprintf(`{"task":%q,"tool":%q}`, cur.Description, st.tool)
		r, err := p.RecordCall(ctx, planner.Call{Tool: st.tool, Args: []byte(args), OK: ok, ErrorKind: kind, Error: text, Took: took})
		if err != nil {
			return "", err
		}
		res.ledger.call(st.tool, args, ok, text, cur.ToolHint, clk.now())
		if r.DepthLimit {
			res.ledger.depthLimit(cur.ID)
		}
		st.attempts++
		res.realCalls++
		if ok {
			st.streak = 0
			st.need--
			if st.need > 0 {
				continue
			}
			if err := m.call(ctx, p, clk, res.ledger); err != nil {
				return "", err
			}
			if _, err := p.CompleteTask(ctx, cur.ID, events.CompletionSuccess, "done with "+st.tool); err != nil {
				return "", err
			}
			st = nil
			continue
		}
		res.failedCalls++
		st.failed[st.tool] = true
		st.streak++
		if r.DepthLimit || st.attempts >= md.MaxAttempts {
			// Give up: the task fails, and the session with it.
			if err := m.call(ctx, p, clk, res.ledger); err != nil {
				return "", err
			}
			res.ledger.closed = cur.ID
			if _, err := p.CompleteTask(ctx, cur.ID, events.CompletionFailure, "gave up after "+fmt.Sprint(st.attempts)+" calls"); err != nil {
				return "", err
			}
			return events.OutcomeFailure, nil
		}
		if st.streak <= md.RetriesBeforeReplan {
			continue // the same tool again
		}
		st.streak = 0
		if overCap || !m.chance(md.Replan) {
			st.tool = m.belief(st.tt, st.failed) // switch tools without replanning
			continue
		}
		failed := st.tool
		next, over, err := w.replan(ctx, p, m, clk, res.ledger, st, failed)
		if err != nil {
			return "", err
		}
		overCap = over
		if m.cost.Float64() < md.Churn {
			// Plan churn: the same pending tasks restated, no tool called.
			next, over, err = w.restate(ctx, p, m, clk, res.ledger)
			if err != nil {
				return "", err
			}
			overCap = overCap || over
		}
		st.tool = m.tool(next, st.tt, st.failed)
	}
}

// replan calls update_task_plan with the pending tasks restated, the
// current one re-hinted with another tool from the model's beliefs. It
// returns the new current task.
func (w *world) replan(ctx context.Context, p *planner.Planner, m *model, clk *clock, l *ledger, st *task, failed string) (agent.Task, bool, error) {
	hint := m.belief(st.tt, st.failed)
	var list []agent.Task
	first := true
	for _, t := range p.Tasks() {
		if t.Completed {
			continue
		}
		t.ID = 0
		if first {
			t.ToolHint = &hint
			first = false
		}
		list = append(list, t)
	}
	if err := m.call(ctx, p, clk, l); err != nil {
		return agent.Task{}, false, err
	}
	reason := fmt.Sprintf("%s keeps failing; trying %s", failed, hint)
	return w.update(ctx, p, clk, l, list, reason, events.TriggerToolFailures)
}

// restate calls update_task_plan with the pending tasks as they are: a
// replan that changes nothing (plan churn).
func (w *world) restate(ctx context.Context, p *planner.Planner, m *model, clk *clock, l *ledger) (agent.Task, bool, error) {
	var list []agent.Task
	for _, t := range p.Tasks() {
		if !t.Completed {
			t.ID = 0
			list = append(list, t)
		}
	}
	if err := m.call(ctx, p, clk, l); err != nil {
		return agent.Task{}, false, err
	}
	return w.update(ctx, p, clk, l, list, "restating the plan", events.TriggerModel)
}

// update calls update_task_plan with list and returns the new current task
// and whether the call was at or past the soft cap.
func (w *world) update(ctx context.Context, p *planner.Planner, clk *clock, l *ledger, list []agent.Task, reason string, trigger events.Trigger) (agent.Task, bool, error) {
	r, err := p.UpdateTaskPlan(ctx, list, reason, trigger)
	if err != nil {
		return agent.Task{}, false, err
	}
	l.replan(clk.now(), r.OverCap)
	if !r.Accepted {
		return agent.Task{}, false, errors.New("replan with pending tasks rejected: " + r.Message)
	}
	cur, ok := p.Current()
	if !ok {
		return agent.Task{}, false, errors.New("no current task after a replan")
	}
	return cur, r.OverCap, nil
}

func (w *world) toolDuration(tool string) Range {
	for _, t := range w.sc.Tools {
		if t.Name == tool {
			return t.DurationMS
		}
	}
	return Range{50, 3000}
}
