package infer

import (
	"errors"
	"fmt"
	"maps"
	"strings"
)

// Call is one real tool call of a session, in order: no plan tool, no
// control call (complete_task, update_task_plan), no task or hint.
type Call struct {
	Tool      string
	OK        bool
	ErrorKind string // the failure's class, "" when OK or unknown
}

// Redecision is one inferred change of course, with its evidence.
type Redecision struct {
	// At is the index of the call that takes the new course: the agent
	// re-decided after call At−1 and before call At (the position an
	// explicit replan between those calls has).
	At int
	// Failures is the length of the failure streak before At, all in the
	// family From (at least Rule.MinFailures).
	Failures int
	// From and To are the families given up and taken; FromTool and ToTool
	// the last tool of the streak and the tool of call At.
	From, To         string
	FromTool, ToTool string
	// ErrorKinds are the streak's error kinds, in order ("" where unknown).
	ErrorKinds []string
}

// Evidence says in words why the re-decision was inferred.
func (r Redecision) Evidence() string {
	fam := func(family, tool string) string {
		if family == tool {
			return tool
		}
		return tool + " (" + family + ")"
	}
	return fmt.Sprintf("after %d failed call%s of %s [%s], call %d switched to %s",
		r.Failures, plural(r.Failures), fam(r.From, r.FromTool), strings.Join(r.ErrorKinds, ","), r.At, fam(r.To, r.ToTool))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Rule is the inference rule, with its parameters.
type Rule struct {
	// MinFailures is the shortest failure streak (≥ 1) after which a change
	// of family counts as a re-decision.
	MinFailures int
	// Families maps a tool name to its family. A tool not in the map is a
	// family of its own (nil: every tool is), so that a switch between two
	// tools of one family is not a change of course.
	Families map[string]string
	// Cap is the most re-decisions inferred in one session, the first ones
	// kept; 0 for no cap.
	Cap int
}

// Validate reports every problem of r at once.
func (r Rule) Validate() error {
	var errs []error
	if r.MinFailures < 1 {
		errs = append(errs, fmt.Errorf("min failures %d: want ≥ 1", r.MinFailures))
	}
	if r.Cap < 0 {
		errs = append(errs, fmt.Errorf("cap %d is negative", r.Cap))
	}
	for tool, fam := range r.Families {
		if tool == "" || fam == "" {
			errs = append(errs, fmt.Errorf("family map %q → %q: empty name", tool, fam))
		}
	}
	return errors.Join(errs...)
}

// Family returns the family of tool.
func (r Rule) Family(tool string) string {
	if f, ok := r.Families[tool]; ok {
		return f
	}
	return tool
}

// Infer returns the re-decisions the rule finds in calls, in order.
func (r Rule) Infer(calls []Call) []Redecision {
	var out []Redecision
	streak := 0 // failed calls just before i, all of family fam
	fam := ""
	var kinds []string
	for i, c := range calls {
		f := r.Family(c.Tool)
		if streak >= r.MinFailures && f != fam && (r.Cap == 0 || len(out) < r.Cap) {
			out = append(out, Redecision{
				At: i, Failures: streak, From: fam, To: f,
				FromTool: calls[i-1].Tool, ToTool: c.Tool, ErrorKinds: kinds,
			})
		}
		switch {
		case c.OK:
			streak, fam, kinds = 0, "", nil
		case streak > 0 && f == fam:
			streak++
			kinds = append(kinds, c.ErrorKind)
		default:
			streak, fam, kinds = 1, f, []string{c.ErrorKind}
		}
	}
	return out
}

// DefaultFamilies groups common tool names of Claude Code, SkillLite,
// Codex, OpenClaw and the simulator by what they do: read, search, web,
// edit, exec, test. Tuning (docs/inferred-replans.md) compares it with
// every tool its own family.
func DefaultFamilies() map[string]string {
	m := map[string]string{}
	add := func(fam string, tools ...string) {
		for _, t := range tools {
			m[t] = fam
		}
	}
	add("read", "Read", "read_file", "file_read", "list_directory", "list_dir", "LS", "file_exists")
	add("search", "Grep", "Glob", "grep", "grep_files", "file_search", "code_search", "search_files")
	add("web", "WebFetch", "WebSearch", "search_web", "web_search", "fetch", "fetch_page", "web_browser")
	add("edit", "Edit", "MultiEdit", "Write", "NotebookEdit", "edit_file", "write_file", "file_write", "file_edit", "search_replace", "insert_lines", "apply_patch")
	add("exec", "Bash", "run_command", "shell", "shell_exec", "python_exec", "code_interpreter", "exec")
	add("test", "run_tests")
	return maps.Clone(m)
}
