package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
)

// Sentinel errors; callers branch with errors.Is.
var (
	// ErrSequence is returned (wrapped) by a step taken out of order: any
	// step before Start or after End, Start twice, a second plan, or
	// UpdateTaskPlan, CompleteTask or RecordToolCall before the plan.
	ErrSequence = errors.New("planner step out of order")
	// ErrControlTool is returned (wrapped) by RecordToolCall for
	// complete_task or update_task_plan: CompleteTask and UpdateTaskPlan
	// record those.
	ErrControlTool = errors.New("control tool recorded as a tool call")

	// errNoPlan details ErrSequence for the steps that need a plan.
	errNoPlan = errors.New("no plan yet")
)

// Result is what a step tells the agent loop.
type Result struct {
	// Accepted is false when the planner refused the step on the model's
	// behalf (UpdateTaskPlan with no new task, CompleteTask for a task that
	// is not current); Message says why.
	Accepted bool
	// Message is text to hand to the model with the tool result; empty
	// when there is nothing to add.
	Message string
	// Tasks is the plan after the step (a copy).
	Tasks []agent.Task
	// OverCap reports an update_task_plan call at or past the soft cap.
	OverCap bool
	// DepthLimit reports a tool call that used up the current task's
	// budget, or came after it was used up.
	DepthLimit bool
	// Completion is the completion recorded by CompleteTask, after
	// reconciliation.
	Completion events.Completion
}

// StartInfo describes the session for agent.session.started.
type StartInfo struct {
	Goal string
	// Agent is the agent name; empty means the first segment of the
	// session's source (which the contract requires it to be).
	Agent        string
	AgentVersion string
	Model        string
	// TaskType is the session's kind of task; it is also the type rules
	// match for tasks that have none.
	TaskType string
}

type phase int

const (
	created phase = iota
	started
	planned
	ended
)

// taskStats counts the tool calls of one task.
type taskStats struct {
	calls  int64 // all calls attributed to the task, complete_task included
	work   int64 // real (non-control) calls: what the budget counts
	failed int64 // real calls with ok false
	atCap  bool  // agent.depth_limit.reached was emitted
}

// Planner is the planning state of one agent session. Create it with New;
// its methods are safe for concurrent use.
type Planner struct {
	s     *agent.Session
	cfg   Config
	tools map[string]bool // available hints: Config.Tools and the control tools
	list  []string        // the session's tools, in order, for session.started

	mu         sync.Mutex
	phase      phase
	info       StartInfo
	start      time.Time
	tasks      []agent.Task
	replans    int64 // update_task_plan calls, rejected ones included
	calls      int64 // tool calls, control calls included
	failed     int64 // tool calls with ok false
	iterations int64
	assignment *events.Assignment // set by Start under a rule set's holdout
	usage      *agent.Usage       // nil until the first ModelCall
	stats      map[int64]*taskStats
}

// New returns a planner for the session s, which it emits every event to.
// cfg must pass Validate; its zero fields take their defaults.
func New(s *agent.Session, cfg Config) (*Planner, error) {
	if s == nil {
		return nil, errors.New("new planner: nil session")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new planner: %w", err)
	}
	cfg = cfg.withDefaults()
	cfg.Tools = slices.Clone(cfg.Tools)
	cfg.Rules.Rules = slices.Clone(cfg.Rules.Rules)
	p := &Planner{s: s, cfg: cfg, tools: map[string]bool{}, stats: map[int64]*taskStats{}}
	for _, name := range append(slices.Clone(cfg.Tools), ToolCompleteTask, ToolUpdateTaskPlan) {
		if !p.tools[name] {
			p.tools[name] = true
			p.list = append(p.list, name)
		}
	}
	return p, nil
}

