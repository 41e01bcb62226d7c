package plandialect

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Defaults of Config.
const (
	DefaultSoftCap         = 3   // SkillLite's and the seed agent's soft cap on replans
	DefaultRewordThreshold = 0.7 // see docs/plan-dialects.md, "Stable ids"
)

// DefaultTools maps the plan tools the built-in dialects recognise to their
// dialect's name: the whole-list tools (Dialect), Claude Code's incremental
// task tools and the control tools beside them (StepDialect).
func DefaultTools() map[string]string {
	return map[string]string{
		"update_task_plan": SkillLite,
		"TodoWrite":        ClaudeCode,
		"update_plan":      Codex,
		"write_todos":      DeepAgents,
		"TaskCreate":       ClaudeCodeTaskCreate,
		"TaskUpdate":       ClaudeCodeTaskUpdate,
		"complete_task":    SkillLiteCompleteTask,
		"TaskList":         Control,
		"TaskGet":          Control,
		"ToolSearch":       Control,
	}
}

// Config configures a Registry.
type Config struct {
	// Tools maps a plan tool's name, as the agent calls it, to the name of a
	// built-in dialect: a Dialect (Registry.Lookup) or a StepDialect
	// (Registry.LookupStep).
	Tools map[string]string
	// SoftCap is the replan ordinal from which a replan is over the cap
	// (over_cap: ordinal ≥ SoftCap); 0 means no cap.
	SoftCap int64
	// RewordThreshold is the similarity (0 < t ≤ 1) from which a task of a
	// new version whose description matches no earlier one exactly or after
	// normalising is taken for a rewording of an earlier task.
	RewordThreshold float64
	// Requests: a plan call that lists a new task when every task of the
	// plan in force is completed begins the agent's next request (Began),
	// never a replan (docs/plan-dialects.md, "Requests"). Off for SkillLite,
	// whose turn is the request already and whose handler counts every
	// update_task_plan as a replan.
	Requests bool
}

// DefaultConfig returns the defaults: the built-in tools, soft cap 3,
// reword threshold 0.7, requests told apart.
func DefaultConfig() Config {
	return Config{Tools: DefaultTools(), SoftCap: DefaultSoftCap, RewordThreshold: DefaultRewordThreshold, Requests: true}
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	for _, tool := range slices.Sorted(maps.Keys(c.Tools)) {
		if tool == "" {
			errs = append(errs, errors.New("empty tool name"))
		}
		_, whole := builtin[c.Tools[tool]]
		if _, step := builtinSteps[c.Tools[tool]]; !whole && !step {
			errs = append(errs, fmt.Errorf("tool %q: unknown dialect %q (known: %s)", tool, c.Tools[tool], strings.Join(knownNames(), ", ")))
		}
	}
	if c.SoftCap < 0 {
		errs = append(errs, fmt.Errorf("soft cap %d is negative", c.SoftCap))
	}
	if !(c.RewordThreshold > 0 && c.RewordThreshold <= 1) {
		errs = append(errs, fmt.Errorf("reword threshold %v is not in (0, 1]", c.RewordThreshold))
	}
	return errors.Join(errs...)
}

func builtinNames() []string { return slices.Sorted(maps.Keys(builtin)) }

// knownNames are the names of every built-in dialect, whole-list and
// incremental.
func knownNames() []string {
	return slices.Sorted(slices.Values(append(builtinNames(), slices.Collect(maps.Keys(builtinSteps))...)))
}

// Registry resolves plan tools to dialects and starts per-session trackers.
// It is immutable and safe for concurrent use.
type Registry struct {
	tools map[string]Dialect
	steps map[string]StepDialect
	cfg   Config
}

// New returns the Registry of cfg, or cfg's problems.
func New(cfg Config) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("plan dialect config: %w", err)
	}
	r := &Registry{tools: map[string]Dialect{}, steps: map[string]StepDialect{}, cfg: cfg}
	r.cfg.Tools = maps.Clone(cfg.Tools)
	for tool, name := range cfg.Tools {
		if d, ok := builtin[name]; ok {
			r.tools[tool] = d
		} else {
			r.steps[tool] = builtinSteps[name]
		}
	}
	return r, nil
}

// Lookup returns the dialect of a plan tool, or false when tool is not a
// plan tool (an ordinary tool call).
func (r *Registry) Lookup(tool string) (Dialect, bool) {
	d, ok := r.tools[tool]
	return d, ok
}

// LookupStep returns the incremental dialect of a task tool or a control
// tool, or false when tool is neither (a whole-list plan tool, or an
// ordinary tool call).
func (r *Registry) LookupStep(tool string) (StepDialect, bool) {
	d, ok := r.steps[tool]
	return d, ok
}

// NewTracker returns a Tracker for one new session.
func (r *Registry) NewTracker() *Tracker {
	return &Tracker{softCap: r.cfg.SoftCap, threshold: r.cfg.RewordThreshold, requests: r.cfg.Requests}
}
