package plandialect

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/plangen"
)

// FuzzMarkdown: any content parses or fails with an *ArgsError; every task
// has a trimmed, non-empty description and a valid status; and the tasks,
// written back as a plain checklist under their phases, parse to the same
// tasks. Seeds: testdata/markdown/*.md.
func FuzzMarkdown(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "markdown", "*.md"))
	if len(files) == 0 {
		f.Fatal("no seeds under testdata/markdown")
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("- [ ] a\n  * [x] b\n# h\n1) [~] c"))
	f.Add([]byte("---\ntodos:\n- content: 'a'\n---\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		p, err := MarkdownDialect{}.Parse(content)
		if err != nil {
			if _, ok := err.(*ArgsError); !ok {
				t.Fatalf("Parse(%q) error %T, want *ArgsError", content, err)
			}
			return
		}
		var b strings.Builder
		phase := ""
		for _, task := range p.Tasks {
			if task.Description == "" || task.Description != strings.TrimSpace(task.Description) || strings.Contains(task.Description, "\n") {
				t.Fatalf("Parse(%q): description %q", content, task.Description)
			}
			if !task.Status.Valid() {
				t.Fatalf("Parse(%q): status %q", content, task.Status)
			}
			if task.Phase != phase && task.Phase != "" {
				b.WriteString("# " + task.Phase + "\n")
			}
			phase = task.Phase
			mark := map[Status]string{Pending: " ", InProgress: "~", Completed: "x"}[task.Status]
			b.WriteString("- [" + mark + "] " + task.Description + "\n")
		}
		if strings.Contains(b.String(), "```") || strings.Contains(b.String(), "~~~") || strings.HasPrefix(b.String(), "---\n") {
			return // a description that opens a fence changes how the rest reads
		}
		again, err := MarkdownDialect{}.Parse([]byte(b.String()))
		if err != nil {
			t.Fatalf("Parse(rendered %q): %v", b.String(), err)
		}
		if len(again.Tasks) != len(p.Tasks) {
			t.Fatalf("rendered %q parses to %d tasks, want %d", b.String(), len(again.Tasks), len(p.Tasks))
		}
		for i := range p.Tasks {
			g, w := again.Tasks[i], p.Tasks[i]
			if g.Description != w.Description || g.Status != w.Status || (w.Phase != "" && g.Phase != w.Phase) {
				t.Fatalf("rendered %q: task %d = %+v, want %+v", b.String(), i, g, w)
			}
		}
	})
}

// FuzzApplyEdits: an edit of a unique text replaces exactly it; an edit of
// a text that is absent or repeated fails and changes nothing; replace-all
// agrees with strings.ReplaceAll.
func FuzzApplyEdits(f *testing.F) {
	f.Add("- [ ] a\n- [ ] b\n", "- [ ] a", "- [x] a", false)
	f.Add("aaa", "a", "b", true)
	f.Add("x", "", "y", false)
	f.Fuzz(func(t *testing.T, content, old, repl string, all bool) {
		got, err := ApplyEdits(content, []Edit{{Old: old, New: repl, All: all}})
		n := strings.Count(content, old)
		switch {
		case old == "" || n == 0 || (n > 1 && !all):
			if err == nil {
				t.Fatalf("ApplyEdits(%q, %q→%q, all %v) = %q, want an error", content, old, repl, all, got)
			}
		case all:
			if want := strings.ReplaceAll(content, old, repl); err != nil || got != want {
				t.Fatalf("ApplyEdits(%q, %q→%q, all) = %q, %v; want %q", content, old, repl, got, err, want)
			}
		default:
			i := strings.Index(content, old)
			if want := content[:i] + repl + content[i+len(old):]; err != nil || got != want {
				t.Fatalf("ApplyEdits(%q, %q→%q) = %q, %v; want %q", content, old, repl, got, err, want)
			}
		}
	})
}

