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
// dialect's name.
func DefaultTools() map[string]string {
	return map[string]string{
		"update_task_plan": SkillLite,
		"TodoWrite":        ClaudeCode,
		"update_plan":      Codex,
		"write_todos":      DeepAgents,
	}
}

// Config configures a Registry.
type Config struct {
	// Tools maps a plan tool's name, as the agent calls it, to the name of a
	// built-in dialect.
	Tools map[string]string
	// SoftCap is the replan ordinal from which a replan is over the cap
	// (over_cap: ordinal ≥ SoftCap); 0 means no cap.
	SoftCap int64
	// RewordThreshold is the similarity (0 < t ≤ 1) from which a task of a
	// new version whose description matches no earlier one exactly or after
	// normalising is taken for a rewording of an earlier task.
	RewordThreshold float64
}

// DefaultConfig returns the defaults: the four built-in tools, soft cap 3,
// reword threshold 0.7.
func DefaultConfig() Config {
	return Config{Tools: DefaultTools(), SoftCap: DefaultSoftCap, RewordThreshold: DefaultRewordThreshold}
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	for _, tool := range slices.Sorted(maps.Keys(c.Tools)) {
		if tool == "" {
			errs = append(errs, errors.New("empty tool name"))
		}
		if _, ok := builtin[c.Tools[tool]]; !ok {
			errs = append(errs, fmt.Errorf("tool %q: unknown dialect %q (known: %s)", tool, c.Tools[tool], strings.Join(builtinNames(), ", ")))
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

// Registry resolves plan tools to dialects and starts per-session trackers.
// It is immutable and safe for concurrent use.
type Registry struct {
	tools map[string]Dialect
	cfg   Config
}

// New returns the Registry of cfg, or cfg's problems.
func New(cfg Config) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("plan dialect config: %w", err)
	}
	r := &Registry{tools: make(map[string]Dialect, len(cfg.Tools)), cfg: cfg}
	r.cfg.Tools = maps.Clone(cfg.Tools)
	for tool, name := range cfg.Tools {
		r.tools[tool] = builtin[name]
	}
	return r, nil
}

// Lookup returns the dialect of a plan tool, or false when tool is not a
// plan tool (an ordinary tool call).
func (r *Registry) Lookup(tool string) (Dialect, bool) {
	d, ok := r.tools[tool]
	return d, ok
}

// NewTracker returns a Tracker for one new session.
func (r *Registry) NewTracker() *Tracker {
	return &Tracker{softCap: r.cfg.SoftCap, threshold: r.cfg.RewordThreshold}
}
