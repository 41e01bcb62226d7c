package skilllite

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

func TestRules(t *testing.T) {
	tax := taxonomy.Default()
	coding := tax.Keywords("coding")
	if len(coding) == 0 {
		t.Fatal("the default taxonomy has no keywords for coding")
	}
	rs := &ruleset.RuleSet{Rules: []ruleset.Rule{
		{ID: "avoid:coding:search_web", Kind: ruleset.KindAvoid, TaskType: "coding", ToolHint: "search_web", Instead: "grep",
			Instruction: "avoid search_web", Confidence: 0.6096657},
		{ID: "replace:coding:search_web:grep", Kind: ruleset.KindReplace, TaskType: "coding", ToolHint: "search_web", Instead: "grep",
			Instruction: "use grep, not search_web", Confidence: 0.4385030},
		{ID: "prefer:coding:grep", Kind: ruleset.KindPrefer, TaskType: "coding", ToolHint: "grep",
			Instruction: "prefer grep", Confidence: 0.6456},
		// A type the taxonomy does not list is its own keyword; an avoid
		// rule without a better hint has none.
		{ID: "avoid:edit:x", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "x", Instruction: "avoid x", Confidence: 0.5},
	}}
	got := Rules(rs, tax)
	tests := []struct {
		name     string
		hint     string
		priority int
		keywords []string
	}{
		{"avoid: the hint to use instead", "grep", 74, coding},
		{"replace: the hint to use instead", "grep", 68, coding},
		{"prefer: its hint", "grep", 76, coding},
		{"avoid without a better hint, unlisted type", "", 70, []string{"edit"}},
	}
	if len(got) != len(tests) {
		t.Fatalf("Rules gave %d rules, want %d", len(got), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, l := got[i], rs.Rules[i]
			if r.ID != l.ID || r.Instruction != l.Instruction || r.ToolHint != tt.hint {
				t.Errorf("rule %d = id %q instruction %q hint %q, want %q %q %q", i, r.ID, r.Instruction, r.ToolHint, l.ID, l.Instruction, tt.hint)
			}
			if r.Priority != tt.priority || r.Priority != 50+int(math.Round(40*l.Confidence)) || r.Effectiveness != l.Confidence {
				t.Errorf("rule %d priority %d effectiveness %v, want %d %v", i, r.Priority, r.Effectiveness, tt.priority, l.Confidence)
			}
			if !slices.Equal(r.Keywords, tt.keywords) {
				t.Errorf("rule %d keywords %v, want %v", i, r.Keywords, tt.keywords)
			}
			if r.Origin != "evolved" || !r.Mutable || !r.Reusable || r.TriggerCount != 0 || r.ContextKeywords == nil {
				t.Errorf("rule %d: %+v, want an evolved, mutable, reusable rule never triggered", i, r)
			}
		})
	}
	// The rules own their keywords: editing one leaves the taxonomy alone.
	got[0].Keywords[0] = "changed"
	if tax.Keywords("coding")[0] == "changed" {
		t.Error("a rule's keywords share the taxonomy's array")
	}
}

// The JSON SkillLite reads: its field names, context_keywords an empty
// array, tool_hint left out when there is none.
func TestRulesJSON(t *testing.T) {
	rs := &ruleset.RuleSet{Rules: []ruleset.Rule{
		{ID: "avoid:edit:x", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "x", Instruction: "avoid x", Confidence: 0.25},
	}}
	b, err := json.Marshal(Rules(rs, taxonomy.Default()))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"id":"avoid:edit:x","priority":60,"keywords":["edit"],"context_keywords":[],"instruction":"avoid x",` +
		`"mutable":true,"origin":"evolved","reusable":true,"effectiveness":0.25,"trigger_count":0}]`
	if string(b) != want {
		t.Fatalf("Rules as JSON = %s, want %s", b, want)
	}
}
