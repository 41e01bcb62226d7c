package plandialect

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mdTasks writes parsed tasks compactly: mark, description, "|phase".
func mdTasks(ts []Task) []string {
	out := []string{}
	for _, t := range ts {
		mark := map[Status]string{Pending: "[ ]", InProgress: "[~]", Completed: "[x]"}[t.Status]
		s := mark + " " + t.Description
		if t.Phase != "" {
			s += " |" + t.Phase
		}
		out = append(out, s)
	}
	return out
}

func TestMarkdownParse(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"boxes", "- [ ] a\n- [x] b\n- [X] c\n- [~] d\n- [/] e\n", []string{"[ ] a", "[x] b", "[x] c", "[~] d", "[~] e"}},
		{"bullets and numbers", "* [ ] a\n+ [ ] b\n1. [ ] c\n12) [x] d\n", []string{"[ ] a", "[ ] b", "[ ] c", "[x] d"}},
		{"nested items are tasks", "- [ ] a\n  - [x] a1\n    1. [ ] a1i\n", []string{"[ ] a", "[x] a1", "[ ] a1i"}},
		{"headings are phases", "# Plan\n- [ ] a\n## Phase 2: Build ##\n- [ ] b\n###\n- [ ] c\n", []string{"[ ] a |Plan", "[ ] b |Phase 2: Build", "[ ] c"}},
		{"cancelled and struck out left out", "- [-] a\n- [ ] ~~b~~\n- [ ] ~~c~~ then d\n", []string{"[ ] ~~c~~ then d"}},
		{"not checklist items", "- a\n-[ ] b\n- [ ]c\n- [ ]\n- [?] d\n    code\n[ ] e\n", []string{}},
		{"fenced code skipped", "```\n- [ ] a\n```\n~~~~md\n- [ ] b\n```\n~~~~\n- [ ] c\n", []string{"[ ] c"}},
		{"unclosed fence hides the rest", "```\n- [ ] a\n", []string{}},
		{"crlf", "- [ ] a\r\n- [x] b\r\n", []string{"[ ] a", "[x] b"}},
		{"trailing spaces trimmed", "- [ ]   a b  \t\n", []string{"[ ] a b"}},
		{"front matter without todos", "---\nname: x\n---\n- [ ] a\n", []string{"[ ] a"}},
		{"front matter not closed is body", "---\n- [ ] a\n", []string{"[ ] a"}},
		{"front matter todos win over body", "---\ntodos:\n- id: a\n  content: A\n  status: completed\n- content: B\n---\n- [ ] c\n", []string{"[x] A", "[ ] B"}},
		{"empty todos", "---\ntodos: []\n---\n- [ ] c\n", []string{}},
		{"todos then another key", "---\ntodos:\n  - content: A # note\n    status: pending\noverview: x\n---\n", []string{"[ ] A"}},
		{"quoted content", "---\ntodos:\n  - content: \"a \\\"b\\\" c\"\n  - content: 'it''s'\n---\n", []string{`[ ] a "b" c`, "[ ] it's"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := MarkdownDialect{}.Parse([]byte(tt.content))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.content, err)
			}
			if got := mdTasks(p.Tasks); !slices.Equal(got, tt.want) {
				t.Fatalf("Parse(%q) = %q, want %q", tt.content, got, tt.want)
			}
			if p.HasIDs || p.Revision {
				t.Fatalf("Parse(%q): HasIDs %v Revision %v, want neither", tt.content, p.HasIDs, p.Revision)
			}
		})
	}
}

func TestMarkdownFrontMatterErrors(t *testing.T) {
	tests := []struct {
		name, todos, path string
	}{
		{"flow list", "todos: [a, b]", "/todos"},
		{"block scalar", "todos:\n  - content: |\n      a", "/todos/0/content"},
		{"unknown status", "todos:\n  - content: a\n    status: done", "/todos/0/status"},
		{"no content", "todos:\n  - id: a\n    status: pending", "/todos/0/content"},
		{"not a list", "todos:\n  content: a", "/todos"},
		{"unterminated quote", "todos:\n  - content: \"a", "/todos/0/content"},
		{"not key value", "todos:\n  - just text", "/todos/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MarkdownDialect{}.Parse([]byte("---\n" + tt.todos + "\n---\n"))
			var ae *ArgsError
			if !errors.As(err, &ae) || !errors.Is(err, ErrArguments) || ae.Path != tt.path {
				t.Fatalf("Parse(%q) = %v, want an *ArgsError at %s", tt.todos, err, tt.path)
			}
		})
	}
}

func TestMarkdownExamples(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"task_plan.md", []string{
			"[x] Read the client code |Phase 1: Discovery",
			"[x] Find where requests are sent |Phase 1: Discovery",
			"[~] Add a retry loop with exponential backoff |Phase 2: Implementation",
			"[ ] Cap the number of attempts |Phase 2: Implementation",
			"[ ] Retry only idempotent methods |Phase 2: Implementation",
			"[ ] Add a `Retry-After` header reader |Phase 2: Implementation",
			"[ ] Write unit tests for the backoff |Phase 3: Verification",
			"[ ] Run the test suite |Phase 3: Verification",
		}},
		{"cursor.plan.md", []string{
			"[x] Read the client code",
			"[~] Add a retry loop: exponential backoff",
			"[ ] Write unit tests for the client's backoff",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "markdown", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			p, err := MarkdownDialect{}.Parse(b)
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.file, err)
			}
			if got := mdTasks(p.Tasks); !slices.Equal(got, tt.want) {
				t.Fatalf("Parse(%s) =\n%s\nwant\n%s", tt.file, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
