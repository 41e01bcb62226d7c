// Package synth generates realistic agent sessions (plans of 3–8 tasks, tool
// calls with failures, hallucinated hints stripped, replans up to and past
// the soft cap, depth limits, a model call with its tokens before each tool
// call, argument digests, the session's usage) from a seed, for load tests and benchmarks.
// It drives the public agent.Session, so what it emits is exactly what an
// agent would send. The agentsim command is the richer, scenario-driven
// simulator; synth is the fixed, fast workload of the ingest benchmarks.
package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

var (
	agents    = []string{"skilllite", "coder", "researcher"}
	tools     = []string{"read_file", "write_file", "run_command", "search_web", "grep", "http_request", "list_dir", "python_exec"}
	fakeTools = []string{"web_browser", "git_magic", "deploy", "ask_user_ui"}
	taskTypes = []string{"coding", "testing", "filesystem", "search", "execution", "docs", "analysis"}
	// the tool each task type mostly needs, and its success rate
	typeTool = map[string]string{"coding": "write_file", "testing": "run_command", "filesystem": "list_dir",
		"search": "search_web", "execution": "python_exec", "docs": "read_file", "analysis": "grep"}
	verbs = map[string][]string{
		"coding":     {"Implement the parser for", "Refactor", "Fix the bug in"},
		"testing":    {"Write unit tests for", "Run the test suite of"},
		"filesystem": {"List the files of", "Find the config of"},
		"search":     {"Search the web for", "Look up the docs of"},
		"execution":  {"Run the script for", "Execute the benchmark of"},
		"docs":       {"Read the README of", "Summarise the design of"},
		"analysis":   {"Analyse the logs of", "Compare the results of"},
	}
	objects = []string{"the ingest service", "module auth", "the CSV importer", "the rate limiter", "project alpha", "the HTTP client"}
)

// Generator emits sessions. Not safe for concurrent use.
type Generator struct {
	rng   *rand.Rand
	cost  *rand.Rand // model calls' tokens and time: a stream of their own
	model bool       // the next event is a model call (tick draws from cost)
	clock time.Time
	n     int
}

// New returns a generator seeded with seed; the same seed gives the same
// sessions (ids aside: they are UUIDv7).
func New(seed uint64, start time.Time) *Generator {
	return &Generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		cost: rand.New(rand.NewPCG(seed^0xc057, seed^0x7e57c057)), clock: start}
}

func (g *Generator) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }
func (g *Generator) p(prob float64) bool     { return g.rng.Float64() < prob }

func (g *Generator) tick() time.Time {
	if g.model {
		g.clock = g.clock.Add(time.Duration(100+g.cost.IntN(3000)) * time.Millisecond)
		return g.clock
	}
	g.clock = g.clock.Add(time.Duration(50+g.rng.IntN(2000)) * time.Millisecond)
	return g.clock
}

func (g *Generator) task(id int64) agent.Task {
	tt := g.pick(taskTypes)
	hint := typeTool[tt]
	switch r := g.rng.Float64(); {
	case r < 0.06:
		hint = g.pick(fakeTools) // hallucinated: stripped by sanitising
	case r < 0.25:
		hint = g.pick(tools) // plausible but often wrong
	}
	h := hint
	return agent.Task{ID: id, Description: g.pick(verbs[tt]) + " " + g.pick(objects), ToolHint: &h, TaskType: tt}
}

func isReal(tool string) bool {
	for _, t := range tools {
		if t == tool {
			return true
		}
	}
	return false
}

// Session emits one whole session to sink and returns how many events it
// sent.
func (g *Generator) Session(ctx context.Context, sink agent.Sink) (int, error) {
	g.n++
	name := g.pick(agents)
	source := fmt.Sprintf("%s/host-%c/worker-%d", name, 'a'+rune(g.rng.IntN(4)), 1+g.rng.IntN(8))
	s := agent.NewSession(sink, source, "").WithClock(g.tick)
	st := &state{g: g, s: s}
	err := st.run(ctx, name)
	return int(s.Seq()), err
}

type state struct {
	g      *Generator
	s      *agent.Session
	tasks  []agent.Task
	nextID int64

	replans, calls, failed, iterations int64
	usage                              agent.Usage
}

// modelCall emits one agent.model.called for the task given, with tokens
// and time drawn from the cost stream, and adds it to the session's usage.
func (st *state) modelCall(ctx context.Context, task int64) error {
	g := st.g
	in, out := int64(300+g.cost.IntN(6000)), int64(10+g.cost.IntN(500))
	cached := in * int64(g.cost.IntN(80)) / 100
	ms := int64(100 + g.cost.IntN(3000))
	u := &st.usage
	u.ModelCalls++
	u.InputTokens = add(u.InputTokens, in)
	u.OutputTokens = add(u.OutputTokens, out)
	u.CachedInputTokens = add(u.CachedInputTokens, cached)
	u.ModelMS += ms
	g.model = true
	defer func() { g.model = false }()
	return st.s.ModelCalled(ctx, agent.ModelCalled{TaskID: &task, InputTokens: &in, OutputTokens: &out, CachedInputTokens: &cached, DurationMS: ms})
}

func add(sum *int64, n int64) *int64 {
	if sum != nil {
		n += *sum
	}
	return &n
}

func (st *state) sanitize(ctx context.Context, phase events.Phase, from int) error {
	for i := from; i < len(st.tasks); i++ {
		t := &st.tasks[i]
		if t.ToolHint != nil && !isReal(*t.ToolHint) {
			if err := st.s.HintStripped(ctx, agent.HintStripped{TaskID: t.ID, ToolHint: *t.ToolHint, Phase: phase, Reason: "unavailable"}); err != nil {
				return err
			}
			t.ToolHint = nil
		}
	}
	return nil
}

