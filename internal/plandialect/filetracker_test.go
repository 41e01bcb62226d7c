package plandialect

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func newFileTracker(tb testing.TB) *FileTracker {
	tb.Helper()
	reg, err := New(DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	files, err := NewFiles(DefaultFilesConfig())
	if err != nil {
		tb.Fatal(err)
	}
	return files.NewTracker(reg.NewTracker())
}

// call encodes args as JSON and runs one tool call through ft.
func call(tb testing.TB, ft *FileTracker, tool string, args map[string]any) (FileOutcome, bool) {
	tb.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		tb.Fatal(err)
	}
	out, ok, err := ft.Call(tool, b)
	if err != nil {
		tb.Fatalf("Call(%s, %s): %v", tool, b, err)
	}
	return out, ok
}

// fileSummary writes a result as "kind" plus the ids that changed, or the
// quality note.
func fileSummary(r FileResult) string {
	if !r.Applied {
		return "note: " + string(r.Quality)
	}
	s := r.Result.Kind.String()
	add := func(name string, ids []int64) {
		if len(ids) > 0 {
			s += " " + name + "=" + strings.Trim(strings.Join(strings.Fields(strings.Trim(strings.ReplaceAll(strings.Trim(jsonOf(ids), "[]"), ",", " "), " ")), ","), ",")
		}
	}
	add("added", r.Result.Added)
	add("completed", r.Result.Completed)
	add("reworded", r.Result.Reworded)
	var dropped []int64
	for _, t := range r.Result.Dropped {
		dropped = append(dropped, t.ID)
	}
	add("dropped", dropped)
	if r.Result.Replan > 0 {
		s += " #" + jsonOf(r.Result.Replan)
	}
	return s
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const planV1 = "# Plan\n## Phase 1\n- [ ] Read the parser code\n- [ ] Fix the overflow bug\n## Phase 2\n- [ ] Run the unit tests\n"

func TestFileTrackerSession(t *testing.T) {
	type step struct {
		tool string
		args map[string]any
		want []string // per plan-file result; nil: not a plan-file call
	}
	const p = "/home/u/app/task_plan.md"
	tests := []struct {
		name  string
		steps []step
	}{
		{"claude code: written whole, ticked, tasks added and removed", []step{
			{"Write", map[string]any{"file_path": p, "content": planV1}, []string{"created added=1,2,3"}},
			{"Edit", map[string]any{"file_path": p, "old_string": "- [ ] Read", "new_string": "- [x] Read"}, []string{"progressed completed=1"}},
			{"Edit", map[string]any{"file_path": p, "old_string": "- [ ] Run the unit tests\n", "new_string": "- [ ] Add a regression test\n- [ ] Run the unit tests\n"}, []string{"replanned added=4 #1"}},
			{"MultiEdit", map[string]any{"file_path": p, "edits": []map[string]any{
				{"old_string": "- [ ] Fix the overflow bug\n", "new_string": ""},
				{"old_string": "## Phase 2", "new_string": "## Verification"},
			}}, []string{"replanned dropped=2 #2"}},
			{"Edit", map[string]any{"file_path": p, "old_string": "- [ ]", "new_string": "- [x]", "replace_all": true}, []string{"progressed completed=4,3"}},
			{"Write", map[string]any{"file_path": p, "content": "- [x] Read the parser code\n- [x] Add a regression test\n- [x] Run all the unit tests\n"}, []string{"replanned reworded=3 #3"}},
		}},
		{"edit before any write: unknown prior content, then a write makes it known", []step{
			{"Edit", map[string]any{"file_path": p, "old_string": "- [ ] a", "new_string": "- [x] a"}, []string{"note: " + string(QualityUnknownPrior)}},
			{"Write", map[string]any{"file_path": p, "content": "- [x] a\n"}, []string{"created added=1 completed=1"}},
		}},
		{"edit that does not apply: content unknown from then on", []step{
			{"Write", map[string]any{"file_path": p, "content": "- [ ] a\n- [ ] a\n"}, []string{"created added=1,2"}},
			{"Edit", map[string]any{"file_path": p, "old_string": "- [ ] a", "new_string": "- [x] a"}, []string{"note: " + string(QualityMismatch)}},
			{"Edit", map[string]any{"file_path": p, "old_string": "- [ ] a", "new_string": "- [x] a"}, []string{"note: " + string(QualityUnknownPrior)}},
		}},
		{"not a plan until it has a task", []step{
			{"Write", map[string]any{"file_path": p, "content": "# Plan\nTo be written.\n"}, []string{"note: " + string(QualityNoTasks)}},
			{"Edit", map[string]any{"file_path": p, "old_string": "To be written.", "new_string": "- [ ] a"}, []string{"created added=1"}},
			{"Edit", map[string]any{"file_path": p, "old_string": "- [ ] a", "new_string": "(done)"}, []string{"replanned dropped=1 #1"}},
		}},
		{"skilllite: write_file, append, search_replace, insert_lines, dry run", []step{
			{"write_file", map[string]any{"path": "task_plan.md", "content": "- [ ] a\n"}, []string{"created added=1"}},
			{"write_file", map[string]any{"path": "task_plan.md", "content": "- [ ] b\n", "append": true}, []string{"replanned added=2 #1"}},
			{"search_replace", map[string]any{"path": "task_plan.md", "old_string": "- [ ] b", "new_string": "- [x] b", "dry_run": true}, nil},
			{"search_replace", map[string]any{"path": "task_plan.md", "old_string": "- [ ]", "new_string": "- [x]"}, []string{"progressed completed=1"}},
			{"insert_lines", map[string]any{"path": "task_plan.md", "line": 0, "content": "# Plan\n- [x] c"}, []string{"replanned added=3 completed=3 #2"}},
			{"insert_lines", map[string]any{"path": "task_plan.md", "line": 9, "content": "- [ ] d"}, []string{"note: " + string(QualityMismatch)}},
		}},
		{"codex apply_patch: add, update, and a file that is not a plan", []step{
			{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: todo.md\n+- [ ] a\n+- [ ] b\n*** End Patch\n"}, []string{"created added=1,2"}},
			{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: src/main.go\n@@\n-x\n+y\n*** Update File: todo.md\n@@\n-- [ ] a\n+- [x] a\n - [ ] b\n*** End Patch\n"}, []string{"progressed completed=1"}},
			{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: src/main.go\n@@\n-x\n+y\n*** End Patch\n"}, nil},
			{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: todo.md\n*** Move to: task_plan.md\n@@\n-- [x] a\n+- [ ] a\n*** End Patch\n"}, []string{"note: " + string(QualityDeleted), "note: " + string(QualityUnknownPrior)}},
		}},
		{"unified diff", []step{
			{"apply_patch", map[string]any{"patch": "--- /dev/null\n+++ b/TODO.md\n@@ -0,0 +1,2 @@\n+- [ ] a\n+- [ ] b\n"}, []string{"created added=1,2"}},
			{"apply_patch", map[string]any{"patch": "--- a/TODO.md\n+++ b/TODO.md\n@@ -1,2 +1,3 @@\n - [ ] a\n-- [ ] b\n+- [x] b\n+- [ ] c\n"}, []string{"replanned added=3 completed=2 #1"}},
			{"apply_patch", map[string]any{"patch": "--- a/TODO.md\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-- [ ] a\n-- [x] b\n-- [ ] c\n"}, []string{"note: " + string(QualityDeleted)}},
		}},
		{"cursor hooks: read, then edits", []step{
			{"afterFileEdit", map[string]any{"conversation_id": "c1", "hook_event_name": "afterFileEdit", "file_path": "/home/u/.cursor/plans/retry_1a2b3c4d.plan.md", "edits": []map[string]any{{"old_string": "status: pending", "new_string": "status: completed"}}}, []string{"note: " + string(QualityUnknownPrior)}},
			{"beforeReadFile", map[string]any{"conversation_id": "c1", "hook_event_name": "beforeReadFile", "file_path": "/home/u/.cursor/plans/retry_1a2b3c4d.plan.md", "content": "---\nname: Retry\ntodos:\n  - id: a\n    content: Read the client\n    status: pending\n  - id: b\n    content: Add the retry loop\n    status: pending\n---\n# Retry\n"}, []string{"created added=1,2"}},
			{"afterFileEdit", map[string]any{"conversation_id": "c1", "hook_event_name": "afterFileEdit", "file_path": "/home/u/.cursor/plans/retry_1a2b3c4d.plan.md", "edits": []map[string]any{{"old_string": "Read the client\n    status: pending", "new_string": "Read the client\n    status: completed"}}}, []string{"progressed completed=1"}},
			{"afterFileEdit", map[string]any{"conversation_id": "c1", "hook_event_name": "afterFileEdit", "file_path": "/home/u/.cursor/plans/retry_1a2b3c4d.plan.md", "edits": []map[string]any{{"old_string": "    status: pending\n", "new_string": "    status: cancelled\n"}}}, []string{"replanned dropped=2 #1"}},
			{"afterFileEdit", map[string]any{"conversation_id": "c1", "hook_event_name": "afterFileEdit", "file_path": "/home/u/app/main.ts", "edits": []map[string]any{{"old_string": "a", "new_string": "b"}}}, nil},
		}},
		{"ordinary tools and other files", []step{
			{"Bash", map[string]any{"command": "cat task_plan.md"}, nil},
			{"Write", map[string]any{"file_path": "/home/u/app/main.go", "content": "- [ ] a\n"}, nil},
			{"Write", map[string]any{"file_path": "/home/u/app/plan.md", "content": "- [ ] a\n"}, nil},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := newFileTracker(t)
			for i, s := range tt.steps {
				out, ok := call(t, ft, s.tool, s.args)
				if ok != (s.want != nil) {
					t.Fatalf("step %d: Call(%s) ok = %v, want %v", i, s.tool, ok, s.want != nil)
				}
				var got []string
				for _, r := range out.Results {
					got = append(got, fileSummary(r))
				}
				if !slices.Equal(got, s.want) {
					t.Fatalf("step %d: Call(%s) = %q, want %q", i, s.tool, got, s.want)
				}
			}
		})
	}
}

func TestFileTrackerObserve(t *testing.T) {
	ft := newFileTracker(t)
	steps := []struct {
		op   FileOp
		want string
	}{
		{FileOp{Kind: OpEdit, Path: "todo.md", Edits: []Edit{{Old: "- [ ] a", New: "- [x] a"}}}, "note: " + string(QualityUnknownPrior)},
		{FileOp{Kind: OpObserve, Path: "todo.md", Content: "- [ ] a\n- [ ] b\n"}, "created added=1,2"},
		{FileOp{Kind: OpEdit, Path: "todo.md", Edits: []Edit{{Old: "- [ ] a", New: "- [x] a"}}}, "progressed completed=1"},
		{FileOp{Kind: OpObserve, Path: "todo.md", Content: "- [x] a\n- [ ] b\n- [ ] c\n"}, "replanned added=3 #1"},
	}
	for i, s := range steps {
		r, err := ft.Apply(s.op)
		if err != nil {
			t.Fatal(err)
		}
		if got := fileSummary(r); got != s.want {
			t.Fatalf("step %d: Apply(%+v) = %q, want %q", i, s.op, got, s.want)
		}
	}
}

func TestFileTrackerOther(t *testing.T) {
	ft := newFileTracker(t)
	out, ok := call(t, ft, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: a.go\n+x\n*** Add File: task_plan.md\n+- [ ] a\n*** End Patch"})
	if !ok || len(out.Results) != 1 || !slices.Equal(out.Other, []string{"a.go"}) {
		t.Fatalf("Call(patch of a.go and task_plan.md) = %+v, %v; want one plan result and Other [a.go]", out, ok)
	}
}

func TestFileTrackerMove(t *testing.T) {
	ft := newFileTracker(t)
	call(t, ft, "Write", map[string]any{"file_path": "todo.md", "content": "- [ ] a\n"})
	out, _ := call(t, ft, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: todo.md\n*** Move to: task_plan.md\n@@\n-- [ ] a\n+- [x] a\n*** End Patch"})
	var got []string
	for _, r := range out.Results {
		got = append(got, r.Path+": "+fileSummary(r))
	}
	want := []string{"todo.md: note: " + string(QualityDeleted), "task_plan.md: note: " + string(QualityUnknownPrior)}
	if !slices.Equal(got, want) {
		t.Fatalf("move = %q, want %q", got, want)
	}
}

func TestFileTrackerDir(t *testing.T) {
	ft := newFileTracker(t).WithDir("/home/u/app")
	call(t, ft, "Write", map[string]any{"file_path": "/home/u/app/todo.md", "content": "- [ ] a\n"})
	out, _ := call(t, ft, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: todo.md\n@@\n-- [ ] a\n+- [x] a\n*** End Patch"})
	if got := fileSummary(out.Results[0]); got != "progressed completed=1" {
		t.Fatalf("patch of a relative path after a write of the absolute one = %q, want progressed completed=1", got)
	}
}

func TestFileTrackerArgsErrors(t *testing.T) {
	tests := []struct{ tool, args string }{
		{"Write", `{"file_path":"todo.md"}`},
		{"Write", `{"file_path":1,"content":""}`},
		{"Edit", `{"file_path":"todo.md","old_string":"a"}`},
		{"MultiEdit", `{"file_path":"todo.md","edits":[{"old_string":"a"}]}`},
		{"insert_lines", `{"path":"todo.md","line":-1,"content":"a"}`},
		{"apply_patch", `{"input":"not a patch"}`},
		{"apply_patch", `{"input":"--- a/todo.md\n+++ b/todo.md\n@@ -1,2 +1,2 @@\n-a\n"}`},
		{"Write", `[`},
	}
	ft := newFileTracker(t)
	for _, tt := range tests {
		_, ok, err := ft.Call(tt.tool, []byte(tt.args))
		if !errors.Is(err, ErrArguments) || ok {
			t.Errorf("Call(%s, %s) = %v, %v; want ErrArguments", tt.tool, tt.args, ok, err)
		}
	}
}

func TestFilesMatch(t *testing.T) {
	files, err := NewFiles(DefaultFilesConfig())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want bool
	}{
		{"task_plan.md", true},
		{"/w/task_plan.md", true},
		{`C:\w\task_plan.md`, true},
		{"todo.md", true},
		{"docs/TODO.md", true},
		{"Todo.md", false},
		{"/home/u/.cursor/plans/retry_http_1a2b3c4d.plan.md", true},
		{".cursor/plans/x.plan.md", true},
		{"plans/x.plan.md", false},
		{"/home/u/.cursor/plans/sub/x.plan.md", false},
		{"plan.md", false},
		{"task_plan.md.bak", false},
		{"my_task_plan.md", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := files.Match(tt.path); got != tt.want {
			t.Errorf("Match(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestFilesConfigValidate(t *testing.T) {
	cfg := FilesConfig{Patterns: []string{"[", "/abs.md", "ok.md"}, Tools: map[string]string{"": ShapeWrite, "X": "nope"}}
	err := cfg.Validate()
	for _, want := range []string{`"["`, `"/abs.md"`, "empty file tool name", `unknown shape "nope"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %s", err, want)
		}
	}
	if err := DefaultFilesConfig().Validate(); err != nil {
		t.Fatalf("DefaultFilesConfig().Validate() = %v", err)
	}
}

func TestApplyEdits(t *testing.T) {
	tests := []struct {
		name, in string
		edits    []Edit
		want     string
		ok       bool
	}{
		{"once", "a b a", []Edit{{Old: "b", New: "c"}}, "a c a", true},
		{"twice refused", "a b a", []Edit{{Old: "a", New: "c"}}, "", false},
		{"first", "a b a", []Edit{{Old: "a", New: "c", First: true}}, "c b a", true},
		{"all", "a b a", []Edit{{Old: "a", New: "c", All: true}}, "c b c", true},
		{"missing", "a", []Edit{{Old: "x", New: "y"}}, "", false},
		{"empty old", "a", []Edit{{Old: "", New: "y"}}, "", false},
		{"in order, all or nothing", "a", []Edit{{Old: "a", New: "b"}, {Old: "b", New: "c"}, {Old: "z", New: ""}}, "", false},
		{"in order", "a", []Edit{{Old: "a", New: "b"}, {Old: "b", New: "c"}}, "c", true},
	}
	for _, tt := range tests {
		got, err := ApplyEdits(tt.in, tt.edits)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%s: ApplyEdits(%q, %+v) = %q, %v; want %q, ok %v", tt.name, tt.in, tt.edits, got, err, tt.want, tt.ok)
		}
	}
}

// TestInsertAfter: insert_lines indents unindented text like the line it
// lands before (at the end, the line it follows), as SkillLite does.
func TestInsertAfter(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		text     string
		want     string
		ok       bool
	}{
		{"at the start", "a\nb\n", 0, "n", "n\na\nb\n", true},
		{"between", "a\nb\n", 1, "n\nm\n", "a\nn\nm\nb\n", true},
		{"at the end", "a\n", 1, "n", "a\nn\n", true},
		{"into an empty file", "", 0, "n", "n\n", true},
		{"before an indented line", "- [ ] a\n  - [ ] b\n", 1, "- [ ] c\n\n- [ ] d", "- [ ] a\n  - [ ] c\n\n  - [ ] d\n  - [ ] b\n", true},
		{"at the end after an indented line", "- [ ] a\n\t- [ ] b\n", 2, "- [ ] c", "- [ ] a\n\t- [ ] b\n\t- [ ] c\n", true},
		{"text already indented: kept", "- [ ] a\n  - [ ] b\n", 1, "- [ ] c\n    - [ ] d", "- [ ] a\n- [ ] c\n    - [ ] d\n  - [ ] b\n", true},
		{"after an indented line, before an unindented one", "  a\nb\n", 1, "n", "  a\nn\nb\n", true},
		{"past the end", "a\n", 2, "n", "", false},
		{"negative", "a\n", -1, "n", "", false},
	}
	for _, tt := range tests {
		got, err := insertAfter(tt.in, tt.line, tt.text)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%s: insertAfter(%q, %d, %q) = %q, %v; want %q, ok %v", tt.name, tt.in, tt.line, tt.text, got, err, tt.want, tt.ok)
		}
	}
}

func TestApplyHunks(t *testing.T) {
	tests := []struct {
		name, in string
		hunks    []Hunk
		want     string
		ok       bool
	}{
		{"replace", "a\nb\nc\n", []Hunk{{Old: []string{"b"}, New: []string{"B"}}}, "a\nB\nc\n", true},
		{"in order after the previous hunk", "x\ny\nx\n", []Hunk{{Old: []string{"y"}, New: []string{"Y"}}, {Old: []string{"x"}, New: []string{"X"}}}, "x\nY\nX\n", true},
		{"not found", "a\n", []Hunk{{Old: []string{"b"}, New: nil}}, "", false},
		{"insert at header line", "a\nb\n", []Hunk{{At: 1, New: []string{"n"}}}, "a\nn\nb\n", true},
		{"insert at end", "a\n", []Hunk{{New: []string{"n"}}}, "a\nn\n", true},
		{"the occurrence at the header's line", "x\ny\nx\n", []Hunk{{At: 3, Old: []string{"x"}, New: []string{"X"}}}, "x\ny\nX\n", true},
		{"header's line wrong: the first occurrence", "x\ny\nx\n", []Hunk{{At: 2, Old: []string{"x"}, New: []string{"X"}}}, "X\ny\nx\n", true},
		{"after the anchor", "# A\n- [ ] t\n# B\n- [ ] t\n", []Hunk{{Anchor: "# B", Old: []string{"- [ ] t"}, New: []string{"- [x] t"}}}, "# A\n- [ ] t\n# B\n- [x] t\n", true},
		{"anchor missing", "a\n", []Hunk{{Anchor: "# B", Old: []string{"a"}}}, "", false},
		{"no trailing newline kept as lines", "a\nb", []Hunk{{Old: []string{"b"}, New: []string{"c"}}}, "a\nc\n", true},
	}
	for _, tt := range tests {
		got, err := ApplyHunks(tt.in, tt.hunks)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%s: ApplyHunks(%q) = %q, %v; want %q, ok %v", tt.name, tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParsePatch(t *testing.T) {
	tests := []struct {
		name, patch string
		want        string // ops as "kind path old>new|…"
	}{
		{"codex add, update with anchor, delete",
			"*** Begin Patch\n*** Add File: a.md\n+x\n*** Update File: b.md\n@@ # B\n-- [ ] t\n+- [x] t\n*** Delete File: c.md\n*** End Patch",
			"write a.md x\n; patch b.md @# B - [ ] t>- [x] t; delete c.md"},
		{"codex first hunk without @@, two hunks",
			"*** Begin Patch\n*** Update File: b.md\n a\n-b\n+B\n@@\n-c\n*** End of File\n*** End Patch",
			"patch b.md a,b>a,B|c>"},
		{"unified, two files, /dev/null",
			"diff --git a/x b/x\n--- a/x.md\n+++ b/x.md\n@@ -2,2 +2,2 @@\n a\n-b\n+B\n--- /dev/null\n+++ b/y.md\n@@ -0,0 +1 @@\n+n\n--- a/z.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n",
			"patch x.md @2 a,b>a,B; write y.md n\n; delete z.md"},
		{"unified rename", "--- a/old.md\n+++ b/new.md\n@@ -1 +1 @@\n-a\n+b\n", "delete old.md; patch new.md @1 a>b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := ParsePatch(tt.patch)
			if err != nil {
				t.Fatalf("ParsePatch: %v", err)
			}
			var parts []string
			for _, op := range ops {
				s := map[OpKind]string{OpWrite: "write", OpPatch: "patch", OpDelete: "delete"}[op.Kind] + " " + op.Path
				switch op.Kind {
				case OpWrite:
					s += " " + op.Content
				case OpPatch:
					var hs []string
					for _, h := range op.Hunks {
						pre := ""
						if h.Anchor != "" {
							pre = "@" + h.Anchor + " "
						} else if h.At > 0 {
							pre = "@" + strconv.Itoa(h.At) + " "
						}
						hs = append(hs, pre+strings.Join(h.Old, ",")+">"+strings.Join(h.New, ","))
					}
					s += " " + strings.Join(hs, "|")
				}
				parts = append(parts, s)
			}
			if got := strings.Join(parts, "; "); got != tt.want {
				t.Fatalf("ParsePatch(%q) = %q, want %q", tt.patch, got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "*** Begin Patch\n*** Update File: a\n@@\n?x\n*** End Patch", "*** Begin Patch\n+x\n*** End Patch", "*** Begin Patch\n*** Add File: a\n+x\n", "--- a/x\nno plus"} {
		if ops, err := ParsePatch(bad); err == nil {
			t.Errorf("ParsePatch(%q) = %+v, want an error", bad, ops)
		}
	}
}
