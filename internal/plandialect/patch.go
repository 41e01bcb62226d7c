package plandialect

import (
	"fmt"
	"strconv"
	"strings"
)

// ParsePatch reads a patch into one FileOp per file it touches, in order:
// Codex's apply_patch format ("*** Begin Patch", "*** Add File:",
// "*** Update File:" with "@@" hunks, "*** Delete File:", "*** End Patch")
// or a unified diff ("--- a/x", "+++ b/x", "@@ -l,s +l,s @@"). An added
// file is an OpWrite, a deleted one OpDelete, an updated one OpPatch. A
// moved file ("*** Move to:", or a diff whose --- and +++ paths differ) is
// an OpDelete of the old path followed by an OpPatch of the new one, whose
// prior content is then unknown: a move is reported, never guessed.
func ParsePatch(text string) ([]FileOp, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for _, l := range lines {
		if strings.TrimSpace(l) == "*** Begin Patch" {
			return parseCodexPatch(lines)
		}
		if strings.HasPrefix(l, "--- ") {
			return parseUnified(lines)
		}
	}
	return nil, fmt.Errorf("neither an apply_patch envelope nor a unified diff")
}

func parseCodexPatch(lines []string) ([]FileOp, error) {
	var ops []FileOp
	var cur *FileOp
	var hunk *Hunk
	flush := func() {
		if cur != nil {
			if cur.Kind == OpPatch && hunk != nil {
				cur.Hunks = append(cur.Hunks, *hunk)
			}
			if cur.Kind == OpWrite && len(cur.Hunks) == 1 {
				cur.Content = joinLines(cur.Hunks[0].New)
				cur.Hunks = nil
			}
			ops = append(ops, *cur)
		}
		cur, hunk = nil, nil
	}
	started := false
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "*** Begin Patch":
			started = true
			continue
		case !started:
			continue
		case strings.TrimSpace(l) == "*** End Patch":
			flush()
			return ops, nil
		case strings.HasPrefix(l, "*** Add File: "):
			flush()
			cur = &FileOp{Kind: OpWrite, Path: strings.TrimSpace(l[len("*** Add File: "):]), Hunks: []Hunk{{}}}
		case strings.HasPrefix(l, "*** Delete File: "):
			flush()
			ops = append(ops, FileOp{Kind: OpDelete, Path: strings.TrimSpace(l[len("*** Delete File: "):])})
		case strings.HasPrefix(l, "*** Update File: "):
			flush()
			cur = &FileOp{Kind: OpPatch, Path: strings.TrimSpace(l[len("*** Update File: "):])}
		case strings.HasPrefix(l, "*** Move to: ") && cur != nil && cur.Kind == OpPatch:
			ops = append(ops, FileOp{Kind: OpDelete, Path: cur.Path})
			cur.Path = strings.TrimSpace(l[len("*** Move to: "):])
		case strings.TrimSpace(l) == "*** End of File":
		case cur == nil:
			return nil, fmt.Errorf("line %d: %q outside a file section", i+1, l)
		case cur.Kind == OpWrite:
			if !strings.HasPrefix(l, "+") {
				return nil, fmt.Errorf("line %d: added file line without +", i+1)
			}
			cur.Hunks[0].New = append(cur.Hunks[0].New, l[1:])
		case strings.HasPrefix(l, "@@"):
			if hunk != nil {
				cur.Hunks = append(cur.Hunks, *hunk)
			}
			hunk = &Hunk{Anchor: strings.TrimSpace(strings.TrimPrefix(l, "@@"))}
		default:
			if hunk == nil {
				hunk = &Hunk{} // the first hunk may omit "@@"
			}
			if err := hunkLine(hunk, l, i); err != nil {
				return nil, err
			}
		}
	}
	return nil, fmt.Errorf("no *** End Patch")
}

// hunkLine adds one prefixed line to h.
func hunkLine(h *Hunk, l string, i int) error {
	if l == "" { // an empty context line whose space was trimmed
		h.Old, h.New = append(h.Old, ""), append(h.New, "")
		return nil
	}
	switch l[0] {
	case ' ':
		h.Old, h.New = append(h.Old, l[1:]), append(h.New, l[1:])
	case '-':
		h.Old = append(h.Old, l[1:])
	case '+':
		h.New = append(h.New, l[1:])
	case '\\': // "\ No newline at end of file"
	default:
		return fmt.Errorf("line %d: hunk line %q does not start with ' ', '-' or '+'", i+1, l)
	}
	return nil
}

func parseUnified(lines []string) ([]FileOp, error) {
	var ops []FileOp
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "--- ") {
			i++
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "+++ ") {
			return nil, fmt.Errorf("line %d: --- without +++", i+1)
		}
		from, to := diffPath(lines[i][4:], "a/"), diffPath(lines[i+1][4:], "b/")
		i += 2
		var hunks []Hunk
		for i < len(lines) && strings.HasPrefix(lines[i], "@@") {
			h := Hunk{At: hunkStart(lines[i])}
			oldN, newN := hunkCounts(lines[i])
			i++
			for i < len(lines) && (oldN > 0 || newN > 0 || strings.HasPrefix(lines[i], `\`)) {
				l := lines[i]
				if err := hunkLine(&h, l, i); err != nil {
					return nil, err
				}
				switch {
				case l == "" || l[0] == ' ':
					oldN, newN = oldN-1, newN-1
				case l[0] == '-':
					oldN--
				case l[0] == '+':
					newN--
				}
				i++
			}
			if oldN != 0 || newN != 0 {
				return nil, fmt.Errorf("hunk of %s: line counts do not match its header", to)
			}
			hunks = append(hunks, h)
		}
		switch {
		case to == "":
			ops = append(ops, FileOp{Kind: OpDelete, Path: from})
		case from == "":
			var content []string
			for _, h := range hunks {
				content = append(content, h.New...)
			}
			ops = append(ops, FileOp{Kind: OpWrite, Path: to, Content: joinLines(content)})
		default:
			if from != to {
				ops = append(ops, FileOp{Kind: OpDelete, Path: from})
			}
			ops = append(ops, FileOp{Kind: OpPatch, Path: to, Hunks: hunks})
		}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("no file in the diff")
	}
	return ops, nil
}

// diffPath reads a ---/+++ path: "" for /dev/null, the git prefix dropped,
// a trailing tab-separated timestamp dropped.
func diffPath(s, prefix string) string {
	s, _, _ = strings.Cut(s, "\t")
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return ""
	}
	return strings.TrimPrefix(s, prefix)
}

// hunkStart is the old start line of "@@ -l,s +l,s @@".
func hunkStart(h string) int {
	f := strings.Fields(h)
	if len(f) < 2 || !strings.HasPrefix(f[1], "-") {
		return 0
	}
	l, _, _ := strings.Cut(f[1][1:], ",")
	n, _ := strconv.Atoi(l)
	return n
}

// hunkCounts are the old and new line counts of a unified hunk header
// (1 when a count is left out).
func hunkCounts(h string) (oldN, newN int) {
	f := strings.Fields(h)
	count := func(s string) int {
		_, c, ok := strings.Cut(s, ",")
		if !ok {
			return 1
		}
		n, _ := strconv.Atoi(c)
		return n
	}
	if len(f) < 3 {
		return 0, 0
	}
	return count(f[1]), count(f[2])
}

// joinLines joins lines into file content ending in a newline ("" for none).
func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}
