package plandialect

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
)

// Quality is a data-quality note a plan-file operation leaves instead of a
// plan event: what could not be known, never guessed.
type Quality string

// Data-quality notes of FileResult.
const (
	// QualityUnknownPrior: an edit, append, insert or patch of a plan file
	// whose content before it is unknown (no write of it seen in the
	// session). Nothing is classified; the content stays unknown until the
	// next whole write.
	QualityUnknownPrior Quality = "edit of plan file with unknown prior content"
	// QualityMismatch: an edit that does not apply to the content known for
	// the file (the text to replace is missing, or occurs more than once
	// where the tool requires one occurrence): the file changed in a way the
	// session did not show. The content becomes unknown.
	QualityMismatch Quality = "edit of plan file does not apply to its known content"
	// QualityUnreadable: the plan file's content could not be read as a plan
	// (front matter todos in a shape the dialect does not read).
	QualityUnreadable Quality = "plan file content unreadable"
	// QualityNoTasks: the plan file has no task yet, and the session no plan:
	// not (yet) a plan, so no plan is created.
	QualityNoTasks Quality = "plan file has no checklist items"
	// QualityDeleted: the plan file was deleted; the plan in force stays.
	QualityDeleted Quality = "plan file deleted"
)

// FileResult is what one plan-file operation was.
type FileResult struct {
	Path string
	// Applied: the content after the operation is known and was classified;
	// Result says what it was (Unchanged when it changed no task).
	Applied bool
	Result  Result
	// Quality says why an operation was not classified ("" when Applied, or
	// QualityNoTasks alongside Applied false).
	Quality Quality
	// Err is the dialect's error for QualityUnreadable.
	Err error
}

// FileOutcome is what a file tool call did to plan files.
type FileOutcome struct {
	Results []FileResult // one per plan-file operation, in order
	Other   []string     // files touched that are not plan files
}

// FileTracker follows the plan files of one session: the last known
// content of each, and the session's Tracker every new content is
// classified with (one plan per session, whichever plan file states it).
// It is not safe for concurrent use.
type FileTracker struct {
	files   *Files
	tr      *Tracker
	dir     string
	content map[string]string // known contents by cleaned path; absent: unknown
}

// NewTracker returns the FileTracker of one session, classifying with tr
// (the session's Tracker, which plan tool calls may share). Relative paths
// are taken as given unless WithDir sets the directory they are relative to.
func (f *Files) NewTracker(tr *Tracker) *FileTracker {
	return &FileTracker{files: f, tr: tr, content: map[string]string{}}
}

// WithDir sets the working directory relative paths are resolved against
// (Claude Code's cwd, Cursor's first workspace root), so that an absolute
// and a relative path to the same file share their content.
func (ft *FileTracker) WithDir(dir string) *FileTracker {
	ft.dir = cleanPath(dir)
	return ft
}

func (ft *FileTracker) key(p string) string {
	p = cleanPath(p)
	if ft.dir != "" && !strings.HasPrefix(p, "/") {
		return path.Join(ft.dir, p)
	}
	return p
}

// Call is the one question an adapter asks of a tool call: is it a
// plan-file operation, and what does it mean. ok is false for a call that
// is not (an ordinary tool call, or a file tool on other files). When ok,
// the adapter emits the plan events of each Applied result and the notes
// of the others, and records the call as a real tool call only if Other is
// not empty. Feed only calls that succeeded: a failed write changed
// nothing. A file tool call whose arguments cannot be read fails with an
// *ArgsError (errors.Is ErrArguments).
func (ft *FileTracker) Call(tool string, args []byte) (out FileOutcome, ok bool, err error) {
	call, ok, err := ft.files.Operation(tool, args)
	if err != nil || !ok {
		return FileOutcome{}, false, err
	}
	out.Other = call.Other
	for _, op := range call.Ops {
		r, err := ft.Apply(op)
		if err != nil {
			return out, true, err
		}
		out.Results = append(out.Results, r)
	}
	return out, true, nil
}

// Apply applies one operation to the file's last known content and
// classifies the content that results. Adapters that see file operations
// in another form (Cursor's afterFileEdit: file_path and edits) build the
// FileOp themselves. It fails only with ErrPlan from the Tracker.
func (ft *FileTracker) Apply(op FileOp) (FileResult, error) {
	k := ft.key(op.Path)
	res := FileResult{Path: op.Path}
	prior, known := ft.content[k]
	var next string
	switch op.Kind {
	case OpWrite, OpObserve:
		next = op.Content
	case OpDelete:
		delete(ft.content, k)
		res.Quality = QualityDeleted
		return res, nil
	default:
		if !known {
			res.Quality = QualityUnknownPrior
			return res, nil
		}
		var ok bool
		if next, ok = applyOp(prior, op); !ok {
			delete(ft.content, k)
			res.Quality = QualityMismatch
			return res, nil
		}
	}
	ft.content[k] = next
	plan, err := MarkdownDialect{}.Parse([]byte(next))
	if err != nil {
		res.Quality, res.Err = QualityUnreadable, err
		return res, nil
	}
	if len(plan.Tasks) == 0 && ft.tr.Plan() == nil {
		res.Quality = QualityNoTasks
		return res, nil
	}
	r, err := ft.tr.Apply(plan)
	if err != nil {
		return res, fmt.Errorf("plan file %s: %w", op.Path, err)
	}
	res.Applied, res.Result = true, r
	return res, nil
}