// Start emits agent.session.started: the goal, agent, version, model and
// task type from info; the tools of Config.Tools plus the control tools;
// the rule set's version, and the ids of all its rules. All loaded rules are
// listed, not only those of info.TaskType: tasks carry their own types,
// known only once planned, and a listed rule is one in force for the
// session (whether it fired shows in agent.hint.stripped). When the rule
// set has a holdout, it also reports the assignment: the session (or
// Config.Workspace) is assigned to an arm by ruleset.Assign, and in the
// holdout arm the session applies no rule and reports no rule set. In the
// rules arm, each rule with a holdout of its own is drawn by
// ruleset.AssignRule; a held-out rule is neither applied nor listed in
// rules, and the assignment reports every such rule's arm.
func (p *Planner) Start(ctx context.Context, info StartInfo) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.phase != created {
		return fmt.Errorf("start: %w: already started", ErrSequence)
	}
	if info.Agent == "" {
		info.Agent = events.AgentOf(p.s.Source())
	}
	p.phase = started
	p.info = info
	p.start = p.cfg.Clock()
	d := agent.SessionStarted{
		Goal:         info.Goal,
		Agent:        info.Agent,
		AgentVersion: info.AgentVersion,
		Model:        info.Model,
		Tools:        slices.Clone(p.list),
		TaskType:     info.TaskType,
		Ruleset:      p.cfg.Rules.Version,
		Rules:        p.cfg.Rules.IDs(),
	}
	if rs := p.cfg.Rules; rs.Version != "" && rs.Holdout > 0 {
		a := &events.Assignment{Ruleset: rs.Version, Holdout: rs.Holdout, Unit: events.UnitSession, UnitID: p.s.ID()}
		if p.cfg.Workspace != "" {
			a.Unit, a.UnitID = events.UnitWorkspace, p.cfg.Workspace
		}
		drawn := ruleset.Draw(rs, a.UnitID)
		a.Arm = events.Arm(drawn.Arm)
		for _, r := range drawn.Rules {
			a.Rules = append(a.Rules, events.RuleArm{ID: r.ID, Arm: events.Arm(r.Arm), Holdout: r.Holdout})
		}
		// The control applies no rule and reports no rule set; in the
		// rules arm a rule held out on its own is neither applied nor
		// listed.
		p.cfg.Rules = drawn.Applied
		d.Ruleset, d.Rules = drawn.Applied.Version, drawn.Applied.IDs()
		d.Assignment = a
		p.assignment = a
	}
	err := p.s.Started(ctx, d)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return nil
}

// Iterate counts one agent-loop iteration (one model turn); End reports the
// count as iterations. It returns the count so far.
func (p *Planner) Iterate() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.iterations++
	return p.iterations
}

// ModelCall is one model call as ModelCall records it.
type ModelCall struct {
	// Model is the model that answered; empty means the session's.
	Model string
	// InputTokens (the whole prompt, cached tokens included), OutputTokens
	// and CachedInputTokens are nil when the model did not report them.
	InputTokens, OutputTokens, CachedInputTokens *int64
	// Took is the call's wall time.
	Took time.Duration
}

