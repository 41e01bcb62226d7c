// Package rpcsim simulates SkillLite's agent-rpc output: seeded turns in the
// real wire format, made by the agent's own rules, with the figures they
// must give (Truth). It exists to test the bridge end to end: a long stream
// goes through bridge and ingest, and the analyzers must find Truth.
//
// The simulated agent follows the code paths of SkillLite (EXboys/skilllite
// at b57e289, paths under crates/skilllite-agent/src; see
// docs/bridge-skilllite.md): the batch loop of agent_loop/execution.rs
// (skipped calls after a task transition, the failure suffixes, the refusal
// of complete_task success after failures or replans, the depth count), the
// update_task_plan handler of agent_loop/helpers.rs (sanitised hints, kept
// completed tasks, renumbering, task_plan before the result), the argument
// validation of extensions/registry.rs, the dedupe of tool results in
// rpc.rs, and the completion type of agent_loop/mod.rs. The model's choices
// are random; its reasons to replan are known, and are the truth of the
// trigger.
package rpcsim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Config shapes a simulated stream.
type Config struct {
	Seed       uint64
	Turns      int
	DepthLimit int // max_tool_calls_per_task; 0: 15
}

// Hints are SkillLite's builtin hint categories and a tool each maps to
// (skilllite-agent/src/tool_hint_resolver.rs:23-79), and hints the model
// invents, which SkillLite strips.
var (
	knownHints = map[string]string{
		"file_read": "read_file", "file_list": "list_directory", "file_edit": "search_replace",
		"file_write": "write_file", "command": "run_command", "memory_search": "memory_search",
	}
	inventedHints = []string{"grep", "web_search", "browser"}
)

// task is one task of the plan (skilllite-agent/src/types/task.rs:8-14):
// its JSON keys in serde_json's (sorted) order, tool_hint absent when none.
type task struct {
	Completed   bool    `json:"completed"`
	Description string  `json:"description"`
	ID          int     `json:"id"`
	ToolHint    *string `json:"tool_hint,omitempty"`
}

// sim is one simulated agent-rpc process.
type sim struct {
	rng   *rand.Rand
	cfg   Config
	out   strings.Builder
	truth Truth
	ncall int
}

// Generate returns cfg.Turns turns of agent-rpc stdout and their truth.
func Generate(cfg Config) ([]byte, Truth) {
	if cfg.DepthLimit <= 0 {
		cfg.DepthLimit = 15
	}
	s := &sim{rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)), cfg: cfg, truth: newTruth()}
	for i := range cfg.Turns {
		s.turn(i)
	}
	return []byte(s.out.String()), s.truth
}

// emit writes one line as RpcEventSink::emit does: {"data":…,"event":…},
// compact, keys sorted (skilllite-agent/src/rpc.rs:116-122).
func (s *sim) emit(event string, data map[string]any) {
	b, err := json.Marshal(map[string]any{"event": event, "data": data})
	if err != nil {
		panic(err)
	}
	s.out.Write(b)
	s.out.WriteByte('\n')
}

func (s *sim) uuid() string {
	return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", s.rng.Uint32(), s.rng.Uint32()&0xffff,
		s.rng.Uint32()&0xfff, s.rng.Uint32()&0xfff, s.rng.Uint64()&0xffffffffffff)
}

func (s *sim) chance(p float64) bool { return s.rng.Float64() < p }

// turn is one agent_chat turn in task-planning mode.
type turn struct {
	s     *sim
	plan  []task
	keys  map[string]bool // tool results emitted in the turn (rpc.rs:186-193)
	truth *turnTruth

	// ExecutionState (agent_loop/execution.rs:157-177)
	total, failed, replans, currentCalls int
	lastSig                              string
	repeats                              int
	completion                           string
	// what the model saw last: its reasons to replan
	sawFailure, sawDepth bool
	usage                int
	history              []string // arguments of earlier work calls, to repeat
}

func (s *sim) turn(i int) {
	if s.chance(0.08) {
		// A plain answer: an empty plan, no tool (mod.rs:1018-1026 makes it
		// a failure for SkillLite).
		s.emit("task_plan", map[string]any{"tasks": []task{}})
		s.emit("llm_usage", map[string]any{"completion_tokens": 40, "prompt_tokens": 900, "total_tokens": 940})
		s.emit("text_chunk", map[string]any{"text": "Here is the answer."})
		s.done("failure", false, 0, 1)
		s.truth.PlainAnswers++
		return
	}
	tr := &turn{s: s, keys: map[string]bool{}, completion: "success", truth: &turnTruth{}}
	n := 1 + s.rng.IntN(4)
	for id := 1; id <= n; id++ {
		tr.plan = append(tr.plan, task{ID: id, Description: fmt.Sprintf("step %d of job %d", id, i), ToolHint: s.knownHint()})
	}
	s.emit("task_plan", map[string]any{"tasks": tr.plan})
	for iter := 0; iter < 40 && !tr.allCompleted(); iter++ {
		tr.usage++
		s.emit("llm_usage", map[string]any{"completion_tokens": 120, "prompt_tokens": 2000 + 10*iter, "total_tokens": 2120 + 10*iter})
		tr.batch(tr.decide())
	}
	ct := tr.completion
	switch {
	case tr.allCompleted():
	case tr.total == 0 || tr.failed > 0 && tr.failed == tr.total:
		ct = "failure"
	default:
		ct = "partial_success"
	}
	s.done(ct, tr.allCompleted(), tr.total, tr.usage)
	tr.truth.outcome = ct
	s.truth.add(tr.truth)
}

