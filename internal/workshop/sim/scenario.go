package sim

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent/planner"
)

// defaultScenario is the scenario used without -scenario
// (docs/agentsim.md describes it and its ground truth).
//
//go:embed default.json
var defaultScenario []byte

// DefaultJSON returns the embedded default scenario file, a starting point
// for one's own.
func DefaultJSON() []byte { return slices.Clone(defaultScenario) }

// Default returns the embedded default scenario.
func Default() *Scenario {
	sc, err := Parse(defaultScenario)
	if err != nil {
		panic(fmt.Sprintf("sim: embedded default scenario: %v", err)) // checked by tests
	}
	return sc
}

// Scenario is a simulated fleet: who runs, what tasks they get, which tools
// they have and how well each works, and how the simulated model behaves.
// Its file is JSON; docs/agentsim.md documents every member. Members not
// given take the defaults noted on each field, except probabilities, which
// are 0 when not given.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Fleet       Fleet  `json:"fleet"`
	Model       Model  `json:"model"`
	// Objects fill the "{object}" placeholders of task descriptions and
	// goals.
	Objects   []string   `json:"objects,omitempty"`
	TaskTypes []TaskType `json:"task_types"`
	Tools     []Tool     `json:"tools"`
}

// Fleet is who runs the sessions.
type Fleet struct {
	// Agents are the agent names (the first segment of each event's
	// source, and the key of their learned rules). Default ["agentsim"].
	Agents []string `json:"agents"`
	// Instances is how many agent instances (sources) run, assigned to the
	// names round-robin; session n runs on instance n mod Instances.
	// Default 4.
	Instances int `json:"instances"`
	// Sessions in a run. Default 300.
	Sessions int `json:"sessions"`
	// Concurrency is how many sessions run at once. Default 4.
	Concurrency int `json:"concurrency"`
	// SessionInterval is the simulated time between two session starts.
	// Default "2s".
	SessionInterval Duration `json:"session_interval"`
	// AgentVersion goes into agent.session.started. Default "agentsim-1".
	AgentVersion string `json:"agent_version"`
}

// Model is the simulated LLM.
type Model struct {
	// Name goes into agent.session.started. Default "sim-model".
	Name string `json:"name"`
	// NoHint, RandomHint and Hallucinate are the probabilities that a
	// planned task has no hint, a hint drawn uniformly from all the tools,
	// or a hint naming a tool that does not exist (one of
	// HallucinatedTools); otherwise the hint is drawn from the task type's
	// Hints. Their sum is at most 1.
	NoHint            float64  `json:"no_hint"`
	RandomHint        float64  `json:"random_hint"`
	Hallucinate       float64  `json:"hallucinate"`
	HallucinatedTools []string `json:"hallucinated_tools,omitempty"`
	// FollowHint is the probability that the model calls the task's
	// (sanitised) hint; otherwise, and when the task has no hint, it picks
	// a tool from the type's Hints (its beliefs).
	FollowHint float64 `json:"follow_hint"`
	// RetriesBeforeReplan is how many times the model calls a failing tool
	// again before it considers replanning. Default 0 (when not given).
	RetriesBeforeReplan int `json:"retries_before_replan"`
	// Replan is the probability that, after those retries, the model calls
	// update_task_plan to re-hint the task (another tool from its beliefs);
	// otherwise it switches tools itself. It stops replanning at the
	// planner's soft cap.
	Replan float64 `json:"replan"`
	// MaxAttempts is how many calls the model makes for one task before it
	// gives up (the task fails, and the session with it). Default 6.
	MaxAttempts int `json:"max_attempts"`
	// TasksPerSession and CallsPerTask are [min, max] ranges: tasks in a
	// plan, and successful calls a task needs. Defaults [2, 4] and [1, 2].
	TasksPerSession Range `json:"tasks_per_session"`
	CallsPerTask    Range `json:"calls_per_task"`
	// ThinkMS is the [min, max] simulated time the model takes per step, in
	// milliseconds. Default [200, 2000].
	ThinkMS Range `json:"think_ms"`
	// InputTokens and OutputTokens are the [min, max] tokens of one model
	// call (agent.model.called), drawn per call; CachedShare is the share
	// of a call's input tokens read from the cache (rounded down). Defaults
	// [500, 4000], [20, 400] and 0. Tokens are drawn from a stream of their
	// own, so they change nothing else a seed gives.
	InputTokens  Range   `json:"input_tokens"`
	OutputTokens Range   `json:"output_tokens"`
	CachedShare  float64 `json:"cached_share,omitempty"`
	// TaskToolBudget is the planner's tool calls per task before its depth
	// limit (planner.Config.TaskToolBudget); 0 is the planner's default.
	// The model gives up on a task at its depth limit.
	TaskToolBudget int `json:"task_tool_budget,omitempty"`
	// Churn is the probability that, right after a replan, the model
	// replans again without calling a tool (plan churn: the same pending
	// tasks restated). Default 0. Drawn from the tokens' stream.
	Churn float64 `json:"churn,omitempty"`
	// UnlabeledTasks: the planner writes no task_type (SkillLite's does
	// not), so the analyzers classify the descriptions.
	UnlabeledTasks bool `json:"unlabeled_tasks,omitempty"`
	// UniqueDescriptions: each description ends with the session's number
	// and the task's place, as free-text descriptions an LLM writes are
	// rarely repeated word for word.
	UniqueDescriptions bool `json:"unique_descriptions,omitempty"`
}

