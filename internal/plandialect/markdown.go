package plandialect

import (
	"regexp"
	"strings"
)

// Markdown is the name of the Markdown plan-file dialect.
const Markdown = "markdown"

// MarkdownDialect reads a Markdown plan file's whole content as a plan
// without ids (docs/plan-dialects.md, "Markdown plan files"):
//
//   - with YAML front matter that has a todos key (Cursor's saved plans,
//     *.plan.md), the tasks are those todos: content, status pending,
//     in_progress, completed, or cancelled (left out);
//   - otherwise every checklist item of the body is a task, nested ones
//     included: "- [ ]", "* [ ]", "+ [ ]", "1. [ ]", "1) [ ]" pending;
//     "[x]", "[X]" completed; "[~]", "[/]" in progress; "[-]" cancelled
//     (left out, as is an item whose whole text is struck through, ~~…~~).
//     Items inside fenced code blocks are not tasks. A task's Phase is the
//     text of the nearest ATX heading above it.
//
// It is not in the builtin table: its input is a file's content, which
// Files and FileTracker reconstruct from file tool calls, not the JSON
// arguments of a plan tool.
type MarkdownDialect struct{}

var _ Dialect = MarkdownDialect{}

// Name returns "markdown".
func (MarkdownDialect) Name() string { return Markdown }

// Parse reads content. It fails (*ArgsError) only on front matter whose
// todos it cannot read; a body without checklist items is a plan with no
// task.
func (MarkdownDialect) Parse(content []byte) (Plan, error) {
	text := strings.ReplaceAll(string(content), "\r\n", "\n")
	front, body, ok := frontMatter(text)
	if ok {
		tasks, found, err := frontTodos(front)
		if err != nil {
			return Plan{}, err
		}
		if found {
			return Plan{Tasks: tasks}, nil
		}
	}
	return Plan{Tasks: checklist(body)}, nil
}

var (
	// itemRe matches a checklist item: indent, bullet or number, box, text.
	itemRe = regexp.MustCompile(`^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])[ \t]+\[([ xX~/-])\][ \t]+(.*)$`)
	// headingRe matches an ATX heading and captures its text.
	headingRe = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?[ \t]*$`)
	// closingHashes is an ATX heading's optional closing sequence.
	closingHashes = regexp.MustCompile(`[ \t]+#+$`)
	// fenceRe matches the opening or closing line of a fenced code block.
	fenceRe = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
)

// checklist returns the tasks of a Markdown body, in order.
func checklist(body string) []Task {
	tasks := []Task{}
	phase := ""
	fence := ""
	for line := range strings.SplitSeq(body, "\n") {
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				continue
			case m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(line[strings.Index(line, m[1])+len(m[1]):]) == "":
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		if m := headingRe.FindStringSubmatch(line); m != nil {
			phase = strings.TrimSpace(closingHashes.ReplaceAllString(m[1], ""))
			if strings.Trim(phase, "#") == "" {
				phase = ""
			}
			continue
		}
		m := itemRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		desc := strings.TrimSpace(m[2])
		if desc == "" || m[1] == "-" || struckThrough(desc) {
			continue
		}
		st := Pending
		switch m[1] {
		case "x", "X":
			st = Completed
		case "~", "/":
			st = InProgress
		}
		tasks = append(tasks, Task{Description: desc, Status: st, Phase: phase})
	}
	return tasks
}

// struckThrough reports whether the whole of s is struck through (~~s~~).
func struckThrough(s string) bool {
	return len(s) > 4 && strings.HasPrefix(s, "~~") && strings.HasSuffix(s, "~~") && !strings.Contains(s[2:len(s)-2], "~~")
}

// frontMatter splits YAML front matter ("---" on the first line, up to a
// line "---" or "...") from the body.
func frontMatter(text string) (front, body string, ok bool) {
	rest, found := strings.CutPrefix(text, "---\n")
	if !found {
		return "", text, false
	}
	off := 0
	for off <= len(rest) {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if t := strings.TrimRight(line, " \t"); t == "---" || t == "..." {
			if end < 0 {
				return rest[:off], "", true
			}
			return rest[:off], rest[off+end+1:], true
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return "", text, false // not closed: not front matter
}
