package rpcsim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/evosignal/evosignal/internal/workshop/plangen"
)

// PlanFileMode is how a simulated turn of PlanFiles plans.
type PlanFileMode int

// Modes of PlanFiles.
const (
	// FileOnly: SkillLite's simple loop (enable_task_planning off, which
	// sends no task_plan); the agent keeps its plan in task_plan.md.
	FileOnly PlanFileMode = iota
	// EmptyList: task planning on, but the planner listed no task: an empty
	// task_plan, after which SkillLite runs without task mode
	// (agent_loop/planning.rs); the agent keeps its plan in task_plan.md.
	EmptyList
	// Both: the planner listed tasks, and the agent keeps task_plan.md as
	// well; it completes the list's tasks with complete_task and may revise
	// the list with update_task_plan. The list is the session's plan.
	Both
)

func (m PlanFileMode) String() string {
	return [...]string{"file-only", "empty-list", "both"}[m]
}

// PlanFileTurn is what one turn of PlanFiles must give, by the rule of
// docs/plan-dialects.md, "Two plan sources".
type PlanFileTurn struct {
	Mode PlanFileMode
	// Replans: valid agent.plan.updated events. FileOnly and EmptyList: the
	// plan file's (plangen's truth); Both: the accepted update_task_plan
	// calls.
	Replans int64
	// Completed: agent.task.completed events. FileOnly and EmptyList: boxes
	// ticked in the file; Both: tasks completed with complete_task.
	Completed int64
	// Unknown: plan-file edits of unknown prior content (a data-quality
	// note); none in Both, where the file is not read.
	Unknown int64
	// Superseded: plan-file calls in Both, kept as ordinary calls.
	Superseded int64
	// Control: control calls (plan-file operations in FileOnly and
	// EmptyList; complete_task and update_task_plan in Both). Real: the
	// other calls.
	Control, Real int64
}

// PlanFiles returns n turns of agent-rpc stdout from seed whose agent keeps
// its plan in a Markdown file — plangen's SkillLite sessions (write_file,
// search_replace and insert_lines on task_plan.md, run_command and
// read_file), in every mode in turn — with each turn's truth. Every call
// succeeds; results are SkillLite's texts, and a result already emitted in
// the turn is not emitted again (rpc.rs:186-193).
func PlanFiles(seed uint64, n int) ([]byte, []PlanFileTurn) {
	s := &sim{rng: rand.New(rand.NewPCG(seed, seed^0x91a7)), cfg: Config{Seed: seed, DepthLimit: 15}, truth: newTruth()}
	truths := make([]PlanFileTurn, n)
	for i := range n {
		ps := plangen.Generate(seed*1_000_003+uint64(i), plangen.SkillLite)
		truths[i] = s.planFileTurn(i, PlanFileMode(i%3), ps)
	}
	return []byte(s.out.String()), truths
}

// planStep is one call of a PlanFiles turn.
type planStep struct {
	call     toolCall
	planFile bool // a plan-file operation of plangen
}

func (s *sim) planFileTurn(i int, mode PlanFileMode, ps plangen.Session) PlanFileTurn {
	tr := &turn{s: s, keys: map[string]bool{}, completion: "success", truth: &turnTruth{}}
	truth := PlanFileTurn{Mode: mode}
	var steps []planStep
	for _, c := range ps.Calls {
		st := planStep{call: toolCall{name: c.Tool, args: string(c.Args)}, planFile: len(c.Expect) > 0}
		steps = append(steps, st)
		if st.planFile && mode != Both {
			truth.Control++
		} else {
			truth.Real++
		}
		if st.planFile && mode == Both {
			truth.Superseded++
		}
	}
	switch mode {
	case FileOnly:
	case EmptyList:
		s.emit("task_plan", map[string]any{"tasks": []task{}})
	case Both:
		for k := range 1 + s.rng.IntN(3) {
			tr.plan = append(tr.plan, task{ID: k + 1, Description: fmt.Sprintf("step %d of plan-file job %d", k+1, i), ToolHint: s.knownHint()})
		}
		s.emit("task_plan", map[string]any{"tasks": tr.plan})
		steps = s.interleave(steps)
	}
	if mode != Both {
		// SkillLite's turn is the request: a task added after every task was
		// completed is a replan there (plandialect.Config.Requests is off).
		truth.Replans, truth.Completed, truth.Unknown = int64(ps.Truth.Replans+ps.Truth.Began), int64(ps.Truth.Completed), int64(ps.Truth.Unknown)
	}
	for len(steps) > 0 {
		tr.usage++
		s.emit("llm_usage", map[string]any{"completion_tokens": 120, "prompt_tokens": 2000, "total_tokens": 2120})
		for k := 1 + s.rng.IntN(3); k > 0 && len(steps) > 0; k-- {
			st := steps[0]
			steps = steps[1:]
			if tr.planFileCall(st.call, &truth) {
				// The current task moved: SkillLite would skip the rest
				// of the batch; the model's next response goes on.
				break
			}
		}
	}
	ct := "success"
	if mode == Both && !tr.allCompleted() {
		ct = "partial_success"
	}
	s.done(ct, mode == Both && tr.allCompleted(), tr.total, tr.usage)
	return truth
}

