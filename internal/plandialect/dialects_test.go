package plandialect

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// plan writes a parsed plan compactly: its flags, reason and tasks (ids
// shown as given, 0 when none).
func plan(p Plan) string {
	return fmt.Sprintf("ids=%v revision=%v reason=%q tasks=%s", p.HasIDs, p.Revision, p.Reason, taskList(p.Tasks))
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		dialect string
		args    string
		want    string // plan(...) of the result, or the error's text
	}{
		// SkillLite update_task_plan.
		{name: "skilllite full", dialect: SkillLite,
			args: `{"reason":"no test section","tasks":[{"completed":false,"description":"Add tests","id":2,"tool_hint":"file_edit"},{"description":"Run tests","id":3}]}`,
			want: `ids=false revision=true reason="no test section" tasks=2:Add tests@file_edit,3:Run tests`},
		{name: "skilllite completed flag and null hint", dialect: SkillLite,
			args: `{"tasks":[{"id":1,"description":"A","tool_hint":null,"completed":true}]}`,
			want: `ids=false revision=true reason="" tasks=1x:A`},
		{name: "skilllite id not a positive integer is kept as 0", dialect: SkillLite,
			args: `{"tasks":[{"id":1.5,"description":"A"},{"id":0,"description":"B"},{"id":3.0,"description":"C"}]}`,
			want: `ids=false revision=true reason="" tasks=0:A,0:B,3:C`},
		{name: "skilllite unknown members tolerated", dialect: SkillLite,
			args: `{"tasks":[{"id":1,"description":"A","priority":"high"}],"extra":1}`,
			want: `ids=false revision=true reason="" tasks=1:A`},
		{name: "skilllite not JSON", dialect: SkillLite, args: `{"tasks":`, want: "skilllite plan arguments: not valid JSON"},
		{name: "skilllite not an object", dialect: SkillLite, args: `[1]`, want: "skilllite plan arguments: want an object, got an array"},
		{name: "skilllite no tasks", dialect: SkillLite, args: `{"reason":"x"}`, want: "skilllite plan arguments: /tasks: missing"},
		{name: "skilllite tasks not an array", dialect: SkillLite, args: `{"tasks":{}}`, want: "skilllite plan arguments: /tasks: want an array, got an object"},
		{name: "skilllite empty list", dialect: SkillLite, args: `{"tasks":[]}`, want: "skilllite plan arguments: /tasks: task list cannot be empty"},
		{name: "skilllite task not an object", dialect: SkillLite, args: `{"tasks":["A"]}`, want: "skilllite plan arguments: /tasks/0: want an object, got a string"},
		{name: "skilllite no id", dialect: SkillLite, args: `{"tasks":[{"description":"A"}]}`, want: "skilllite plan arguments: /tasks/0/id: missing"},
		{name: "skilllite id a string", dialect: SkillLite, args: `{"tasks":[{"id":"1","description":"A"}]}`, want: "skilllite plan arguments: /tasks/0/id: want a number, got a string"},
		{name: "skilllite no description", dialect: SkillLite, args: `{"tasks":[{"id":1}]}`, want: "skilllite plan arguments: /tasks/0/description: missing"},
		{name: "skilllite hint a number", dialect: SkillLite, args: `{"tasks":[{"id":1,"description":"A","tool_hint":3}]}`, want: "skilllite plan arguments: /tasks/0/tool_hint: want a string, got a number"},
		{name: "skilllite completed a string", dialect: SkillLite, args: `{"tasks":[{"id":1,"description":"A","completed":"yes"}]}`, want: "skilllite plan arguments: /tasks/0/completed: want a boolean, got a string"},
		{name: "skilllite reason a number", dialect: SkillLite, args: `{"tasks":[{"id":1,"description":"A"}],"reason":1}`, want: "skilllite plan arguments: /reason: want a string, got a number"},

		// Claude Code TodoWrite.
		{name: "claude-code todos", dialect: ClaudeCode,
			args: `{"todos":[{"content":"A","status":"completed","activeForm":"Doing A"},{"content":"B","status":"in_progress","activeForm":"Doing B"},{"content":"C","status":"pending","activeForm":"Doing C"}]}`,
			want: `ids=false revision=false reason="" tasks=0x:A,0~:B,0:C`},
		{name: "claude-code legacy id and priority ignored", dialect: ClaudeCode,
			args: `{"todos":[{"id":"7","content":"A","status":"pending","priority":"high"}]}`,
			want: `ids=false revision=false reason="" tasks=0:A`},
		{name: "claude-code empty list", dialect: ClaudeCode, args: `{"todos":[]}`, want: `ids=false revision=false reason="" tasks=`},
		{name: "claude-code no todos", dialect: ClaudeCode, args: `{}`, want: "claude-code plan arguments: /todos: missing"},
		{name: "claude-code todos null", dialect: ClaudeCode, args: `{"todos":null}`, want: "claude-code plan arguments: /todos: want an array, got null"},
		{name: "claude-code no content", dialect: ClaudeCode, args: `{"todos":[{"status":"pending"}]}`, want: "claude-code plan arguments: /todos/0/content: missing"},
		{name: "claude-code no status", dialect: ClaudeCode, args: `{"todos":[{"content":"A"}]}`, want: "claude-code plan arguments: /todos/0/status: missing"},
		{name: "claude-code unknown status", dialect: ClaudeCode, args: `{"todos":[{"content":"A","status":"done"}]}`, want: `claude-code plan arguments: /todos/0/status: "done" is not pending, in_progress or completed`},

		// Codex CLI update_plan.
		{name: "codex plan with explanation", dialect: Codex,
			args: `{"explanation":"lexer, not parser","plan":[{"step":"A","status":"completed"},{"step":"B","status":"in_progress"}]}`,
			want: `ids=false revision=false reason="lexer, not parser" tasks=0x:A,0~:B`},
		{name: "codex null explanation", dialect: Codex, args: `{"explanation":null,"plan":[]}`, want: `ids=false revision=false reason="" tasks=`},
		{name: "codex no plan", dialect: Codex, args: `{"explanation":"x"}`, want: "codex plan arguments: /plan: missing"},
		{name: "codex unknown member", dialect: Codex, args: `{"plan":[],"todos":[]}`, want: `codex plan arguments: unknown member "todos"`},
		{name: "codex unknown task member", dialect: Codex, args: `{"plan":[{"step":"A","status":"pending","id":1}]}`, want: `codex plan arguments: /plan/0: unknown member "id"`},
		{name: "codex step not a string", dialect: Codex, args: `{"plan":[{"step":1,"status":"pending"}]}`, want: "codex plan arguments: /plan/0/step: want a string, got a number"},
		{name: "codex unknown status", dialect: Codex, args: `{"plan":[{"step":"A","status":"blocked"}]}`, want: `codex plan arguments: /plan/0/status: "blocked" is not pending, in_progress or completed`},

		// LangChain deep agents write_todos.
		{name: "deepagents todos", dialect: DeepAgents,
			args: `{"todos":[{"content":"Search","status":"completed"},{"content":"Write","status":"pending"}]}`,
			want: `ids=false revision=false reason="" tasks=0x:Search,0:Write`},
		{name: "deepagents status a number", dialect: DeepAgents, args: `{"todos":[{"content":"A","status":1}]}`, want: "deepagents plan arguments: /todos/0/status: want a string, got a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := builtin[tt.dialect]
			if !ok {
				t.Fatalf("no built-in dialect %q", tt.dialect)
			}
			p, err := d.Parse([]byte(tt.args))
			got := ""
			if err != nil {
				var ae *ArgsError
				if !errors.As(err, &ae) || !errors.Is(err, ErrArguments) || ae.Dialect != tt.dialect {
					t.Fatalf("Parse(%s) error %v (%T) is not an *ArgsError of %s matching ErrArguments", tt.args, err, err, tt.dialect)
				}
				got = err.Error()
			} else {
				got = plan(p)
			}
			if got != tt.want {
				t.Fatalf("Parse(%s) =\n  %s\nwant\n  %s", tt.args, got, tt.want)
			}
		})
	}
}

// TestParseExamples parses the examples under testdata/<dialect>/ (the ones
// docs/plan-dialects.md shows, and the fuzz seeds).
func TestParseExamples(t *testing.T) {
	for _, name := range builtinNames() {
		files, err := filepath.Glob(filepath.Join("testdata", name, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no examples for dialect %s (%v)", name, err)
		}
		d := builtin[name]
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Parse(b); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
