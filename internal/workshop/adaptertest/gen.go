package adaptertest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// A generated session of a foreign agent that plans with a todo-list tool:
// what it did, step by step, and what an analysis of it must find. The
// envelopes (OTLP spans, Claude Code hooks) render the same steps.

// GenTask is one task of a generated plan.
type GenTask struct {
	Desc   string
	Status string // pending, in_progress, completed
}

// Step is one tool call of a generated session.
type Step struct {
	At   time.Time
	Dur  time.Duration
	Tool string
	ID   string // tool call id
	Args []byte // the call's arguments; nil when not captured
	OK   bool
	Err  string
	Plan bool // a plan-tool call
}

// GenSession is one generated session and its truth.
type GenSession struct {
	ID           string // the session (conversation) id, a UUID
	Conversation bool   // OTLP: the spans carry gen_ai.conversation.id
	Agent, Model string
	Goal         string
	Start, End   time.Time
	Failed       bool // the agent run failed (OTLP: invoke_agent status error)
	StopOnly     bool // Claude Code: the session stops but never gets SessionEnd
	Steps        []Step

	Replans     int64 // real replans: tasks added, dropped or reworded
	RealCalls   int64 // tool calls other than the plan tool
	FailedCalls int64
	MissingArgs int64 // plan calls without captured arguments
	// Plan-file sessions (PlanFileSessions) only:
	Completions  int64 // agent.task.completed events: boxes ticked
	UnknownPrior int64 // edits of the plan file with unknown prior content
}

// Truth is what an analysis of generated sessions must find.
type Truth struct {
	Sessions, Replanned, Replans, RealCalls, FailedCalls, MissingArgs int64
	// Completions and UnknownPrior: of plan-file sessions only (zero for
	// Generate's); CheckTruth compares Completions when it is not zero.
	Completions, UnknownPrior int64
}

// TruthOf adds up the truth of ss.
func TruthOf(ss []GenSession) Truth {
	t := Truth{Sessions: int64(len(ss))}
	for _, s := range ss {
		t.Replans += s.Replans
		if s.Replans > 0 {
			t.Replanned++
		}
		t.RealCalls += s.RealCalls
		t.FailedCalls += s.FailedCalls
		t.MissingArgs += s.MissingArgs
		t.Completions += s.Completions
		t.UnknownPrior += s.UnknownPrior
	}
	return t
}

// vocabulary holds task descriptions that share no word, so that no two are
// taken for a rewording of each other (docs/plan-dialects.md, "Stable ids").
var vocabulary = []string{
	"Read the parser module", "Write unit tests for tokenizer", "Fix integer overflow in lexer",
	"Update changelog entry", "Refactor config loading code", "Benchmark query planner speed",
	"Document public HTTP endpoints", "Migrate database schema version", "Review dependency licenses",
	"Profile memory allocation hotspots", "Add retry logic around uploads", "Remove dead feature flags",
	"Rename misleading variable names", "Upgrade logging library", "Validate user input forms",
	"Cache expensive lookup results",
}

// rewordings are appended to a description to reword it: the result keeps
// a word-set similarity of at least 0.8 with the original.
var rewordings = []string{"thoroughly", "completely", "today"}

var workTools = []string{"Read", "Bash", "Edit", "Grep"}

// Generate returns n sessions from seed, each planning with one of
// planTools (TodoWrite, update_plan or write_todos), starting at start.
// They mix status-only plan updates, restated plans, real replans (tasks
// added, dropped, reworded), failed tool calls and, when missing is set,
// plan calls without captured arguments.
func Generate(seed uint64, n int, planTools []string, start time.Time, missing bool) []GenSession {
	out := make([]GenSession, n)
	for i := range out {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		out[i] = genSession(rng, i, planTools[rng.IntN(len(planTools))], start.Add(time.Duration(i)*10*time.Minute), missing)
	}
	return out
}

type gen struct {
	rng   *rand.Rand
	s     *GenSession
	tool  string
	at    time.Time
	calls int
}

func (g *gen) next() time.Time {
	g.at = g.at.Add(time.Duration(1000+g.rng.IntN(2000)) * time.Millisecond)
	return g.at
}

func (g *gen) step(st Step) {
	g.calls++
	st.At, st.Dur = g.next(), time.Duration(100+g.rng.IntN(900))*time.Millisecond
	st.ID = fmt.Sprintf("call_%04d", g.calls)
	g.at = st.At.Add(st.Dur)
	g.s.Steps = append(g.s.Steps, st)
}

