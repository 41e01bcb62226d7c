package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// RuleKind says what a learned rule does to a task's tool hint.
type RuleKind string

// Rule kinds.
const (
	// KindPrefer: a task of the rule's type that has no hint gets ToolHint
	// (when it is available).
	KindPrefer RuleKind = "prefer"
	// KindAvoid: ToolHint is removed from tasks of the rule's type; when
	// Instead is set and available, it replaces it.
	KindAvoid RuleKind = "avoid"
	// KindReplace: as KindAvoid, with Instead required.
	KindReplace RuleKind = "replace"
)

// Rule is one learned planning rule. Its JSON form is what the analyzer
// writes:
//
//	{"id": "r-017", "kind": "avoid", "task_type": "edit", "tool_hint": "search_web",
//	 "instead": "grep", "instruction": "Edit tasks search the repository, not the web."}
type Rule struct {
	// ID names the rule in agent.session.started (rules) and in
	// agent.hint.stripped (rule_id).
	ID   string   `json:"id"`
	Kind RuleKind `json:"kind"`
	// TaskType is the type of task the rule applies to: a task's own
	// task_type, else the session's. A task without either matches no rule.
	TaskType string `json:"task_type"`
	// ToolHint is the hint preferred (prefer) or forbidden (avoid, replace).
	ToolHint string `json:"tool_hint"`
	// Instead replaces a forbidden hint (avoid: optional; replace: required).
	Instead string `json:"instead,omitempty"`
	// Instruction is the rule in words, for the planning prompt; the
	// planner does not read it.
	Instruction string `json:"instruction,omitempty"`
}

// RuleSet is a version of the learned rules, as the analyzer writes it:
// {"version": "2025-06-10.2", "rules": [...]}.
type RuleSet struct {
	// Version is reported as ruleset in agent.session.started.
	Version string `json:"version"`
	Rules   []Rule `json:"rules"`
}

// ParseRuleSet decodes and validates the JSON of a rule set. Members it does
// not know are ignored, so that the analyzer can add some.
func ParseRuleSet(b []byte) (RuleSet, error) {
	var rs RuleSet
	if err := json.Unmarshal(b, &rs); err != nil {
		return RuleSet{}, fmt.Errorf("decode rule set: %w", err)
	}
	if err := rs.Validate(); err != nil {
		return RuleSet{}, fmt.Errorf("rule set %q: %w", rs.Version, err)
	}
	return rs, nil
}

// Validate reports every problem of rs at once, joined with errors.Join:
// a missing version (when there are rules), and per rule an empty or
// repeated id, an unknown kind, an empty task_type or tool_hint, a replace
// rule without instead, or instead equal to tool_hint.
func (rs RuleSet) Validate() error {
	var errs []error
	if rs.Version == "" && len(rs.Rules) > 0 {
		errs = append(errs, errors.New("no version"))
	}
	seen := make(map[string]bool, len(rs.Rules))
	for i, r := range rs.Rules {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("rule %d (%q): %s", i, r.ID, fmt.Sprintf(format, args...)))
		}
		switch {
		case r.ID == "":
			bad("empty id")
		case seen[r.ID]:
			bad("id used twice")
		}
		seen[r.ID] = true
		switch r.Kind {
		case KindPrefer, KindAvoid, KindReplace:
		default:
			bad("kind %q is not one of prefer, avoid, replace", r.Kind)
		}
		if strings.TrimSpace(r.TaskType) == "" {
			bad("empty task_type")
		}
		if strings.TrimSpace(r.ToolHint) == "" {
			bad("empty tool_hint")
		}
		if r.Kind == KindReplace && strings.TrimSpace(r.Instead) == "" {
			bad("replace rule without instead")
		}
		if r.Instead != "" && r.Instead == r.ToolHint {
			bad("instead is the tool_hint itself")
		}
	}
	return errors.Join(errs...)
}

// IDs returns the ids of the rules, in order; nil when there are none.
func (rs RuleSet) IDs() []string {
	if len(rs.Rules) == 0 {
		return nil
	}
	ids := make([]string, len(rs.Rules))
	for i, r := range rs.Rules {
		ids[i] = r.ID
	}
	return ids
}

// forbidding returns the first avoid or replace rule that forbids hint for
// tasks of taskType.
func (rs RuleSet) forbidding(taskType, hint string) (Rule, bool) {
	if taskType == "" {
		return Rule{}, false
	}
	for _, r := range rs.Rules {
		if (r.Kind == KindAvoid || r.Kind == KindReplace) && r.TaskType == taskType && r.ToolHint == hint {
			return r, true
		}
	}
	return Rule{}, false
}

// preferred returns the first prefer rule for taskType whose hint is
// available and not forbidden for that type.
func (rs RuleSet) preferred(taskType string, available func(string) bool) (Rule, bool) {
	if taskType == "" {
		return Rule{}, false
	}
	for _, r := range rs.Rules {
		if r.Kind != KindPrefer || r.TaskType != taskType || !available(r.ToolHint) {
			continue
		}
		if _, forbidden := rs.forbidding(taskType, r.ToolHint); forbidden {
			continue
		}
		return r, true
	}
	return Rule{}, false
}
