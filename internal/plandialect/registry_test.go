package plandialect

import (
	"strings"
	"testing"
)

func TestRegistryLookup(t *testing.T) {
	r, err := New(DefaultConfig())
	if err != nil {
		t.Fatalf("New(DefaultConfig()): %v", err)
	}
	tests := []struct {
		name, tool, want string // want "" for not a plan tool
	}{
		{name: "skilllite", tool: "update_task_plan", want: SkillLite},
		{name: "claude code", tool: "TodoWrite", want: ClaudeCode},
		{name: "codex", tool: "update_plan", want: Codex},
		{name: "deep agents", tool: "write_todos", want: DeepAgents},
		{name: "an ordinary tool", tool: "read_file", want: ""},
		{name: "names are case sensitive", tool: "todowrite", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := r.Lookup(tt.tool)
			got := ""
			if ok {
				got = d.Name()
			}
			if got != tt.want {
				t.Fatalf("Lookup(%q) = %q, want %q", tt.tool, got, tt.want)
			}
		})
	}
}

func TestRegistryConfiguredTools(t *testing.T) {
	tools := map[string]string{"todo_write": DeepAgents, "TodoWrite": ClaudeCode}
	cfg := DefaultConfig()
	cfg.Tools = tools
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tools["update_plan"] = Codex // the registry keeps its own copy
	if d, ok := r.Lookup("todo_write"); !ok || d.Name() != DeepAgents {
		t.Fatalf("Lookup(todo_write) = %v, %v, want deepagents", d, ok)
	}
	for _, tool := range []string{"write_todos", "update_plan"} {
		if _, ok := r.Lookup(tool); ok {
			t.Fatalf("Lookup(%q) found a dialect the config does not name", tool)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	bad := Config{Tools: map[string]string{"plan": "markdown", "": Codex}, SoftCap: -1, RewordThreshold: 1.5}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate of a bad config = nil")
	}
	for _, want := range []string{
		"empty tool name",
		`tool "plan": unknown dialect "markdown"`,
		"soft cap -1 is negative",
		"reword threshold 1.5 is not in (0, 1]",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %q, missing %q (every problem at once)", err, want)
		}
	}
	if _, err := New(bad); err == nil {
		t.Fatal("New(bad config) = nil error")
	}
}