// Known returns the last known content of the file at p.
func (ft *FileTracker) Known(p string) (string, bool) {
	c, ok := ft.content[ft.key(p)]
	return c, ok
}

// errNoApply is applyOp's internal "does not apply".
var errNoApply = errors.New("does not apply")

// applyOp applies an edit, append, insert or patch to content; false when
// it does not apply.
func applyOp(content string, op FileOp) (string, bool) {
	var err error
	switch op.Kind {
	case OpAppend:
		return content + op.Content, true
	case OpEdit:
		content, err = ApplyEdits(content, op.Edits)
	case OpInsert:
		content, err = insertAfter(content, op.Line, op.Content)
	case OpPatch:
		content, err = ApplyHunks(content, op.Hunks)
	default:
		err = errNoApply
	}
	return content, err == nil
}

// ApplyEdits applies edits to content in order, all or nothing. An edit
// whose Old is empty or missing fails, as does one whose Old occurs more
// than once without All or First.
func ApplyEdits(content string, edits []Edit) (string, error) {
	for i, e := range edits {
		n := strings.Count(content, e.Old)
		switch {
		case e.Old == "":
			return "", fmt.Errorf("edit %d: empty text to replace: %w", i, errNoApply)
		case n == 0:
			return "", fmt.Errorf("edit %d: text to replace not found: %w", i, errNoApply)
		case e.All:
			content = strings.ReplaceAll(content, e.Old, e.New)
		case n > 1 && !e.First:
			return "", fmt.Errorf("edit %d: text to replace occurs %d times: %w", i, n, errNoApply)
		default:
			content = strings.Replace(content, e.Old, e.New, 1)
		}
	}
	return content, nil
}

// insertAfter inserts text after line n of content (0: at the start),
// on lines of its own, indented as SkillLite's insert_lines does
// (extensions/builtin/file_ops/search_replace.rs, auto_indent): when no
// line of text is indented and the line it lands before (at the end, the
// line it follows) is, every non-blank line of text takes that line's
// indentation.
func insertAfter(content string, n int, text string) (string, error) {
	lines := splitLines(content)
	if n < 0 || n > len(lines) {
		return "", fmt.Errorf("insert after line %d of %d: %w", n, len(lines), errNoApply)
	}
	add := splitLines(text)
	ref := ""
	switch {
	case n < len(lines):
		ref = lines[n]
	case n > 0:
		ref = lines[n-1]
	}
	indent := ref[:len(ref)-len(strings.TrimLeftFunc(ref, unicode.IsSpace))]
	indented := slices.ContainsFunc(add, func(l string) bool {
		return strings.TrimSpace(l) != "" && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t"))
	})
	if indent != "" && !indented {
		for i, l := range add {
			if strings.TrimSpace(l) != "" {
				add[i] = indent + l
			}
		}
	}
	out := append(append(append([]string{}, lines[:n]...), add...), lines[n:]...)
	return joinLines(out), nil
}

// splitLines splits content into lines without their newlines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// ApplyHunks applies patch hunks to content, in order: each hunk's Old
// lines must occur, exactly, at or after the end of the previous hunk —
// after its Anchor line when it has one (Codex's "@@ heading"), at its
// header's line (At) when they are there, else at their first occurrence.
// A hunk with no Old lines goes at At, else at the end. The result ends in
// a newline when it has lines.
func ApplyHunks(content string, hunks []Hunk) (string, error) {
	lines := splitLines(content)
	from := 0
	for i, h := range hunks {
		at := -1
		if h.Anchor != "" {
			j := from
			for j < len(lines) && strings.TrimSpace(lines[j]) != h.Anchor {
				j++
			}
			if j == len(lines) {
				return "", fmt.Errorf("hunk %d: anchor %q not found: %w", i, h.Anchor, errNoApply)
			}
			from = j + 1
		}
		switch {
		case len(h.Old) == 0:
			at = len(lines)
			if h.At > 0 && h.At <= len(lines) {
				at = h.At // "@@ -l,0" inserts after line l
			}
		case h.At > 0 && h.At-1 >= from && h.At-1+len(h.Old) <= len(lines) && equalLines(lines[h.At-1:h.At-1+len(h.Old)], h.Old):
			at = h.At - 1
		default:
			for j := from; j+len(h.Old) <= len(lines); j++ {
				if equalLines(lines[j:j+len(h.Old)], h.Old) {
					at = j
					break
				}
			}
		}
		if at < 0 {
			return "", fmt.Errorf("hunk %d: expected lines not found: %w", i, errNoApply)
		}
		lines = append(append(append([]string{}, lines[:at]...), h.New...), lines[at+len(h.Old):]...)
		from = at + len(h.New)
	}
	return joinLines(lines), nil
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