func (st *state) run(ctx context.Context, name string) error {
	g, s := st.g, st.s
	if err := s.Started(ctx, agent.SessionStarted{Goal: "Improve " + g.pick(objects), Agent: name,
		AgentVersion: "1.4.2", Model: g.pick([]string{"gpt-4.1", "claude-sonnet", "qwen-72b"}), Tools: tools}); err != nil {
		return err
	}
	n := 3 + g.rng.IntN(6)
	for i := 1; i <= n; i++ {
		st.tasks = append(st.tasks, g.task(int64(i)))
	}
	st.nextID = int64(n) + 1
	if err := st.sanitize(ctx, "plan", 0); err != nil {
		return err
	}
	if err := s.PlanCreated(ctx, agent.PlanCreated{Tasks: clone(st.tasks), Origin: "model"}); err != nil {
		return err
	}
	outcome := events.OutcomeSuccess
	for cur := 0; cur < len(st.tasks); {
		st.iterations++
		t := st.tasks[cur]
		tool := typeTool[t.TaskType]
		if t.ToolHint != nil && g.p(0.8) {
			tool = *t.ToolHint
		}
		okProb := 0.9
		if tool != typeTool[t.TaskType] {
			okProb = 0.45
		}
		failures := 0
		ncalls := int64(1 + g.rng.IntN(3))
		for c := int64(0); c < ncalls; c++ {
			ok := g.p(okProb)
			st.calls++
			if err := st.modelCall(ctx, t.ID); err != nil {
				return err
			}
			d := agent.ToolCalled{TaskID: &t.ID, Tool: tool, Hint: t.ToolHint, OK: ok, DurationMS: int64(20 + g.rng.IntN(3000)),
				ArgsDigest: events.ArgsDigest(fmt.Appendf(nil, `{"task":%d,"tool":%q,"try":%d}`, t.ID, tool, g.cost.IntN(2)))}
			if !ok {
				st.failed++
				failures++
				d.ErrorKind, d.Error = "exit_status", "command exited with status 1"
			}
			if err := s.ToolCalled(ctx, d); err != nil {
				return err
			}
		}
		if failures >= 2 && g.p(0.05) {
			if err := s.DepthLimitReached(ctx, agent.DepthLimit{TaskID: t.ID, ToolCalls: ncalls, Limit: 15}); err != nil {
				return err
			}
		}
		if failures > 0 && g.p(0.35) && st.replans < 5 {
			if err := st.replan(ctx, cur); err != nil {
				return err
			}
			continue
		}
		completion := events.CompletionSuccess
		if failures > 0 {
			completion = events.CompletionPartialSuccess
		}
		if err := st.control(ctx, t.ID, "complete_task"); err != nil {
			return err
		}
		if err := s.TaskCompleted(ctx, agent.TaskCompleted{TaskID: t.ID, Completion: completion, Reported: "success", ToolCalls: ncalls}); err != nil {
			return err
		}
		st.tasks[cur].Completed = true
		cur++
	}
	if st.failed > st.calls/2 {
		outcome = events.OutcomePartialSuccess
	}
	if st.g.p(0.03) {
		outcome = events.OutcomeFailure
	}
	return s.Ended(ctx, agent.SessionEnded{Outcome: outcome, Replans: st.replans, ToolCalls: st.calls,
		FailedToolCalls: st.failed, Iterations: st.iterations, DurationMS: int64(1000 * (st.calls + 1)), Usage: &st.usage})
}

func (st *state) control(ctx context.Context, id int64, tool string) error {
	return st.s.ToolCalled(ctx, agent.ToolCalled{TaskID: &id, Tool: tool, OK: true, DurationMS: 1, Control: true})
}

// replan replaces the pending tasks from cur on with 1–4 new ones.
func (st *state) replan(ctx context.Context, cur int) error {
	g := st.g
	st.replans++
	if err := st.control(ctx, st.tasks[cur].ID, "update_task_plan"); err != nil {
		return err
	}
	overCap := st.replans >= 3
	if g.p(0.05) { // the model sent an empty list: rejected, still counted
		return st.s.PlanUpdated(ctx, agent.PlanUpdated{Replan: st.replans, Trigger: "tool_failures",
			Tasks: []agent.Task{}, Kept: []int64{}, Dropped: []agent.Task{}, OverCap: overCap, Valid: false, Error: "empty task list"})
	}
	kept := clone(st.tasks[:cur])
	dropped := clone(st.tasks[cur:])
	keptIDs := make([]int64, len(kept))
	for i, t := range kept {
		keptIDs[i] = t.ID
	}
	next := int64(len(kept)) + 1
	for _, t := range kept {
		next = max(next, t.ID+1)
	}
	st.tasks = kept
	for i := 0; i < 1+g.rng.IntN(4); i++ {
		st.tasks = append(st.tasks, g.task(next))
		next++
	}
	if err := st.sanitize(ctx, "replan", cur); err != nil {
		return err
	}
	return st.s.PlanUpdated(ctx, agent.PlanUpdated{Replan: st.replans, Trigger: "tool_failures",
		Reason: "the tool kept failing", Tasks: clone(st.tasks), Kept: keptIDs, Dropped: dropped, OverCap: overCap, Valid: true})
}

func clone(ts []agent.Task) []agent.Task { return append([]agent.Task(nil), ts...) }
