package adaptertest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/session"
)

// The sessions of a foreign agent that plans with a todo-list tool
// (Generate) or keeps its plan in a Markdown file (PlanFileSessions): what
// it did, step by step (a session.Session, which the envelopes render:
// ClaudeCodeHooks, oteltest), and what an analysis of it must find.

// GenTask is one task of a generated plan.
type GenTask struct {
	Desc   string
	Status string // pending, in_progress, completed
}

// GenSession is one generated session and its truth.
type GenSession struct {
	session.Session

	Replans     int64 // real replans: tasks added, dropped or reworded
	RealCalls   int64 // tool calls other than the plan tool
	FailedCalls int64
	MissingArgs int64 // plan calls without captured arguments
	// Plan-file sessions (PlanFileSessions) only:
	Completions  int64 // agent.task.completed events: boxes ticked
	UnknownPrior int64 // edits of the plan file with unknown prior content
	// RequestReplans: the replans of each request the session is made of
	// (a task added when every task was completed begins the next one);
	// nil for one request with Replans.
	RequestReplans []int64
}

// ClaudeCodeHooks renders ss as Claude Code hook inputs
// (session.ClaudeCodeHooks).
func ClaudeCodeHooks(ss []GenSession) []byte { return session.ClaudeCodeHooks(ss) }

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
		reqs := s.RequestReplans
		if reqs == nil {
			reqs = []int64{s.Replans}
		}
		t.Sessions += int64(len(reqs)) - 1
		for _, n := range reqs {
			if n > 0 {
				t.Replanned++
			}
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

// newSession draws the envelope of generated session i, which starts at
// start; canFail: whether the agent run may fail.
func newSession(rng *rand.Rand, i int, start time.Time, canFail bool) GenSession {
	s := GenSession{Session: session.Session{
		ID:           fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), i),
		Conversation: rng.IntN(2) == 0,
		Agent:        "gen-agent",
		Model:        "model-" + fmt.Sprint(rng.IntN(2)),
		Goal:         fmt.Sprintf("generated goal %d", i),
		Start:        start,
	}}
	if canFail {
		s.Failed = rng.IntN(10) == 0
	}
	s.StopOnly = rng.IntN(4) == 0
	return s
}

// gen is the plan tool of a session being generated.
type gen struct {
	s    *GenSession
	rec  *session.Recorder
	tool string
}

func (g *gen) plan(tasks []GenTask, reason string, captured bool) {
	st := session.Step{Tool: g.tool, OK: true, Plan: true}
	if captured {
		st.Args = planArgs(g.tool, tasks, reason)
	} else {
		g.s.MissingArgs++
	}
	g.rec.Call(st)
}

func genSession(rng *rand.Rand, i int, tool string, start time.Time, missing bool) GenSession {
	s := newSession(rng, i, start, true)
	g := &gen{s: &s, rec: session.Record(rng, &s.Session), tool: tool}
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
			st := session.Step{Tool: workTools[rng.IntN(len(workTools))], OK: ok, Args: []byte(`{"x":1}`)}
			if !ok {
				st.Err = "exit status 1"
				s.FailedCalls++
			}
			s.RealCalls++
			g.rec.Call(st)
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
	g.rec.End()
	return s
}

func clone(ts []GenTask) []GenTask { return slices.Clone(ts) }

// planArgs renders a plan in the dialect of tool.
func planArgs(tool string, tasks []GenTask, reason string) []byte {
	var v any
	switch tool {
	case "TodoWrite", "write_todos": // write_todos: TodoWrite without activeForm
		type todo struct {
			Content    string `json:"content"`
			Status     string `json:"status"`
			ActiveForm string `json:"activeForm,omitempty"`
		}
		ts := make([]todo, len(tasks))
		for i, t := range tasks {
			ts[i] = todo{Content: t.Desc, Status: t.Status}
			if tool == "TodoWrite" {
				ts[i].ActiveForm = "Working on: " + t.Desc
			}
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
	default:
		panic("no dialect for " + tool)
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
