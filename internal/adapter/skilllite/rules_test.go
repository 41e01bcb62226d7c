package skilllite

import (
	"bytes"
	"encoding/json"
	"fmt"
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
		{ID: "avoid:coding:web_search", Kind: ruleset.KindAvoid, TaskType: "coding", ToolHint: "web_search", Instead: "read_file",
			Instruction: "avoid web_search", Confidence: 0.6096657},
		{ID: "replace:coding:web_search:file_read", Kind: ruleset.KindReplace, TaskType: "coding", ToolHint: "web_search", Instead: "file_read",
			Instruction: "use file_read, not web_search", Confidence: 0.4385030},
		{ID: "prefer:coding:run_command", Kind: ruleset.KindPrefer, TaskType: "coding", ToolHint: "run_command",
			Instruction: "prefer run_command", Confidence: 0.6456},
		// SkillLite knows no hint grep (its tool is grep_files): left out.
		{ID: "prefer:coding:grep", Kind: ruleset.KindPrefer, TaskType: "coding", ToolHint: "grep", Instruction: "prefer grep", Confidence: 0.9},
		// A type the taxonomy does not list is its own keyword; an avoid
		// rule without a better hint has none.
		{ID: "avoid:edit:x", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "x", Instruction: "avoid x", Confidence: 0.5},
	}}
	set := Rules(rs, tax)
	tests := []struct {
		id, hint string
		priority int
		keywords []string
	}{
		// The most confident first; priority 50 + 29 × confidence.
		{"prefer:coding:run_command", "command", 69, coding}, // a tool name: its category
		{"avoid:coding:web_search", "file_read", 68, coding},
		{"avoid:edit:x", "", 65, []string{"edit"}},
		{"replace:coding:web_search:file_read", "file_read", 63, coding}, // a category as is
	}
	if len(set.Rules) != len(tests) || !slices.Equal(set.Unknown, []string{"prefer:coding:grep"}) || len(set.OverCap) != 0 {
		t.Fatalf("Rules = %d rules, unknown %v, over cap %v; want %d, [prefer:coding:grep], none", len(set.Rules), set.Unknown, set.OverCap, len(tests))
	}
	for i, tt := range tests {
		r := set.Rules[i]
		if r.ID != tt.id || r.ToolHint != tt.hint || r.Priority != tt.priority || !slices.Equal(r.Keywords, tt.keywords) {
			t.Errorf("rule %d = %s hint %q priority %d keywords %v, want %s %q %d %v", i, r.ID, r.ToolHint, r.Priority, r.Keywords, tt.id, tt.hint, tt.priority, tt.keywords)
		}
		if r.Origin != "evolved" || !r.Mutable || !r.Reusable || r.TriggerCount != 0 || r.ContextKeywords == nil {
			t.Errorf("rule %d: %+v, want an evolved, mutable, reusable rule never triggered", i, r)
		}
	}
	// The rules own their keywords: editing one leaves the taxonomy alone.
	set.Rules[0].Keywords[0] = "changed"
	if tax.Keywords("coding")[0] == "changed" {
		t.Error("a rule's keywords share the taxonomy's array")
	}
}

// The cap: at most MaxRules rules, the least confident left out; every
// priority in SkillLite's band for evolved rules.
func TestRulesCap(t *testing.T) {
	rs := &ruleset.RuleSet{}
	for i := range MaxRules + 5 {
		rs.Rules = append(rs.Rules, ruleset.Rule{ID: fmt.Sprintf("prefer:t:%d", i), Kind: ruleset.KindPrefer, TaskType: "t",
			ToolHint: "read_file", Instruction: "x", Confidence: float64(i) / (MaxRules + 4)})
	}
	set := Rules(rs, taxonomy.Default())
	if len(set.Rules) != MaxRules || !slices.Equal(set.OverCap, []string{"prefer:t:4", "prefer:t:3", "prefer:t:2", "prefer:t:1", "prefer:t:0"}) {
		t.Fatalf("%d rules, over cap %v", len(set.Rules), set.OverCap)
	}
	if set.Rules[0].Priority != MaxPriority || set.Rules[MaxRules-1].Priority < MinPriority {
		t.Errorf("priorities %d … %d, want within %d–%d", set.Rules[0].Priority, set.Rules[MaxRules-1].Priority, MinPriority, MaxPriority)
	}
}

