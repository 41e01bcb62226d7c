package planner

import (
	"strings"
	"testing"

	"github.com/evosignal/evosignal/agent/ruleset"
)

func TestConfigValidate(t *testing.T) {
	goodRules := ruleset.RuleSet{Version: "v1", Rules: []ruleset.Rule{{ID: "r-1", Kind: ruleset.KindPrefer, TaskType: "edit", ToolHint: "write_file"}}}
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error, each a separate problem; nil: valid
	}{
		{name: "zero value", cfg: Config{}},
		{name: "full", cfg: Config{Tools: testTools, ReplanSoftCap: 5, TaskToolBudget: 30, Rules: goodRules}},
		{name: "negative cap", cfg: Config{ReplanSoftCap: -1}, want: []string{"replan soft cap -1 is negative"}},
		{name: "negative budget", cfg: Config{TaskToolBudget: -2}, want: []string{"task tool budget -2 is negative"}},
		{name: "empty tool", cfg: Config{Tools: []string{"grep", " "}}, want: []string{"tool 1: empty name"}},
		{name: "spaced tool", cfg: Config{Tools: []string{" grep"}}, want: []string{`tool 0: name " grep" has surrounding spaces`}},
		{name: "duplicate tool", cfg: Config{Tools: []string{"grep", "grep"}}, want: []string{`tool 1: "grep" listed twice`}},
		{name: "bad rules", cfg: Config{Rules: ruleset.RuleSet{Rules: []ruleset.Rule{{ID: "r-1", Kind: "always", TaskType: "edit", ToolHint: "grep"}}}},
			want: []string{"rules: no version", `rule 0 ("r-1"): kind "always" is not one of prefer, avoid, replace`}},
		{name: "every problem at once", cfg: Config{ReplanSoftCap: -1, TaskToolBudget: -1, Tools: []string{""}, Rules: ruleset.RuleSet{Version: "v", Rules: []ruleset.Rule{{}}}},
			want: []string{"replan soft cap", "task tool budget", "tool 0: empty name", "empty id", "kind \"\"", "empty task_type", "empty tool_hint"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		nilS bool
		want string
	}{
		{name: "nil session", nilS: true, want: "new planner: nil session"},
		{name: "invalid config", cfg: Config{TaskToolBudget: -1}, want: "new planner: task tool budget -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFixture(t, Config{}).p.s
			if tt.nilS {
				s = nil
			}
			_, err := New(s, tt.cfg)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("New() error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	p := newFixture(t, Config{}).p
	if got, want := p.cfg.ReplanSoftCap, DefaultReplanSoftCap; got != want {
		t.Errorf("ReplanSoftCap = %d, want %d", got, want)
	}
	if got, want := p.cfg.TaskToolBudget, DefaultTaskToolBudget; got != want {
		t.Errorf("TaskToolBudget = %d, want %d", got, want)
	}
	if DefaultReplanSoftCap != 3 || DefaultTaskToolBudget != 15 {
		t.Errorf("defaults = %d, %d, want 3, 15", DefaultReplanSoftCap, DefaultTaskToolBudget)
	}
}
