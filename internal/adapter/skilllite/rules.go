package skilllite

import (
	"math"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// Rule is one entry of SkillLite's rules.json, an array of planning rules
// the agent matches against the user's request by keyword and adds to its
// planning prompt.
type Rule struct {
	ID       string `json:"id"`
	Priority int    `json:"priority"`
	// Keywords are the literal keywords of the rule's task type in the
	// taxonomy (or the type's name when the taxonomy does not list it).
	Keywords        []string `json:"keywords"`
	ContextKeywords []string `json:"context_keywords"`
	// ToolHint is the hint the rule asks for: prefer, its hint; replace and
	// avoid, the hint to use instead (omitted when an avoid rule has none).
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

// Rules returns rs in SkillLite's rules.json format, with origin "evolved"
// so that the agent may revise them (mutable, reusable), and priority
// 50 + 40 × confidence, rounded: from 50 to 90, below the seed's
// hand-written rules of the highest priority. A rule's keywords are those
// of its task type in tax.
func Rules(rs *ruleset.RuleSet, tax *taxonomy.Taxonomy) []Rule {
	out := make([]Rule, 0, len(rs.Rules))
	for _, r := range rs.Rules {
		kw := tax.Keywords(r.TaskType)
		if len(kw) == 0 {
			kw = []string{r.TaskType}
		}
		hint := r.ToolHint
		if r.Kind != ruleset.KindPrefer {
			hint = r.Instead
		}
		out = append(out, Rule{
			ID:              r.ID,
			Priority:        50 + int(math.Round(40*r.Confidence)),
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
	return out
}
