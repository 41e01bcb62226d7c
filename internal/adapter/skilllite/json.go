package skilllite

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/adapter/records"
	"github.com/evosignal/evosignal/internal/events"
)

// object is a JSON object whose members are read with type checks. path is
// where it sits in the line, for error messages; the zero value is an empty
// object at the top level.
type object struct {
	m    map[string]json.RawMessage
	path string
}

func parseObject(raw []byte, path string) (object, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return object{}, fmt.Errorf("%s: want an object", path)
	}
	return object{m: m, path: path}, nil
}

// at is the path of member key, e.g. data.tasks.
func (o object) at(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// get returns member key unless it is absent or null.
func (o object) get(key string) (json.RawMessage, bool) {
	raw, ok := o.m[key]
	if !ok || records.JSONKind(raw) == "null" {
		return nil, false
	}
	return raw, true
}

func (o object) str(key string) (string, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return "", false, nil
	}
	var s string
	if records.JSONKind(raw) != "string" || json.Unmarshal(raw, &s) != nil {
		return "", false, fmt.Errorf("%s: want a string, got %s", o.at(key), records.JSONKind(raw))
	}
	return s, true, nil
}

// firstStr returns the first of keys present as a string.
func (o object) firstStr(keys ...string) (string, bool, error) {
	for _, k := range keys {
		s, ok, err := o.str(k)
		if err != nil || ok {
			return s, ok, err
		}
	}
	return "", false, nil
}

// text returns the first of keys present as text: a string as is, any other
// JSON value as its JSON; "" when none is present.
func (o object) text(keys ...string) string {
	for _, k := range keys {
		raw, ok := o.get(k)
		if !ok {
			continue
		}
		var s string
		if records.JSONKind(raw) == "string" && json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	return ""
}

func (o object) boolean(key string) (bool, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return false, false, nil
	}
	switch string(raw) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, fmt.Errorf("%s: want a boolean, got %s", o.at(key), records.JSONKind(raw))
}

func (o object) obj(key string) (object, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return object{path: o.at(key)}, false, nil
	}
	if records.JSONKind(raw) != "object" {
		return object{}, false, fmt.Errorf("%s: want an object, got %s", o.at(key), records.JSONKind(raw))
	}
	obj, err := parseObject(raw, o.at(key))
	return obj, err == nil, err
}

// maxInt is the largest integer of the contract (2^53-1).
const maxInt = 1<<53 - 1

// integer reads member key as an integer in [min, 2^53-1]; 3.0 and 3e0
// count as 3, as in the contract.
func (o object) integer(key string, min int64) (int64, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		return 0, false, nil
	}
	bad := fmt.Errorf("%s: want an integer ≥ %d, got %s", o.at(key), min, abbrev(raw))
	if records.JSONKind(raw) != "number" {
		return 0, false, bad
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(raw), 64)
		if ferr != nil || f != math.Trunc(f) || f < math.MinInt64 || f > maxInt {
			return 0, false, bad
		}
		n = int64(f)
	}
	if n < min || n > maxInt {
		return 0, false, bad
	}
	return n, true, nil
}

func (o object) id(key string) (int64, bool, error)    { return o.integer(key, 1) }
func (o object) count(key string) (int64, bool, error) { return o.integer(key, 0) }

// tasks reads member key as a task list. Ids must be unique.
func (o object) tasks(key string) ([]events.Task, error) {
	raw, ok := o.get(key)
	if !ok {
		return nil, fmt.Errorf("%s: missing", o.at(key))
	}
	var elems []json.RawMessage
	if records.JSONKind(raw) != "array" || json.Unmarshal(raw, &elems) != nil {
		return nil, fmt.Errorf("%s: want an array, got %s", o.at(key), records.JSONKind(raw))
	}
	tasks := make([]events.Task, 0, len(elems))
	seen := make(map[int64]bool, len(elems))
	for i, e := range elems {
		path := fmt.Sprintf("%s[%d]", o.at(key), i)
		if records.JSONKind(e) != "object" {
			return nil, fmt.Errorf("%s: want an object, got %s", path, records.JSONKind(e))
		}
		t, err := parseObject(e, path)
		if err != nil {
			return nil, err
		}
		var task events.Task
		if task.ID, ok, err = t.id("id"); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("%s: missing", t.at("id"))
		}
		if seen[task.ID] {
			return nil, fmt.Errorf("%s: task id %d appears twice", t.at("id"), task.ID)
		}
		seen[task.ID] = true
		if task.Description, _, err = t.str("description"); err != nil {
			return nil, err
		}
		hint, _, err := t.str("tool_hint")
		if err != nil {
			return nil, err
		}
		if hint != "" {
			task.ToolHint = &hint
		}
		if task.Completed, _, err = t.boolean("completed"); err != nil {
			return nil, err
		}
		tasks = append(tasks, task)
	}
	return tasks, nil
}

// timestamp reads the line's timestamp, if it has one.
func (o object) timestamp() (time.Time, error) {
	for _, k := range []string{"ts", "timestamp", "time"} {
		raw, ok := o.get(k)
		if !ok {
			continue
		}
		var at time.Time
		switch records.JSONKind(raw) {
		case "string":
			s, _, _ := o.str(k)
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return time.Time{}, fmt.Errorf("%s: not an RFC 3339 time: %q", k, s)
			}
			at = t
		case "number":
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil || f < 0 {
				return time.Time{}, fmt.Errorf("%s: not a Unix time: %s", k, raw)
			}
			if f >= 1e12 {
				f /= 1000 // milliseconds
			}
			sec, frac := math.Modf(f)
			at = time.Unix(int64(sec), int64(frac*1e9))
		default:
			return time.Time{}, fmt.Errorf("%s: want a string or a number, got %s", k, records.JSONKind(raw))
		}
		if y := at.UTC().Year(); y < 1 || y > 9999 {
			return time.Time{}, fmt.Errorf("%s: year %d out of range", k, y)
		}
		return at, nil
	}
	return time.Time{}, nil
}

// abbrev shows a JSON value in an error message, cut to 40 bytes.
func abbrev(raw []byte) string {
	s := string(raw)
	if len(s) > 40 {
		s = strings.ToValidUTF8(s[:40], "") + "…"
	}
	return s
}
