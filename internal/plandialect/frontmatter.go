package plandialect

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// frontTodos reads the todos key of YAML front matter, as Cursor writes its
// saved plans:
//
//	todos:
//	  - id: setup-schema
//	    content: Create the database schema
//	    status: pending
//
// It reads that shape only — a block sequence of mappings whose content and
// status are single-line scalars (plain, 'single' or "double" quoted) — and
// fails with an *ArgsError on anything else it would have to guess at. Other
// keys of an item (id, dependencies, …) are skipped. found is false when the
// front matter has no top-level todos key.
func frontTodos(front string) (tasks []Task, found bool, err error) {
	lines := strings.Split(front, "\n")
	start := -1
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "todos:"); ok {
			v := strings.TrimSpace(stripComment(rest))
			switch v {
			case "":
			case "[]":
				return []Task{}, true, nil
			default:
				return nil, true, mdFail("/todos", "want a block list of todos, got %q", v)
			}
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil, false, nil
	}
	tasks = []Task{}
	type item struct {
		content, status string
		hasContent      bool
		hasStatus       bool
	}
	var items []item
	itemIndent, keyIndent := -1, -1
	for _, l := range lines[start:] {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		trimmed := l[indent:]
		if indent == 0 && !strings.HasPrefix(trimmed, "- ") && trimmed != "-" {
			break // the next top-level key
		}
		if itemIndent < 0 {
			if !strings.HasPrefix(trimmed, "- ") {
				return nil, true, mdFail("/todos", "want a list item, got %q", trimmed)
			}
			itemIndent = indent
		}
		path := fmt.Sprintf("/todos/%d", max(len(items)-1, 0))
		var kv string
		switch {
		case indent == itemIndent && strings.HasPrefix(trimmed, "- "):
			items = append(items, item{})
			path = fmt.Sprintf("/todos/%d", len(items)-1)
			kv = trimmed[2:]
			keyIndent = indent + 2 + len(kv) - len(strings.TrimLeft(kv, " "))
			kv = strings.TrimLeft(kv, " ")
		case indent < itemIndent:
			return nil, true, mdFail(path, "unexpected indentation")
		case indent == keyIndent:
			kv = trimmed
		case indent > keyIndent:
			continue // a nested value of a key skipped below
		default:
			return nil, true, mdFail(path, "unexpected indentation")
		}
		key, val, ok := strings.Cut(kv, ":")
		if !ok || strings.ContainsAny(key, " \t\"'") {
			return nil, true, mdFail(path, "want key: value, got %q", kv)
		}
		if key != "content" && key != "status" {
			continue
		}
		s, err := scalar(val, path+"/"+key)
		if err != nil {
			return nil, true, err
		}
		it := &items[len(items)-1]
		if key == "content" {
			it.content, it.hasContent = s, true
		} else {
			it.status, it.hasStatus = s, true
		}
	}
	for i, it := range items {
		path := fmt.Sprintf("/todos/%d", i)
		if !it.hasContent {
			return nil, true, mdFail(path+"/content", "missing")
		}
		st := Status(it.status)
		switch {
		case !it.hasStatus:
			st = Pending
		case it.status == "cancelled":
			continue
		case !st.Valid():
			return nil, true, mdFail(path+"/status", "%q is not pending, in_progress, completed or cancelled", it.status)
		}
		if d := strings.TrimSpace(it.content); d != "" {
			tasks = append(tasks, Task{Description: d, Status: st})
		}
	}
	return tasks, true, nil
}

// scalar reads a single-line YAML scalar.
func scalar(raw, path string) (string, error) {
	v := strings.TrimSpace(raw)
	switch {
	case v == "" || v[0] == '|' || v[0] == '>' || v[0] == '[' || v[0] == '{' || v[0] == '&' || v[0] == '*' || v[0] == '!':
		return "", mdFail(path, "only single-line scalars are read, got %q", v)
	case v[0] == '"':
		end := closingQuote(v)
		if end < 0 || strings.TrimSpace(stripComment(v[end+1:])) != "" {
			return "", mdFail(path, "unterminated or trailing text after %q", v)
		}
		var s string
		if err := json.Unmarshal([]byte(v[:end+1]), &s); err != nil {
			if u, uerr := strconv.Unquote(v[:end+1]); uerr == nil {
				return u, nil
			}
			return "", mdFail(path, "double-quoted scalar: %v", err)
		}
		return s, nil
	case v[0] == '\'':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			if v[i] != '\'' {
				b.WriteByte(v[i])
				continue
			}
			if i+1 < len(v) && v[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			if strings.TrimSpace(stripComment(v[i+1:])) != "" {
				return "", mdFail(path, "trailing text after %q", v[:i+1])
			}
			return b.String(), nil
		}
		return "", mdFail(path, "unterminated single-quoted scalar")
	}
	return strings.TrimSpace(stripComment(v)), nil
}

// closingQuote returns the index of the quote closing a double-quoted
// scalar that starts at v[0], or -1.
func closingQuote(v string) int {
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// stripComment drops a plain scalar's trailing comment (" #…").
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	if strings.HasPrefix(s, "#") {
		return ""
	}
	return s
}

func mdFail(path, format string, v ...any) error {
	return &ArgsError{Dialect: Markdown, Path: path, Msg: fmt.Sprintf(format, v...)}
}