// TaskType is one kind of task.
type TaskType struct {
	Name string `json:"name"`
	// Weight is the type's share of tasks, relative to the others' (> 0).
	Weight float64 `json:"weight"`
	// Descriptions are task descriptions, one drawn per task; "{object}"
	// is replaced by one of the scenario's objects.
	Descriptions []string `json:"descriptions"`
	// Hints are the model's beliefs for the type: the relative weights
	// with which it hints (and, without a hint to follow, calls) each tool.
	// Every name must be a tool. Empty: the model hints no tool of its own
	// accord, and picks uniformly among the tools.
	Hints map[string]float64 `json:"hints,omitempty"`
}

// Tool is one tool the agents have.
type Tool struct {
	Name string `json:"name"`
	// Success is the probability that a call succeeds, per task type; "*"
	// is the default for the types not listed. Every type needs a value.
	Success map[string]float64 `json:"success"`
	// DurationMS is the [min, max] simulated duration of a call in
	// milliseconds. Default [50, 3000].
	DurationMS Range `json:"duration_ms"`
}

// AnyType is the key of Tool.Success for the types not listed.
const AnyType = "*"

// Range is an inclusive [min, max] range of integers.
type Range [2]int

// Duration is a time.Duration written as a Go duration string ("2s").
type Duration time.Duration