func (g *gen) plan(tasks []GenTask, reason string, captured bool) {
	st := Step{Tool: g.tool, OK: true, Plan: true}
	if captured {
		st.Args = planArgs(g.tool, tasks, reason)
	} else {
		g.s.MissingArgs++
	}
	g.step(st)
}

func genSession(rng *rand.Rand, i int, tool string, start time.Time, missing bool) GenSession {
	s := GenSession{
		ID:           fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), i),
		Conversation: rng.IntN(2) == 0,
		Agent:        "gen-agent",
		Model:        "model-" + fmt.Sprint(rng.IntN(2)),
		Goal:         fmt.Sprintf("generated goal %d", i),
		Start:        start,
		Failed:       rng.IntN(10) == 0,
		StopOnly:     rng.IntN(4) == 0,
	}
	g := &gen{rng: rng, s: &s, tool: tool, at: start}
	pool := slices.Clone(vocabulary)
	rng.Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
	take := func() string { d := pool[0]; pool = pool[1:]; return d }
	tasks := make([]GenTask, 2+rng.IntN(3))
	for j := range tasks {
		tasks[j] = GenTask{Desc: take(), Status: "pending"}
	}
	tasks[0].Status = "in_progress"
	g.plan(clone(tasks), "", true)
	reworded := map[int]int{}
	for cur := 0; cur < len(tasks); cur++ {
		for range 1 + rng.IntN(3) {
			ok := rng.IntN(5) != 0
			st := Step{Tool: workTools[rng.IntN(len(workTools))], OK: ok, Args: []byte(`{"x":1}`)}
			if !ok {
				st.Err = "exit status 1"
				s.FailedCalls++
			}
			s.RealCalls++
			g.step(st)
		}
		if s.Replans < 3 && rng.IntN(10) < 3 {
			var later []int // pending tasks after the current one
			for j := cur + 1; j < len(tasks); j++ {
				later = append(later, j)
			}
			switch k := rng.IntN(3); {
			case k == 0 && len(pool) > 0:
				tasks = append(tasks, GenTask{Desc: take(), Status: "pending"})
			case k == 1 && len(later) > 0:
				j := later[rng.IntN(len(later))]
				tasks = slices.Delete(tasks, j, j+1)
			default:
				j := cur
				if len(later) > 0 {
					j = later[rng.IntN(len(later))]
				}
				tasks[j].Desc += " " + rewordings[reworded[j]%len(rewordings)]
				reworded[j]++
			}
			s.Replans++
			g.plan(clone(tasks), "the plan changed", true)
		}
		if rng.IntN(10) == 0 {
			g.plan(clone(tasks), "", true) // restated, nothing changed
		}
		tasks[cur].Status = "completed"
		last := cur == len(tasks)-1
		if !last {
			tasks[cur+1].Status = "in_progress"
		}
		g.plan(clone(tasks), "", !missing || last || rng.IntN(6) != 0)
		if !last && cur > 0 && rng.IntN(12) == 0 {
			break // the agent stops early
		}
	}
	s.End = g.next()
	return s
}

func clone(ts []GenTask) []GenTask { return slices.Clone(ts) }

// planArgs renders a plan in the dialect of tool.
func planArgs(tool string, tasks []GenTask, reason string) []byte {
	var v any
	switch tool {
	case "TodoWrite":
		type todo struct {
			Content    string `json:"content"`
			Status     string `json:"status"`
			ActiveForm string `json:"activeForm"`
		}
		ts := make([]todo, len(tasks))
		for i, t := range tasks {
			ts[i] = todo{t.Desc, t.Status, "Working on: " + t.Desc}
		}
		v = map[string]any{"todos": ts}
	case "update_plan":
		type item struct {
			Step   string `json:"step"`
			Status string `json:"status"`
		}
		ts := make([]item, len(tasks))
		for i, t := range tasks {
			ts[i] = item{t.Desc, t.Status}
		}
		m := map[string]any{"plan": ts}
		if reason != "" {
			m["explanation"] = reason
		}
		v = m
	case "write_todos":
		type todo struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		}
		ts := make([]todo, len(tasks))
		for i, t := range tasks {
			ts[i] = todo{t.Desc, t.Status}
		}
		v = map[string]any{"todos": ts}
	default:
		panic("no dialect for " + tool)
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