// planningRule is SkillLite's PlanningRule, its field set
// (skilllite-core/src/planning.rs:28-51), for the test below.
type planningRule struct {
	ID              string   `json:"id"`
	Priority        *uint32  `json:"priority"`
	Keywords        []string `json:"keywords"`
	ContextKeywords []string `json:"context_keywords"`
	ToolHint        *string  `json:"tool_hint"`
	Instruction     *string  `json:"instruction"`
	Mutable         bool     `json:"mutable"`
	Origin          string   `json:"origin"`
	Reusable        bool     `json:"reusable"`
	Effectiveness   *float32 `json:"effectiveness"`
	TriggerCount    *uint32  `json:"trigger_count"`
}

// A planning_rules.json we write loads with SkillLite's field set (no
// member it lacks; id and instruction, its required members, present), and
// every rule survives its availability filter, which drops a rule whose
// hint is neither a builtin hint nor a skill's (task_planner.rs:143-161,
// tool_hint_resolver.rs:105-108, 187-196): here no skills, so builtins only.
func TestRulesLoadAsSkillLite(t *testing.T) {
	rs := &ruleset.RuleSet{Rules: []ruleset.Rule{
		{ID: "prefer:coding:read_file", Kind: ruleset.KindPrefer, TaskType: "coding", ToolHint: "read_file", Instruction: "read first", Confidence: 0.7},
		{ID: "replace:coding:grep:list_directory", Kind: ruleset.KindReplace, TaskType: "coding", ToolHint: "grep", Instead: "list_directory", Instruction: "list", Confidence: 0.4},
		{ID: "prefer:coding:grep", Kind: ruleset.KindPrefer, TaskType: "coding", ToolHint: "grep", Instruction: "grep", Confidence: 0.9},
		{ID: "avoid:coding:web_search", Kind: ruleset.KindAvoid, TaskType: "coding", ToolHint: "web_search", Instruction: "no web", Confidence: 0.3},
	}}
	b, err := json.Marshal(Rules(rs, taxonomy.Default()).Rules)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var loaded []planningRule
	if err := dec.Decode(&loaded); err != nil {
		t.Fatalf("SkillLite's field set does not read %s: %v", b, err)
	}
	var kept []string
	for _, r := range loaded {
		if r.ID == "" || r.Instruction == nil || r.Priority == nil {
			t.Errorf("rule %+v lacks a required member", r)
		}
		if p := int(*r.Priority); p < MinPriority || p > MaxPriority {
			t.Errorf("rule %s: priority %d outside %d–%d", r.ID, p, MinPriority, MaxPriority)
		}
		if r.ToolHint != nil {
			if _, builtin := builtinHints[*r.ToolHint]; !builtin {
				continue // SkillLite drops it
			}
		}
		kept = append(kept, r.ID)
	}
	if want := []string{"prefer:coding:read_file", "replace:coding:grep:list_directory", "avoid:coding:web_search"}; !slices.Equal(kept, want) {
		t.Errorf("SkillLite keeps %v of our rules, want %v", kept, want)
	}
}

// The JSON SkillLite reads: its field names, context_keywords an empty
// array, tool_hint left out when there is none.
func TestRulesJSON(t *testing.T) {
	rs := &ruleset.RuleSet{Rules: []ruleset.Rule{
		{ID: "avoid:edit:x", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "x", Instruction: "avoid x", Confidence: 0.25},
	}}
	b, err := json.Marshal(Rules(rs, taxonomy.Default()).Rules)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"id":"avoid:edit:x","priority":57,"keywords":["edit"],"context_keywords":[],"instruction":"avoid x",` +
		`"mutable":true,"origin":"evolved","reusable":true,"effectiveness":0.25,"trigger_count":0}]`
	if string(b) != want {
		t.Fatalf("Rules as JSON = %s, want %s", b, want)
	}
}
