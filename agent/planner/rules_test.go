package planner

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestRuleJSON pins the JSON the analyzer writes and the planner reads.
func TestRuleJSON(t *testing.T) {
	tests := []struct {
		name string
		rs   RuleSet
		want string
	}{
		{
			name: "every member",
			rs: RuleSet{Version: "2025-06-10.2", Rules: []Rule{
				{ID: "r-017", Kind: KindReplace, TaskType: "edit", ToolHint: "search_web", Instead: "grep", Instruction: "Edit tasks search the repository."},
			}},
			want: `{"version":"2025-06-10.2","rules":[{"id":"r-017","kind":"replace","task_type":"edit","tool_hint":"search_web","instead":"grep","instruction":"Edit tasks search the repository."}]}`,
		},
		{
			name: "optional members omitted",
			rs:   RuleSet{Version: "v2", Rules: []Rule{{ID: "r-1", Kind: KindPrefer, TaskType: "test", ToolHint: "run_command"}}},
			want: `{"version":"v2","rules":[{"id":"r-1","kind":"prefer","task_type":"test","tool_hint":"run_command"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.rs)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); got != tt.want {
				t.Fatalf("json.Marshal(%+v) = %s, want %s", tt.rs, got, tt.want)
			}
			got, err := ParseRuleSet(b)
			if err != nil {
				t.Fatalf("ParseRuleSet(%s) error = %v", b, err)
			}
			if !reflect.DeepEqual(got, tt.rs) {
				t.Fatalf("ParseRuleSet(%s) = %+v, want %+v", b, got, tt.rs)
			}
		})
	}
}

func TestParseRuleSet(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    RuleSet
		wantErr []string
	}{
		{name: "empty set", in: `{"version":"v0","rules":[]}`, want: RuleSet{Version: "v0", Rules: []Rule{}}},
		{name: "unknown members ignored", in: `{"version":"v1","generated":"x","rules":[{"id":"a","kind":"avoid","task_type":"edit","tool_hint":"search_web","confidence":0.9}]}`,
			want: RuleSet{Version: "v1", Rules: []Rule{{ID: "a", Kind: KindAvoid, TaskType: "edit", ToolHint: "search_web"}}}},
		{name: "not json", in: `rules:`, wantErr: []string{"decode rule set:"}},
		{name: "wrong type", in: `{"version":1}`, wantErr: []string{"decode rule set:"}},
		{name: "no version", in: `{"rules":[{"id":"a","kind":"avoid","task_type":"edit","tool_hint":"x"}]}`, wantErr: []string{`rule set "": no version`}},
		{name: "replace without instead", in: `{"version":"v","rules":[{"id":"a","kind":"replace","task_type":"edit","tool_hint":"x"}]}`,
			wantErr: []string{`rule 0 ("a"): replace rule without instead`}},
		{name: "instead is the hint", in: `{"version":"v","rules":[{"id":"a","kind":"avoid","task_type":"edit","tool_hint":"x","instead":"x"}]}`,
			wantErr: []string{`rule 0 ("a"): instead is the tool_hint itself`}},
		{name: "duplicate id", in: `{"version":"v","rules":[{"id":"a","kind":"prefer","task_type":"t","tool_hint":"x"},{"id":"a","kind":"prefer","task_type":"u","tool_hint":"y"}]}`,
			wantErr: []string{`rule 1 ("a"): id used twice`}},
		{name: "every problem of a rule", in: `{"version":"v","rules":[{"kind":"never"}]}`,
			wantErr: []string{"empty id", `kind "never" is not one of prefer, avoid, replace`, "empty task_type", "empty tool_hint"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRuleSet([]byte(tt.in))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("ParseRuleSet(%s) = %+v, want error %q", tt.in, got, tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("ParseRuleSet(%s) error = %q, want it to contain %q", tt.in, err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRuleSet(%s) error = %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseRuleSet(%s) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzParseRuleSet(f *testing.F) {
	f.Add([]byte(`{"version":"v1","rules":[{"id":"r-1","kind":"avoid","task_type":"edit","tool_hint":"search_web","instead":"grep"}]}`))
	f.Add([]byte(`{"version":"v1","rules":[]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ParseRuleSet(b)
		if err != nil {
			return
		}
		if err := rs.Validate(); err != nil {
			t.Fatalf("ParseRuleSet(%q) accepted a set that fails Validate: %v", b, err)
		}
	})
}