// ModelCall counts one agent-loop iteration, as Iterate does, and emits
// agent.model.called for the task in progress (none before the plan) with
// c's tokens and time; End sums the calls into the session's usage. A
// negative token count is refused: nothing is emitted or counted. It
// returns the iteration count so far.
func (p *Planner) ModelCall(ctx context.Context, c ModelCall) (int64, error) {
	for _, n := range []*int64{c.InputTokens, c.OutputTokens, c.CachedInputTokens} {
		if n != nil && *n < 0 {
			return 0, fmt.Errorf("model call: a negative token count (%d)", *n)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.check("model call", false); err != nil {
		return 0, err
	}
	p.iterations++
	if p.usage == nil {
		p.usage = &agent.Usage{}
	}
	u := p.usage
	u.ModelCalls++
	u.InputTokens = addTokens(u.InputTokens, c.InputTokens)
	u.OutputTokens = addTokens(u.OutputTokens, c.OutputTokens)
	u.CachedInputTokens = addTokens(u.CachedInputTokens, c.CachedInputTokens)
	ms := max(c.Took.Milliseconds(), 0)
	u.ModelMS += ms
	d := agent.ModelCalled{Model: c.Model, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens,
		CachedInputTokens: c.CachedInputTokens, DurationMS: ms}
	if d.Model == "" {
		d.Model = p.info.Model
	}
	if i := p.current(); i >= 0 {
		d.TaskID = ptr(p.tasks[i].ID)
	}
	if err := p.s.ModelCalled(ctx, d); err != nil {
		return p.iterations, fmt.Errorf("model call: %w", err)
	}
	return p.iterations, nil
}

// addTokens is sum plus n, nil while neither is known.
func addTokens(sum, n *int64) *int64 {
	if n == nil {
		return sum
	}
	if sum == nil {
		return ptr(*n)
	}
	return ptr(*sum + *n)
}

// End emits agent.session.ended with outcome and feedback ("" for none):
// replans counts every update_task_plan call, rejected ones included;
// tool_calls every tool call, control calls included; failed_tool_calls the
// calls with ok false (a rejected update_task_plan is one, as the contract
// counts them); iterations the Iterate and ModelCall calls; duration_ms the
// time since Start; usage the ModelCall calls summed (absent without any).
// No step is accepted after End.
func (p *Planner) End(ctx context.Context, outcome events.Outcome, feedback events.Feedback) error {
	if !outcome.Valid() {
		return fmt.Errorf("end: outcome %q is not valid", outcome)
	}
	if feedback != "" && !feedback.Valid() {
		return fmt.Errorf("end: feedback %q is not valid", feedback)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.check("end", false); err != nil {
		return err
	}
	p.phase = ended
	err := p.s.Ended(ctx, agent.SessionEnded{
		Outcome:         outcome,
		Replans:         p.replans,
		ToolCalls:       p.calls,
		FailedToolCalls: p.failed,
		Iterations:      p.iterations,
		DurationMS:      max(p.cfg.Clock().Sub(p.start).Milliseconds(), 0),
		Feedback:        feedback,
		Usage:           cloneUsage(p.usage),
	})
	if err != nil {
		return fmt.Errorf("end: %w", err)
	}
	return nil
}

// cloneUsage is a deep copy of u (nil for nil).
func cloneUsage(u *agent.Usage) *agent.Usage {
	if u == nil {
		return nil
	}
	c := *u
	c.InputTokens = addTokens(nil, u.InputTokens)
	c.OutputTokens = addTokens(nil, u.OutputTokens)
	c.CachedInputTokens = addTokens(nil, u.CachedInputTokens)
	return &c
}

// Assignment is the holdout arm Start assigned the session to, nil when
// its rule set has no holdout (or before Start).
func (p *Planner) Assignment() *events.Assignment {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.assignment == nil {
		return nil
	}
	a := *p.assignment
	a.Rules = slices.Clone(a.Rules)
	return &a
}

// Tasks returns a copy of the current plan.
func (p *Planner) Tasks() []agent.Task {
	p.mu.Lock()
	defer p.mu.Unlock()
	return cloneTasks(p.tasks)
}

// Current returns the current task, the first one not completed; false
// when there is none.
func (p *Planner) Current() (agent.Task, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.current()
	if i < 0 {
		return agent.Task{}, false
	}
	return cloneTask(p.tasks[i]), true
}

// Replans returns the number of update_task_plan calls so far, rejected
// ones included.
func (p *Planner) Replans() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replans
}

// check reports a step taken out of order: before Start or after End, and,
// when needPlan, before the plan.
func (p *Planner) check(step string, needPlan bool) error {
	switch {
	case p.phase == created:
		return fmt.Errorf("%s: %w: not started", step, ErrSequence)
	case p.phase == ended:
		return fmt.Errorf("%s: %w: session ended", step, ErrSequence)
	case needPlan && p.phase != planned:
		return fmt.Errorf("%s: %w: %w", step, ErrSequence, errNoPlan)
	}
	return nil
}

// current is the index of the first task not completed, or -1.
func (p *Planner) current() int {
	return slices.IndexFunc(p.tasks, func(t agent.Task) bool { return !t.Completed })
}

func (p *Planner) statsOf(id int64) *taskStats {
	st := p.stats[id]
	if st == nil {
		st = &taskStats{}
		p.stats[id] = st
	}
	return st
}

// result is an accepted Result with a copy of the plan.
func (p *Planner) result(msg string) Result {
	return Result{Accepted: true, Message: msg, Tasks: cloneTasks(p.tasks)}
}

// emitter emits a step's events in order and keeps the errors, so that one
// lost event does not hide the others.
type emitter struct {
	ctx  context.Context
	s    *agent.Session
	errs []error
}

func (e *emitter) emit(typ events.Type, data any) {
	if err := e.s.Emit(e.ctx, typ, data); err != nil {
		e.errs = append(e.errs, fmt.Errorf("emit %s: %w", typ, err))
	}
}

func (e *emitter) strips(strips []agent.HintStripped) {
	for _, d := range strips {
		e.emit(events.HintStripped, d)
	}
}

// err wraps the joined errors with the step.
func (e *emitter) err(step string) error {
	if err := errors.Join(e.errs...); err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	return nil
}
