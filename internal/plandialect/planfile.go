package plandialect

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Shapes of file tool arguments (FilesConfig.Tools). Each names the
// members it reads; a member is found under any of its aliases.
const (
	// ShapeWrite: {file_path|path, content, append?} — the whole content
	// (Claude Code Write, SkillLite write_file, OpenClaw write); append true
	// appends it (SkillLite).
	ShapeWrite = "write"
	// ShapeEdit: {file_path|path, old_string, new_string, replace_all?} —
	// old_string must occur exactly once unless replace_all (Claude Code
	// Edit, OpenClaw edit with oldText/newText).
	ShapeEdit = "edit"
	// ShapeReplace: as ShapeEdit, but without replace_all only the first
	// occurrence is replaced (SkillLite search_replace; dry_run true is no
	// edit).
	ShapeReplace = "replace"
	// ShapeMultiEdit: {file_path|path, edits:[{old_string, new_string,
	// replace_all?}]}, applied in order, all or nothing (Claude Code
	// MultiEdit; Cursor's afterFileEdit hook carries the same edits).
	ShapeMultiEdit = "multi-edit"
	// ShapeInsert: {path, line, content} — content inserted after line
	// (0: at the start; SkillLite insert_lines).
	ShapeInsert = "insert"
	// ShapePatch: {input|patch|diff} — a patch that may touch several files,
	// in Codex's apply_patch format or as a unified diff.
	ShapePatch = "patch"
	// ShapeObserve: {file_path|path, content} — the whole content seen, not
	// written (Cursor's beforeReadFile hook): an OpObserve.
	ShapeObserve = "observe"
)

var shapes = []string{ShapeWrite, ShapeEdit, ShapeReplace, ShapeMultiEdit, ShapeInsert, ShapePatch, ShapeObserve}

// Argument member aliases, first match wins.
var (
	pathKeys    = []string{"file_path", "path", "filePath", "target_file"}
	contentKeys = []string{"content", "contents"}
	oldKeys     = []string{"old_string", "old_str", "oldText", "oldString"}
	newKeys     = []string{"new_string", "new_str", "newText", "newString"}
	allKeys     = []string{"replace_all", "replaceAll"}
	patchKeys   = []string{"input", "patch", "diff"}
)

// DefaultPlanFiles are the default patterns of plan files (see
// FilesConfig.Patterns): Manus-style task_plan.md, todo.md and TODO.md, and
// Cursor's saved plans (*.plan.md under .cursor/plans, in the workspace or
// the home directory). plan.md is not among them: it is too common a name
// for documents that are not an agent's checklist.
func DefaultPlanFiles() []string {
	return []string{"task_plan.md", "todo.md", "TODO.md", ".cursor/plans/*.plan.md"}
}

// DefaultFileTools maps the file tools of Claude Code, SkillLite, Codex and
// OpenClaw to the shape of their arguments, and two of Cursor's hook events,
// which carry no tool name: an adapter passes the hook_event_name as the
// tool and the hook's JSON as the arguments.
func DefaultFileTools() map[string]string {
	return map[string]string{
		"afterFileEdit":  ShapeMultiEdit, // Cursor hook: file_path, edits
		"beforeReadFile": ShapeObserve,   // Cursor hook: file_path, content
		"Write":          ShapeWrite,     // Claude Code
		"Edit":           ShapeEdit,      // Claude Code
		"MultiEdit":      ShapeMultiEdit, // Claude Code
		"write_file":     ShapeWrite,     // SkillLite, many OTel-instrumented agents
		"search_replace": ShapeReplace,   // SkillLite
		"insert_lines":   ShapeInsert,    // SkillLite
		"edit_file":      ShapeEdit,      // common name with old_str/new_str
		"apply_patch":    ShapePatch,     // Codex, OpenClaw
		"write":          ShapeWrite,     // OpenClaw
		"edit":           ShapeEdit,      // OpenClaw
	}
}

// FilesConfig configures plan-file recognition.
type FilesConfig struct {
	// Patterns select plan files. A pattern without "/" is matched
	// (path.Match) against a path's last element; one with "/" against its
	// last elements, as many as the pattern has.
	Patterns []string
	// Tools maps a file tool's name to the shape of its arguments.
	Tools map[string]string
}

