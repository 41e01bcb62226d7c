package plandialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// args reads one call's JSON arguments for a dialect, reporting every
// problem as an *ArgsError with the member's JSON pointer.
type args struct{ dialect string }

func (a args) fail(path, format string, v ...any) error {
	return &ArgsError{Dialect: a.dialect, Path: path, Msg: fmt.Sprintf(format, v...)}
}

// kind names the JSON type of raw by its first byte (raw is valid JSON).
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func isNull(raw json.RawMessage) bool { return kind(raw) == "null" }

// root checks that b is one JSON object and returns its members.
func (a args) root(b []byte) (map[string]json.RawMessage, error) {
	if !json.Valid(b) {
		return nil, a.fail("", "not valid JSON")
	}
	return a.object(b, "")
}

func (a args) object(raw json.RawMessage, path string) (map[string]json.RawMessage, error) {
	if k := kind(raw); k != "an object" {
		return nil, a.fail(path, "want an object, got %s", k)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, a.fail(path, "%v", err)
	}
	return m, nil
}

// only rejects members of m other than names (for formats whose agent
// refuses unknown members).
func (a args) only(m map[string]json.RawMessage, path string, names ...string) error {
	var extra []string
	for k := range m {
		if !slices.Contains(names, k) {
			extra = append(extra, strconv.Quote(k))
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return a.fail(path, "unknown member %s", extra[0])
	}
	return nil
}

func (a args) array(m map[string]json.RawMessage, name, path string) ([]json.RawMessage, error) {
	raw, ok := m[name]
	p := path + "/" + name
	if !ok {
		return nil, a.fail(p, "missing")
	}
	if k := kind(raw); k != "an array" {
		return nil, a.fail(p, "want an array, got %s", k)
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, a.fail(p, "%v", err)
	}
	return out, nil
}

// str reads a string member; with optional, an absent or null member is "".
func (a args) str(m map[string]json.RawMessage, name, path string, optional bool) (string, error) {
	raw, ok := m[name]
	p := path + "/" + name
	if !ok || (optional && isNull(raw)) {
		if optional {
			return "", nil
		}
		return "", a.fail(p, "missing")
	}
	if k := kind(raw); k != "a string" {
		return "", a.fail(p, "want a string, got %s", k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", a.fail(p, "%v", err)
	}
	return s, nil
}

// boolean reads an optional boolean member; absent is false.
func (a args) boolean(m map[string]json.RawMessage, name, path string) (bool, error) {
	raw, ok := m[name]
	if !ok {
		return false, nil
	}
	switch bytes.TrimSpace(raw)[0] {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	}
	return false, a.fail(path+"/"+name, "want a boolean, got %s", kind(raw))
}

// maxID is the largest id the wire contract carries (2^53−1).
const maxID = 1<<53 - 1

// number reads a required number member and returns it as an id when it is
// an integer in 1..2^53−1, else 0.
func (a args) number(m map[string]json.RawMessage, name, path string) (int64, error) {
	raw, ok := m[name]
	p := path + "/" + name
	if !ok {
		return 0, a.fail(p, "missing")
	}
	if k := kind(raw); k != "a number" {
		return 0, a.fail(p, "want a number, got %s", k)
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || f != math.Trunc(f) || f < 1 || f > maxID {
		return 0, nil
	}
	return int64(f), nil
}

// status reads a required status member.
func (a args) status(m map[string]json.RawMessage, name, path string) (Status, error) {
	s, err := a.str(m, name, path, false)
	if err != nil {
		return "", err
	}
	if st := Status(s); st.Valid() {
		return st, nil
	}
	return "", a.fail(path+"/"+name, "%q is not pending, in_progress or completed", s)
}
