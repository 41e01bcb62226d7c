package skilllite

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// Rule is one planning rule as SkillLite reads it, its PlanningRule
// (skilllite-core/src/planning.rs:28-51): the agent matches a rule against
// the user's request by keyword and adds it to its planning prompt.
type Rule struct {
	ID       string `json:"id"`
	Priority int    `json:"priority"`
	// Keywords are the literal keywords of the rule's task type in the
	// taxonomy (or the type's name when the taxonomy does not list it).
	Keywords        []string `json:"keywords"`
	ContextKeywords []string `json:"context_keywords"`
	// ToolHint is the hint the rule asks for, one of SkillLite's categories:
	// prefer, its hint; replace and avoid, the hint to use instead (omitted
	// when an avoid rule has none).
	ToolHint    string `json:"tool_hint,omitempty"`
	Instruction string `json:"instruction"`
	Mutable     bool   `json:"mutable"`
	Origin      string `json:"origin"`
	Reusable    bool   `json:"reusable"`
	// Effectiveness is the rule's confidence; TriggerCount starts at 0 (the
	// agent counts the times the rule fires).
	Effectiveness float64 `json:"effectiveness"`
	TriggerCount  int64   `json:"trigger_count"`
}

// The band SkillLite keeps evolved rules in: priority 50–79 (its seed rules
// have 80–100), at most 50 rules
// (skilllite-evolution/src/prompt_learner.rs:174-196).
const (
	MinPriority = 50
	MaxPriority = 79
	MaxRules    = 50
)

// WorkspaceRulesFile is where SkillLite reads a workspace's rules, merged on
// top of its global ones (skilllite-agent/src/planning_rules.rs:27-72).
func WorkspaceRulesFile(workspace string) string {
	return filepath.Join(workspace, ".skilllite", "planning_rules.json")
}

// builtinHints are SkillLite's hint categories, each with the tools it
// stands for (skilllite-agent/src/tool_hint_resolver.rs:23-79). A rule
// whose hint is none of them (nor a skill's) is dropped by the agent
// (task_planner.rs:143-161).
var builtinHints = map[string][]string{
	"file_list":      {"list_directory", "file_exists"},
	"file_read":      {"read_file", "file_exists"},
	"file_write":     {"write_output", "write_file"},
	"file_edit":      {"read_file", "file_exists", "search_replace", "preview_edit", "write_file"},
	"file_operation": {"read_file", "list_directory", "file_exists", "write_output", "write_file", "search_replace", "preview_edit", "preview_server", "run_command"},
	"preview":        {"preview_server"},
	"command":        {"run_command"},
	"chat_history":   {"chat_history"},
	"memory_write":   {"memory_write"},
	"memory_search":  {"memory_search", "memory_list"},
	"analysis":       {},
}

// toolCategory is the category a tool name stands for in a rule: the
// narrowest builtin hint listing the tool.
var toolCategory = map[string]string{
	"list_directory": "file_list", "file_exists": "file_read", "read_file": "file_read",
	"write_output": "file_write", "write_file": "file_write", "search_replace": "file_edit",
	"preview_edit": "file_edit", "preview_server": "preview", "run_command": "command",
	"chat_history": "chat_history", "memory_write": "memory_write", "memory_search": "memory_search",
	"memory_list": "memory_search",
}

// Hint returns the SkillLite hint for h, a hint or tool name of a learned
// rule: a builtin category as is, a tool name its category; false when
// SkillLite knows neither (grep, say: its tool is grep_files, in no
// category).
func Hint(h string) (string, bool) {
	if _, ok := builtinHints[h]; ok {
		return h, true
	}
	c, ok := toolCategory[h]
	return c, ok
}

// RuleSet is a learned rule set in SkillLite's terms.
type RuleSet struct {
	Rules []Rule
	// Unknown are the ids of rules left out because SkillLite knows no hint
	// for theirs; OverCap those left out past MaxRules (the least confident).
	Unknown, OverCap []string
}

// Rules returns rs as SkillLite planning rules, with origin "evolved" so
// that the agent may revise them (mutable, reusable): hints SkillLite knows
// (Hint), priority MinPriority + 29 × confidence, rounded, at most MaxRules
// rules, the most confident first. A rule's keywords are those of its task
// type in tax.
func Rules(rs *ruleset.RuleSet, tax *taxonomy.Taxonomy) RuleSet {
	set := RuleSet{Rules: []Rule{}}
	for _, r := range rs.Rules {
		kw := tax.Keywords(r.TaskType)
		if len(kw) == 0 {
			kw = []string{r.TaskType}
		}
		hint := r.ToolHint
		if r.Kind != ruleset.KindPrefer {
			hint = r.Instead
		}
		if hint != "" {
			h, ok := Hint(hint)
			if !ok {
				set.Unknown = append(set.Unknown, r.ID)
				continue
			}
			hint = h
		}
		set.Rules = append(set.Rules, Rule{
			ID:              r.ID,
			Priority:        MinPriority + int(math.Round((MaxPriority-MinPriority)*min(1, max(0, r.Confidence)))),
			Keywords:        append([]string(nil), kw...),
			ContextKeywords: []string{},
			ToolHint:        hint,
			Instruction:     r.Instruction,
			Mutable:         true,
			Origin:          "evolved",
			Reusable:        true,
			Effectiveness:   r.Confidence,
			TriggerCount:    0,
		})
	}
	slices.SortStableFunc(set.Rules, func(a, b Rule) int { return cmp.Compare(b.Effectiveness, a.Effectiveness) })
	if len(set.Rules) > MaxRules {
		for _, r := range set.Rules[MaxRules:] {
			set.OverCap = append(set.OverCap, r.ID)
		}
		set.Rules = set.Rules[:MaxRules]
	}
	return set
}