// DefaultFilesConfig returns DefaultPlanFiles and DefaultFileTools.
func DefaultFilesConfig() FilesConfig {
	return FilesConfig{Patterns: DefaultPlanFiles(), Tools: DefaultFileTools()}
}

// Validate reports every problem of c at once.
func (c FilesConfig) Validate() error {
	var errs []error
	for _, p := range c.Patterns {
		if _, err := path.Match(p, ""); err != nil || p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			errs = append(errs, fmt.Errorf("plan file pattern %q is not a relative path.Match pattern", p))
		}
	}
	for _, tool := range slices.Sorted(maps.Keys(c.Tools)) {
		if tool == "" {
			errs = append(errs, errors.New("empty file tool name"))
		}
		if !slices.Contains(shapes, c.Tools[tool]) {
			errs = append(errs, fmt.Errorf("file tool %q: unknown shape %q (known: %s)", tool, c.Tools[tool], strings.Join(shapes, ", ")))
		}
	}
	return errors.Join(errs...)
}

// Files recognises plan-file operations among file tool calls. It is
// immutable and safe for concurrent use; FileTracker holds one session's
// file contents.
type Files struct {
	patterns []string
	tools    map[string]string
}

// NewFiles returns the Files of cfg, or cfg's problems.
func NewFiles(cfg FilesConfig) (*Files, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("plan file config: %w", err)
	}
	return &Files{patterns: slices.Clone(cfg.Patterns), tools: maps.Clone(cfg.Tools)}, nil
}