// UnmarshalJSON reads "1.5s", "250ms", ….
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"2s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Load reads a scenario file; an empty path is the default scenario.
func Load(path string) (*Scenario, error) {
	if path == "" {
		return Default(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	sc, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	return sc, nil
}

// Parse decodes a scenario, applies the defaults and validates it. Unknown
// members are errors (a misspelt knob must not be silently ignored).
func Parse(b []byte) (*Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, jsonError(b, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("line %d: data after the scenario object", lineOf(b, dec.InputOffset()))
	}
	sc.defaults()
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return &sc, nil
}

// jsonError adds the line to a decoding error where the decoder knows the
// offset.
func jsonError(b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("line %d: %w", lineOf(b, syn.Offset), err)
	case errors.As(err, &typ):
		return fmt.Errorf("line %d: %s: want %s, got JSON %s", lineOf(b, typ.Offset), typ.Field, typ.Type, typ.Value)
	case errors.Is(err, io.EOF):
		return errors.New("empty file: want a JSON object")
	}
	return fmt.Errorf("decode: %w", err)
}

func lineOf(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return 1 + bytes.Count(b[:off], []byte("\n"))
}

func (sc *Scenario) defaults() {
	f := &sc.Fleet
	if len(f.Agents) == 0 {
		f.Agents = []string{"agentsim"}
	}
	if f.Instances == 0 {
		f.Instances = 4
	}
	if f.Sessions == 0 {
		f.Sessions = 300
	}
	if f.Concurrency == 0 {
		f.Concurrency = 4
	}
	if f.SessionInterval == 0 {
		f.SessionInterval = Duration(2 * time.Second)
	}
	if f.AgentVersion == "" {
		f.AgentVersion = "agentsim-1"
	}
	m := &sc.Model
	if m.Name == "" {
		m.Name = "sim-model"
	}
	if m.MaxAttempts == 0 {
		m.MaxAttempts = 6
	}
	if m.TasksPerSession == (Range{}) {
		m.TasksPerSession = Range{2, 4}
	}
	if m.CallsPerTask == (Range{}) {
		m.CallsPerTask = Range{1, 2}
	}
	if m.ThinkMS == (Range{}) {
		m.ThinkMS = Range{200, 2000}
	}
	if m.InputTokens == (Range{}) {
		m.InputTokens = Range{500, 4000}
	}
	if m.OutputTokens == (Range{}) {
		m.OutputTokens = Range{20, 400}
	}
	for i := range sc.Tools {
		if sc.Tools[i].DurationMS == (Range{}) {
			sc.Tools[i].DurationMS = Range{50, 3000}
		}
	}
}

// validName is what an agent name must be: a NATS subject token that is
// also a key-value key.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Validate reports every problem of the scenario at once, joined with
// errors.Join, each naming the member at fault.
func (sc *Scenario) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	prob := func(name string, p float64) {
		if !(p >= 0 && p <= 1) {
			bad("%s: %v is not a probability in [0, 1]", name, p)
		}
	}
	rng := func(name string, r Range, lo, hi int) {
		if r[0] < lo || r[1] > hi || r[0] > r[1] {
			bad("%s: [%d, %d] is not a range within [%d, %d] with min ≤ max", name, r[0], r[1], lo, hi)
		}
	}

	f := sc.Fleet
	seen := map[string]bool{}
	for i, a := range f.Agents {
		switch {
		case !validName.MatchString(a):
			bad("fleet.agents[%d]: %q is not an agent name (letters, digits, '_' and '-')", i, a)
		case a == "global":
			bad("fleet.agents[%d]: %q is the key of the global rules, not an agent name", i, a)
		case seen[a]:
			bad("fleet.agents[%d]: %q listed twice", i, a)
		}
		seen[a] = true
	}
	if f.Instances < 1 {
		bad("fleet.instances: %d, want at least 1", f.Instances)
	} else if f.Instances < len(f.Agents) {
		bad("fleet.instances: %d is fewer than the %d agent names", f.Instances, len(f.Agents))
	}
	if f.Sessions < 1 {
		bad("fleet.sessions: %d, want at least 1", f.Sessions)
	}
	if f.Concurrency < 1 {
		bad("fleet.concurrency: %d, want at least 1", f.Concurrency)
	}
	if f.SessionInterval < 0 {
		bad("fleet.session_interval: %s is negative", time.Duration(f.SessionInterval))
	}

	tools := map[string]bool{}
	for i, t := range sc.Tools {
		name := strings.TrimSpace(t.Name)
		switch {
		case name == "" || name != t.Name:
			bad("tools[%d]: name %q is empty or has surrounding spaces", i, t.Name)
		case t.Name == planner.ToolCompleteTask || t.Name == planner.ToolUpdateTaskPlan:
			bad("tools[%d]: %q is a planner control tool, not a tool to simulate", i, t.Name)
		case tools[t.Name]:
			bad("tools[%d]: %q listed twice", i, t.Name)
		}
		tools[t.Name] = true
		rng(fmt.Sprintf("tools[%d] (%s).duration_ms", i, t.Name), t.DurationMS, 0, 3_600_000)
	}
	if len(sc.Tools) == 0 {
		bad("tools: none; a scenario needs at least one tool")
	}

	m := sc.Model
	prob("model.no_hint", m.NoHint)
	prob("model.random_hint", m.RandomHint)
	prob("model.hallucinate", m.Hallucinate)
	prob("model.follow_hint", m.FollowHint)
	prob("model.replan", m.Replan)
	prob("model.cached_share", m.CachedShare)
	prob("model.churn", m.Churn)
	if s := m.NoHint + m.RandomHint + m.Hallucinate; s > 1+1e-9 {
		bad("model: no_hint + random_hint + hallucinate = %v, more than 1", s)
	}
	if m.Hallucinate > 0 && len(m.HallucinatedTools) == 0 {
		bad("model.hallucinated_tools: none, but hallucinate is %v", m.Hallucinate)
	}
	for i, h := range m.HallucinatedTools {
		if strings.TrimSpace(h) == "" || tools[h] || h == planner.ToolCompleteTask || h == planner.ToolUpdateTaskPlan {
			bad("model.hallucinated_tools[%d]: %q is empty or an existing tool", i, h)
		}
	}
	if m.RetriesBeforeReplan < 0 {
		bad("model.retries_before_replan: %d is negative", m.RetriesBeforeReplan)
	}
	if m.MaxAttempts < 1 || m.MaxAttempts > 100 {
		bad("model.max_attempts: %d, want 1 to 100", m.MaxAttempts)
	}
	rng("model.tasks_per_session", m.TasksPerSession, 1, 50)
	rng("model.calls_per_task", m.CallsPerTask, 1, 20)
	rng("model.think_ms", m.ThinkMS, 0, 3_600_000)
	if m.TaskToolBudget < 0 {
		bad("model.task_tool_budget: %d is negative", m.TaskToolBudget)
	}
	rng("model.input_tokens", m.InputTokens, 0, 10_000_000)
	rng("model.output_tokens", m.OutputTokens, 0, 10_000_000)
	if m.CallsPerTask[1] > m.MaxAttempts {
		bad("model.calls_per_task: up to %d successful calls needed, more than max_attempts %d", m.CallsPerTask[1], m.MaxAttempts)
	}

	types := map[string]bool{}
	for i, tt := range sc.TaskTypes {
		at := fmt.Sprintf("task_types[%d]", i)
		switch {
		case strings.TrimSpace(tt.Name) == "" || tt.Name != strings.TrimSpace(tt.Name):
			bad("%s: name %q is empty or has surrounding spaces", at, tt.Name)
		case types[tt.Name]:
			bad("%s: %q listed twice", at, tt.Name)
		case tt.Name == AnyType:
			bad("%s: %q is reserved (the default of tools[].success)", at, tt.Name)
		}
		types[tt.Name] = true
		at = fmt.Sprintf("%s (%s)", at, tt.Name)
		if !(tt.Weight > 0) || math.IsInf(tt.Weight, 0) {
			bad("%s.weight: %v, want a number above 0", at, tt.Weight)
		}
		if len(tt.Descriptions) == 0 {
			bad("%s.descriptions: none; a type needs at least one", at)
		}
		for j, d := range tt.Descriptions {
			if strings.TrimSpace(d) == "" {
				bad("%s.descriptions[%d]: empty", at, j)
			}
			if strings.Contains(d, "{object}") && len(sc.Objects) == 0 {
				bad("%s.descriptions[%d]: uses {object} but the scenario has no objects", at, j)
			}
		}
		for _, h := range sortedKeys(tt.Hints) {
			if !tools[h] {
				bad("%s.hints: %q is not one of the tools", at, h)
			}
			if w := tt.Hints[h]; !(w >= 0) || math.IsInf(w, 0) {
				bad("%s.hints[%q]: weight %v, want a number ≥ 0", at, h, w)
			}
		}
	}
	if len(sc.TaskTypes) == 0 {
		bad("task_types: none; a scenario needs at least one")
	}
	for i, t := range sc.Tools {
		at := fmt.Sprintf("tools[%d] (%s).success", i, t.Name)
		for _, k := range sortedKeys(t.Success) {
			if k != AnyType && !types[k] {
				bad("%s: %q is not one of the task types", at, k)
			}
			prob(fmt.Sprintf("%s[%q]", at, k), t.Success[k])
		}
		if _, ok := t.Success[AnyType]; !ok {
			for _, tt := range sc.TaskTypes {
				if _, ok := t.Success[tt.Name]; !ok {
					bad("%s: no probability for task type %q (give it, or a %q default)", at, tt.Name, AnyType)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// ToolNames returns the names of the tools, in order.
func (sc *Scenario) ToolNames() []string {
	names := make([]string, len(sc.Tools))
	for i, t := range sc.Tools {
		names[i] = t.Name
	}
	return names
}

// Success returns the probability that a call of tool succeeds in a task of
// taskType (0 for a tool the scenario does not have).
func (sc *Scenario) Success(tool, taskType string) float64 {
	for _, t := range sc.Tools {
		if t.Name != tool {
			continue
		}
		if p, ok := t.Success[taskType]; ok {
			return p
		}
		return t.Success[AnyType]
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