func (s *sim) done(ct string, completed bool, calls, llmCalls int) {
	s.emit("done", map[string]any{
		"completion_type": ct, "llm_usage": map[string]any{"completion_tokens": 120 * llmCalls, "prompt_tokens": 2000 * llmCalls,
			"responses_with_usage": llmCalls, "responses_without_usage": 0, "total_tokens": 2120 * llmCalls},
		"response": "done", "task_completed": completed, "task_id": s.uuid(), "tool_calls": calls,
		"wiki_update_suggestion": nil,
	})
}

func (s *sim) knownHint() *string {
	if s.chance(0.15) {
		return nil
	}
	keys := []string{"command", "file_edit", "file_list", "file_read", "file_write", "memory_search"}
	h := keys[s.rng.IntN(len(keys))]
	return &h
}

func (tr *turn) allCompleted() bool {
	return len(tr.plan) > 0 && !slices.ContainsFunc(tr.plan, func(t task) bool { return !t.Completed })
}

func (tr *turn) current() *task {
	for i := range tr.plan {
		if !tr.plan[i].Completed {
			return &tr.plan[i]
		}
	}
	return nil
}

// toolCall is one call the model makes.
type toolCall struct {
	name, args string
	why        string // update_task_plan: the trigger it answers
}

// decide is the model: the calls of its next response.
func (tr *turn) decide() []toolCall {
	s := tr.s
	cur := tr.current()
	var calls []toolCall
	why := "model"
	switch {
	case tr.sawDepth:
		why = "depth_limit"
	case tr.sawFailure:
		why = "tool_failures"
	}
	replanP := 0.02
	if why != "model" {
		replanP = 0.15
	}
	if s.chance(replanP) {
		calls = append(calls, tr.replanCall(why))
		if s.chance(0.3) {
			calls = append(calls, tr.workCall(cur))
		}
		return calls
	}
	for range 1 + s.rng.IntN(3) {
		calls = append(calls, tr.workCall(cur))
	}
	if s.chance(0.45) || tr.sawDepth {
		ct := "success"
		switch r := s.rng.Float64(); {
		case r < 0.1:
			ct = "partial_success"
		case r < 0.13:
			ct = "failure"
		case (tr.failed > 0 || tr.replans > 0) && r < 0.7:
			// The model heeds SkillLite's refusal of success.
			ct = "partial_success"
		}
		id := 0
		if cur != nil {
			id = cur.ID
		}
		calls = append(calls, toolCall{name: "complete_task", args: fmt.Sprintf(`{"completion_type":%q,"summary":"did it","task_id":%d}`, ct, id)})
		// Work for the next task in the same response: SkillLite skips it.
		for s.chance(0.35) {
			calls = append(calls, tr.workCall(cur))
		}
	}
	return calls
}

func (tr *turn) workCall(cur *task) toolCall {
	s := tr.s
	if len(tr.history) > 0 && s.chance(0.15) {
		// The same call again: the same result, which SkillLite does not
		// emit twice in a turn.
		h := tr.history[s.rng.IntN(len(tr.history))]
		name, args, _ := strings.Cut(h, "\x00")
		return toolCall{name: name, args: args}
	}
	tool := "read_file"
	if cur != nil && cur.ToolHint != nil {
		tool = knownHints[*cur.ToolHint]
	}
	if s.chance(0.2) {
		tool = []string{"read_file", "run_command", "list_directory", "grep_files"}[s.rng.IntN(4)]
	}
	args := fmt.Sprintf(`{"path":"src/file%d.go"}`, s.rng.IntN(6))
	if s.chance(0.1) {
		args = `{"path":"missing.txt"}` // fails
	}
	return toolCall{name: tool, args: args}
}

func (tr *turn) replanCall(why string) toolCall {
	s := tr.s
	switch r := s.rng.Float64(); {
	case r < 0.12:
		// No tasks: refused by the registry's validation, not counted.
		return toolCall{name: "update_task_plan", args: `{"reason":"start over"}`, why: why}
	case r < 0.2:
		// An empty list: refused by the handler, counted.
		return toolCall{name: "update_task_plan", args: `{"reason":"nothing left","tasks":[]}`, why: why}
	}
	n := 1 + s.rng.IntN(3)
	var ts []task
	for i := range n {
		h := s.knownHint()
		if s.chance(0.3) {
			inv := inventedHints[s.rng.IntN(len(inventedHints))]
			h = &inv
		}
		ts = append(ts, task{ID: 100 + i, Description: fmt.Sprintf("revised step %d", i+1), ToolHint: h})
	}
	b, _ := json.Marshal(map[string]any{"reason": "the plan did not fit", "tasks": ts})
	return toolCall{name: "update_task_plan", args: string(b), why: why}
}