// cleanPath returns p with slashes, cleaned ("" stays "").
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(strings.ReplaceAll(p, `\`, "/"))
}

// Match reports whether p names a plan file.
func (f *Files) Match(p string) bool {
	p = cleanPath(p)
	if p == "" {
		return false
	}
	elems := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for _, pat := range f.patterns {
		n := strings.Count(pat, "/") + 1
		if n > len(elems) {
			continue
		}
		if ok, _ := path.Match(pat, strings.Join(elems[len(elems)-n:], "/")); ok {
			return true
		}
	}
	return false
}

// OpKind is what a file operation does.
type OpKind int

// Kinds of FileOp.
const (
	OpWrite  OpKind = iota + 1 // replace the whole content with Content
	OpAppend                   // append Content
	OpEdit                     // apply Edits in order
	OpInsert                   // insert Content after line Line (0: at the start)
	OpPatch                    // apply Hunks
	OpDelete                   // the file is deleted
	// OpObserve: the whole content was seen without being written (a read
	// returning the whole file, Cursor's beforeReadFile hook). It makes the
	// content known and is classified like a write: a plan a person edited
	// outside the session shows up here.
	OpObserve
)

// Edit is one string replacement.
type Edit struct {
	Old, New string
	// All replaces every occurrence; otherwise Old must occur once, or,
	// with First, the first occurrence is replaced.
	All, First bool
}

// Hunk is one hunk of a patch: the lines it expects (context and removed)
// and the lines it leaves (context and added), without their prefixes.
type Hunk struct {
	Old, New []string
	// At is the 1-based line a unified diff's header gives for Old (0 when
	// unknown): Old is taken there when it is there, and a hunk with no Old
	// lines goes there.
	At int
	// Anchor is the text after "@@ " in Codex's format (a line the hunk
	// follows, such as a heading): Old is sought after that line.
	Anchor string
}

// FileOp is one operation on one file, in tool-neutral form.
type FileOp struct {
	Kind    OpKind
	Path    string
	Content string // OpWrite, OpAppend, OpInsert, OpObserve
	Line    int    // OpInsert
	Edits   []Edit // OpEdit
	Hunks   []Hunk // OpPatch
}

// FileCall is what a file tool call does to plan files.
type FileCall struct {
	Ops []FileOp // operations on plan files, in order
	// Other lists files the call touched that are not plan files: the call
	// is then also a real tool call.
	Other []string
}

// Operation reports whether a tool call is a plan-file operation and what
// it does: ok is false when tool is not a file tool of the config, or the
// call touches no plan file. A call of a file tool whose arguments cannot
// be read fails with an *ArgsError (errors.Is ErrArguments).
func (f *Files) Operation(tool string, raw []byte) (call FileCall, ok bool, err error) {
	shape, known := f.tools[tool]
	if !known {
		return FileCall{}, false, nil
	}
	a := fileArgs{args: args{dialect: "file tool " + tool}}
	m, err := a.root(raw)
	if err != nil {
		return FileCall{}, false, err
	}
	var ops []FileOp
	if shape == ShapePatch {
		text, err := a.anyStr(m, patchKeys)
		if err != nil {
			return FileCall{}, false, err
		}
		if ops, err = ParsePatch(text); err != nil {
			return FileCall{}, false, &ArgsError{Dialect: a.dialect, Path: "/" + patchKeys[0], Msg: err.Error()}
		}
	} else {
		op, skip, err := a.single(shape, m)
		if err != nil || skip {
			return FileCall{}, false, err
		}
		ops = []FileOp{op}
	}
	for _, op := range ops {
		if f.Match(op.Path) {
			call.Ops = append(call.Ops, op)
		} else {
			call.Other = append(call.Other, op.Path)
		}
	}
	return call, len(call.Ops) > 0, nil
}

// fileArgs reads file tool arguments with aliases.
type fileArgs struct{ args }

func (a fileArgs) find(m map[string]json.RawMessage, keys []string) (string, bool) {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return k, true
		}
	}
	return keys[0], false
}

func (a fileArgs) anyStr(m map[string]json.RawMessage, keys []string) (string, error) {
	k, _ := a.find(m, keys)
	return a.str(m, k, "", false)
}

func (a fileArgs) edit(m map[string]json.RawMessage, path string, first bool) (Edit, error) {
	var e Edit
	var err error
	k, _ := a.find(m, oldKeys)
	if e.Old, err = a.str(m, k, path, false); err != nil {
		return Edit{}, err
	}
	k, _ = a.find(m, newKeys)
	if e.New, err = a.str(m, k, path, false); err != nil {
		return Edit{}, err
	}
	k, _ = a.find(m, allKeys)
	if e.All, err = a.boolean(m, k, path); err != nil {
		return Edit{}, err
	}
	e.First = first
	return e, nil
}

// single reads the arguments of a one-file shape; skip is true for a call
// that changes nothing (a dry run).
func (a fileArgs) single(shape string, m map[string]json.RawMessage) (op FileOp, skip bool, err error) {
	if op.Path, err = a.anyStr(m, pathKeys); err != nil {
		return FileOp{}, false, err
	}
	switch shape {
	case ShapeObserve:
		op.Kind = OpObserve
		if op.Content, err = a.anyStr(m, contentKeys); err != nil {
			return FileOp{}, false, err
		}
	case ShapeWrite:
		op.Kind = OpWrite
		if op.Content, err = a.anyStr(m, contentKeys); err != nil {
			return FileOp{}, false, err
		}
		appendMode, err := a.boolean(m, "append", "")
		if err != nil {
			return FileOp{}, false, err
		}
		if appendMode {
			op.Kind = OpAppend
		}
	case ShapeEdit, ShapeReplace:
		dry, err := a.boolean(m, "dry_run", "")
		if err != nil || dry {
			return FileOp{}, dry, err
		}
		e, err := a.edit(m, "", shape == ShapeReplace)
		if err != nil {
			return FileOp{}, false, err
		}
		op.Kind, op.Edits = OpEdit, []Edit{e}
	case ShapeMultiEdit:
		items, err := a.array(m, "edits", "")
		if err != nil {
			return FileOp{}, false, err
		}
		op.Kind = OpEdit
		for i, raw := range items {
			p := "/edits/" + strconv.Itoa(i)
			em, err := a.object(raw, p)
			if err != nil {
				return FileOp{}, false, err
			}
			e, err := a.edit(em, p, false)
			if err != nil {
				return FileOp{}, false, err
			}
			op.Edits = append(op.Edits, e)
		}
	case ShapeInsert:
		op.Kind = OpInsert
		line, err := a.number(m, "line", "")
		if err != nil {
			return FileOp{}, false, err
		}
		if raw := strings.TrimSpace(string(m["line"])); raw != "0" && line == 0 {
			return FileOp{}, false, a.fail("/line", "want a line number ≥ 0, got %s", raw)
		}
		op.Line = int(line)
		if op.Content, err = a.anyStr(m, contentKeys); err != nil {
			return FileOp{}, false, err
		}
	}
	return op, false, nil
}
