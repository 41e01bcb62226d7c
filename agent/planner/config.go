package planner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent/ruleset"
)

// Defaults of Config.
const (
	// DefaultReplanSoftCap is the replan ordinal from which update_task_plan
	// is over the soft cap (over_cap true, and the model is told to stop
	// replanning).
	DefaultReplanSoftCap = 3
	// DefaultTaskToolBudget is how many tool calls a task may use before the
	// model is told to complete it or replan (the depth limit).
	DefaultTaskToolBudget = 15
)

// The control tools: the planner records their calls itself (CompleteTask,
// UpdateTaskPlan) and lists them among the session's tools.
const (
	ToolCompleteTask   = "complete_task"
	ToolUpdateTaskPlan = "update_task_plan"
)

// Config configures a Planner. The zero value is usable: no tools (every
// hint is stripped), no rules, the default caps.
type Config struct {
	// Tools are the tool and skill names available in the session. A task
	// hint naming anything else is stripped as unavailable. The control
	// tools are added when missing. An agent that uses pseudo-hints (such
	// as SkillLite's "analysis") lists them here too.
	Tools []string
	// ReplanSoftCap is the replan ordinal from which a replan is over the
	// cap. Zero means DefaultReplanSoftCap.
	ReplanSoftCap int
	// TaskToolBudget is the tool calls a task may use before the depth
	// limit. Zero means DefaultTaskToolBudget.
	TaskToolBudget int
	// Rules are the learned rules loaded for the session. When the rule
	// set has a holdout (v1.4), Start assigns the session to an arm
	// (ruleset.Assign): in the holdout arm no rule applies, and
	// agent.session.started reports no rule set, only the assignment.
	Rules ruleset.RuleSet
	// Workspace, when set, is the unit the holdout assigns instead of the
	// session: the workspace's id, whose sessions all share one arm (for
	// an agent that reads one rule set per workspace, as SkillLite does).
	Workspace string
	// Clock gives the time for agent.session.ended's duration_ms. Default
	// time.Now. (The events' own times come from the Session's clock.)
	Clock func() time.Time
}

// Validate reports every problem of c at once, joined with errors.Join.
func (c Config) Validate() error {
	var errs []error
	if c.ReplanSoftCap < 0 {
		errs = append(errs, fmt.Errorf("replan soft cap %d is negative", c.ReplanSoftCap))
	}
	if c.TaskToolBudget < 0 {
		errs = append(errs, fmt.Errorf("task tool budget %d is negative", c.TaskToolBudget))
	}
	seen := make(map[string]bool, len(c.Tools))
	for i, name := range c.Tools {
		switch {
		case strings.TrimSpace(name) == "":
			errs = append(errs, fmt.Errorf("tool %d: empty name", i))
		case name != strings.TrimSpace(name):
			errs = append(errs, fmt.Errorf("tool %d: name %q has surrounding spaces", i, name))
		case seen[name]:
			errs = append(errs, fmt.Errorf("tool %d: %q listed twice", i, name))
		}
		seen[name] = true
	}
	if err := c.Rules.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("rules: %w", err))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with the zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.ReplanSoftCap == 0 {
		c.ReplanSoftCap = DefaultReplanSoftCap
	}
	if c.TaskToolBudget == 0 {
		c.TaskToolBudget = DefaultTaskToolBudget
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}