// FuzzPatch: any patch text parses or fails without panicking; a unified
// diff that replaces a whole file's lines, parsed and applied to the old
// content, gives the new content.
func FuzzPatch(f *testing.F) {
	f.Add("- [ ] a\n- [ ] b\n", "- [x] a\n- [ ] b\n- [ ] c\n", "*** Begin Patch\n*** Update File: todo.md\n@@\n-a\n+b\n*** End Patch")
	f.Add("", "x\n", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
	f.Fuzz(func(t *testing.T, before, after, patch string) {
		ParsePatch(patch) // must not panic
		if strings.ContainsAny(before+after, "\r") {
			return
		}
		old, repl := splitLines(before), splitLines(after)
		var b strings.Builder
		b.WriteString("--- a/todo.md\n+++ b/todo.md\n")
		b.WriteString("@@ -1," + itoa(len(old)) + " +1," + itoa(len(repl)) + " @@\n")
		for _, l := range old {
			b.WriteString("-" + l + "\n")
		}
		for _, l := range repl {
			b.WriteString("+" + l + "\n")
		}
		ops, err := ParsePatch(b.String())
		if len(old) == 0 && len(repl) == 0 {
			return
		}
		if err != nil || len(ops) != 1 || ops[0].Kind != OpPatch {
			t.Fatalf("ParsePatch(%q) = %+v, %v; want one OpPatch", b.String(), ops, err)
		}
		got, err := ApplyHunks(before, ops[0].Hunks)
		if want := joinLines(repl); err != nil || got != want {
			t.Fatalf("ApplyHunks(%q, %q) = %q, %v; want %q", before, b.String(), got, err, want)
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

// FuzzFileCall feeds a tool name and arguments to a FileTracker, after a
// write of a known plan: it never panics; an error is an *ArgsError; a
// result is either applied (and then the known content parses to the plan
// in force) or carries a data-quality note. Seeds: calls of generated
// sessions (plangen) and a few malformed ones.
func FuzzFileCall(f *testing.F) {
	for _, style := range []plangen.Style{plangen.ClaudeCode, plangen.SkillLite, plangen.Codex} {
		for _, c := range plangen.Generate(7, style).Calls {
			f.Add(c.Tool, []byte(c.Args))
		}
	}
	f.Add("Edit", []byte(`{"file_path":"todo.md","old_string":"","new_string":"x"}`))
	f.Add("apply_patch", []byte(`{"input":"--- a/todo.md\n+++ b/todo.md\n@@ -9 +9 @@\n-x\n+y\n"}`))
	f.Add("insert_lines", []byte(`{"path":"todo.md","line":1e300,"content":"x"}`))
	f.Fuzz(func(t *testing.T, tool string, args []byte) {
		ft := newFileTracker(t)
		for _, p := range []string{"todo.md", "task_plan.md", "/home/u/app/task_plan.md"} {
			if _, err := ft.Apply(FileOp{Kind: OpWrite, Path: p, Content: "# P\n- [ ] a\n- [x] b\n"}); err != nil {
				t.Fatal(err)
			}
		}
		out, ok, err := ft.Call(tool, args)
		if err != nil {
			if _, isArgs := err.(*ArgsError); !isArgs && !errors.Is(err, ErrPlan) {
				t.Fatalf("Call(%q, %q) error %T %v, want *ArgsError", tool, args, err, err)
			}
			return
		}
		if !ok && len(out.Results) > 0 {
			t.Fatalf("Call(%q, %q): results without a plan-file operation", tool, args)
		}
		for _, r := range out.Results {
			if r.Applied && r.Quality != "" {
				t.Fatalf("Call(%q, %q): applied result with note %q", tool, args, r.Quality)
			}
			if !r.Applied && r.Quality == "" {
				t.Fatalf("Call(%q, %q): result neither applied nor noted", tool, args)
			}
			if r.Applied {
				content, known := ft.Known(r.Path)
				p, err := MarkdownDialect{}.Parse([]byte(content))
				if !known || err != nil || len(p.Tasks) != len(r.Result.Tasks) {
					t.Fatalf("Call(%q, %q): applied, but known content %q (%v, %v) does not give the plan in force %+v", tool, args, content, known, err, r.Result.Tasks)
				}
			}
		}
	})
}