// interleave adds, at random places among steps, a complete_task for each
// task of the list the model gets to, and sometimes one update_task_plan.
// Their arguments are made when they run (planFileCall), from the list then.
func (s *sim) interleave(steps []planStep) []planStep {
	var out []planStep
	replan := s.chance(0.5)
	for _, st := range steps {
		out = append(out, st)
		switch r := s.rng.Float64(); {
		case r < 0.2:
			out = append(out, planStep{call: toolCall{name: "complete_task"}})
		case r < 0.25 && replan:
			out = append(out, planStep{call: toolCall{name: "update_task_plan", why: "model"}})
			replan = false
		}
	}
	return out
}

// planFileCall runs one call and reports whether it moved the current task
// (complete_task, update_task_plan).
func (tr *turn) planFileCall(c toolCall, truth *PlanFileTurn) bool {
	s := tr.s
	switch c.name {
	case "complete_task":
		cur := tr.current()
		if cur == nil {
			return false // every task is done: the model does not call it
		}
		ct := "success"
		if tr.replans > 0 {
			ct = "partial_success" // SkillLite refuses success after a replan
		}
		c.args = fmt.Sprintf(`{"completion_type":%q,"summary":"did it","task_id":%d}`, ct, cur.ID)
	case "update_task_plan":
		var ts []task
		for k := range 1 + s.rng.IntN(2) {
			ts = append(ts, task{ID: 100 + k, Description: fmt.Sprintf("revised plan-file step %d", k+1), ToolHint: s.knownHint()})
		}
		b, _ := json.Marshal(map[string]any{"reason": "the plan did not fit", "tasks": ts})
		c.args = string(b)
	}
	s.ncall++
	id := fmt.Sprintf("call_%d", s.ncall)
	s.emit("tool_call", map[string]any{"arguments": c.args, "name": c.name, "tool_call_id": id})
	var r result
	switch c.name {
	case "complete_task":
		r = tr.completeTask(c.args)
		if !r.isError {
			truth.Completed++
		}
		truth.Control++
	case "update_task_plan":
		r = tr.updatePlan(c)
		truth.Replans++
		truth.Control++
	default:
		r = result{content: fileResult(c)}
	}
	tr.result(id, c.name, r.content, r.isError)
	tr.total++
	return c.name == "complete_task" || c.name == "update_task_plan"
}

// fileResult is SkillLite's result text of a successful call of plangen's
// tools (extensions/builtin/file_ops/mod.rs, file_ops/search_replace.rs).
func fileResult(c toolCall) string {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
		Append  bool   `json:"append"`
		Line    int    `json:"line"`
		Command string `json:"command"`
	}
	_ = json.Unmarshal([]byte(c.args), &a)
	switch c.name {
	case "write_file":
		verb := "wrote"
		if a.Append {
			verb = "appended"
		}
		return fmt.Sprintf("Successfully %s %d bytes to %s", verb, len(a.Content), a.Path)
	case "search_replace":
		return fmt.Sprintf("Successfully replaced 1 occurrence(s) in %s\n{\n  \"path\": %q,\n  \"changed\": true,\n  \"match_type\": \"exact\",\n  \"occurrences\": 1\n}", a.Path, a.Path)
	case "insert_lines":
		n := max(1, strings.Count(strings.TrimSuffix(a.Content, "\n"), "\n")+1)
		return fmt.Sprintf("Successfully inserted %d line(s) after line %d in %s\n{\n  \"path\": %q,\n  \"inserted_after_line\": %d\n}", n, a.Line, a.Path, a.Path, a.Line)
	case "run_command":
		return "exit 0: " + a.Command
	}
	return "contents of " + c.args
}
