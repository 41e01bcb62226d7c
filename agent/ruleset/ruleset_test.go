package ruleset

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/evosignal/evosignal/schema"
)

// TestRuleJSON pins the JSON of a rule as an agent reads it: a hand-written
// rule set needs only these members.
func TestRuleJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want RuleSet
	}{
		{
			name: "every member of a rule",
			in:   `{"version":"2025-06-10.2","rules":[{"id":"r-017","kind":"replace","task_type":"edit","tool_hint":"search_web","instead":"grep","instruction":"Edit tasks search the repository.","support":4,"confidence":0.5,"evidence":{"replans":4}}]}`,
			want: RuleSet{Version: "2025-06-10.2", Rules: []Rule{
				{ID: "r-017", Kind: KindReplace, TaskType: "edit", ToolHint: "search_web", Instead: "grep", Instruction: "Edit tasks search the repository.",
					Support: 4, Confidence: 0.5, Evidence: map[string]any{"replans": float64(4)}},
			}},
		},
		{
			name: "optional members omitted",
			in:   `{"version":"v2","rules":[{"id":"r-1","kind":"prefer","task_type":"test","tool_hint":"run_command"}]}`,
			want: RuleSet{Version: "v2", Rules: []Rule{{ID: "r-1", Kind: KindPrefer, TaskType: "test", ToolHint: "run_command"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse(%s) error = %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%s) = %+v, want %+v", tt.in, got, tt.want)
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse(b)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("Parse(json.Marshal(%+v)) = %+v, %v; want the same", got, again, err)
			}
		})
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		agent string
		ok    bool
	}{
		{"skilllite", true},
		{"coder-2_x", true},
		{GlobalKey, true},
		{"", false},
		{"has space", false},
		{"wild*", false},
		{".leading", false},
		{"trailing.", false},
	}
	for _, tt := range tests {
		key, err := Key(tt.agent)
		if (err == nil) != tt.ok || (tt.ok && key != tt.agent) {
			t.Errorf("Key(%q) = %q, %v; want ok %v", tt.agent, key, err, tt.ok)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    RuleSet
		wantErr []string
	}{
		{name: "empty set", in: `{"version":"v0","rules":[]}`, want: RuleSet{Version: "v0", Rules: []Rule{}}},
		{name: "unknown members ignored", in: `{"version":"v1","generated":"x","rules":[{"id":"a","kind":"avoid","task_type":"edit","tool_hint":"search_web","confidence":0.9,"weight":2}]}`,
			want: RuleSet{Version: "v1", Rules: []Rule{{ID: "a", Kind: KindAvoid, TaskType: "edit", ToolHint: "search_web", Confidence: 0.9}}}},
		{name: "not json", in: `rules:`, wantErr: []string{"decode rule set:"}},
		{name: "wrong type", in: `{"version":1}`, wantErr: []string{"decode rule set:"}},
		{name: "no version", in: `{"rules":[{"id":"a","kind":"avoid","task_type":"edit","tool_hint":"x"}]}`, wantErr: []string{`rule set "": no version`}},
		{name: "replace without instead", in: `{"version":"v","rules":[{"id":"a","kind":"replace","task_type":"edit","tool_hint":"x"}]}`,
			wantErr: []string{`rule 0 ("a"): replace rule without instead`}},
		{name: "instead is the hint", in: `{"version":"v","rules":[{"id":"a","kind":"avoid","task_type":"edit","tool_hint":"x","instead":"x"}]}`,
			wantErr: []string{`rule 0 ("a"): instead is the tool_hint itself`}},
		{name: "duplicate id", in: `{"version":"v","rules":[{"id":"a","kind":"prefer","task_type":"t","tool_hint":"x"},{"id":"a","kind":"prefer","task_type":"u","tool_hint":"y"}]}`,
			wantErr: []string{`rule 1 ("a"): id used twice`}},
		{name: "rule holdout over half", in: `{"version":"v","holdout":0.1,"rules":[{"id":"a","kind":"prefer","task_type":"t","tool_hint":"x","holdout":0.6}]}`,
			wantErr: []string{`rule 0 ("a"): holdout 0.6 is not a share in [0, 0.5]`}},
		{name: "rule holdout without a set holdout", in: `{"version":"v","rules":[{"id":"a","kind":"prefer","task_type":"t","tool_hint":"x","holdout":0.2}]}`,
			wantErr: []string{`rule 0 ("a"): a rule holdout in a set without a holdout`}},
		{name: "every problem of a rule", in: `{"version":"v","rules":[{"kind":"never"}]}`,
			wantErr: []string{"empty id", `kind "never" is not one of prefer, avoid, replace`, "empty task_type", "empty tool_hint"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Parse(%s) = %+v, want error %q", tt.in, got, tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Parse(%s) error = %q, want it to contain %q", tt.in, err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%s) error = %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%s) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":"v1","rules":[{"id":"r-1","kind":"avoid","task_type":"edit","tool_hint":"search_web","instead":"grep"}]}`))
	f.Add([]byte(`{"version":"v1","rules":[]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := Parse(b)
		if err != nil {
			return
		}
		if err := rs.Validate(); err != nil {
			t.Fatalf("Parse(%q) accepted a set that fails Validate: %v", b, err)
		}
	})
}

// The schema (schema/v1/ruleset.json) and Parse agree on the rule sets an
// agent may be given, except where the schema cannot say it (unique ids,
// instead differing from tool_hint: Parse alone rejects those).
func TestSchemaAgreesWithParse(t *testing.T) {
	sch, err := schema.Compile(schema.RuleSet)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in   string
		schemaOnly bool // Parse rejects it, the schema cannot
	}{
		{name: "empty set", in: `{"version":"v0","rules":[]}`},
		{name: "no version, no rules", in: `{"rules":[]}`},
		{name: "minimal rule", in: `{"version":"v","rules":[{"id":"a","kind":"avoid","task_type":"edit","tool_hint":"x"}]}`},
		{name: "unknown members", in: `{"version":"v","extra":1,"rules":[{"id":"a","kind":"prefer","task_type":"t","tool_hint":"x","weight":2}]}`},
		{name: "not an object", in: `[]`},
		{name: "no rules member", in: `{"version":"v"}`},
		{name: "version not text", in: `{"version":1,"rules":[]}`},
		{name: "rules without version", in: `{"rules":[{"id":"a","kind":"avoid","task_type":"edit","tool_hint":"x"}]}`},
		{name: "empty id", in: `{"version":"v","rules":[{"id":"","kind":"avoid","task_type":"edit","tool_hint":"x"}]}`},
		{name: "unknown kind", in: `{"version":"v","rules":[{"id":"a","kind":"never","task_type":"edit","tool_hint":"x"}]}`},
		{name: "blank task_type", in: `{"version":"v","rules":[{"id":"a","kind":"avoid","task_type":"  ","tool_hint":"x"}]}`},
		{name: "no tool_hint", in: `{"version":"v","rules":[{"id":"a","kind":"avoid","task_type":"edit"}]}`},
		{name: "replace without instead", in: `{"version":"v","rules":[{"id":"a","kind":"replace","task_type":"edit","tool_hint":"x"}]}`},
		{name: "bad generated_at", in: `{"version":"v","generated_at":"yesterday","rules":[]}`},
		{name: "rule holdout", in: `{"version":"v","holdout":0.1,"rules":[{"id":"a","kind":"prefer","task_type":"t","tool_hint":"x","holdout":0.2}]}`},
		{name: "rule holdout over half", in: `{"version":"v","holdout":0.1,"rules":[{"id":"a","kind":"prefer","task_type":"t","tool_hint":"x","holdout":0.6}]}`},
		{name: "retired", in: `{"version":"v","retired":[{"rule":"a","version":"rs-1","metric":"success","effect":-0.2,"lo":-0.3,"hi":-0.1,"sessions_rules":90,"sessions_holdout":20,"at":"2026-12-07T00:00:00Z"}],"rules":[]}`},
		{name: "retired without rule", in: `{"version":"v","retired":[{"version":"rs-1","metric":"success","effect":-0.2,"lo":-0.3,"hi":-0.1,"sessions_rules":90,"sessions_holdout":20,"at":"2026-12-07T00:00:00Z"}],"rules":[]}`},
		{name: "duplicate id", in: `{"version":"v","rules":[{"id":"a","kind":"prefer","task_type":"t","tool_hint":"x"},{"id":"a","kind":"prefer","task_type":"u","tool_hint":"y"}]}`, schemaOnly: true},
		{name: "rule holdout without a set holdout", in: `{"version":"v","rules":[{"id":"a","kind":"prefer","task_type":"t","tool_hint":"x","holdout":0.2}]}`, schemaOnly: true},
		{name: "instead is the hint", in: `{"version":"v","rules":[{"id":"a","kind":"avoid","task_type":"edit","tool_hint":"x","instead":"x"}]}`, schemaOnly: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, perr := Parse([]byte(tt.in))
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			serr := sch.Validate(v)
			switch {
			case tt.schemaOnly && (perr == nil || serr != nil):
				t.Fatalf("Parse = %v, schema = %v; want Parse alone to reject it", perr, serr)
			case !tt.schemaOnly && (perr == nil) != (serr == nil):
				t.Fatalf("Parse = %v, schema = %v; want them to agree", perr, serr)
			}
		})
	}
}
