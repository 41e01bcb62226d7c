package events

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file mirrors the latest schema (schema/v1*/…) in code. The schema is the source of
// truth; the differential tests and FuzzDecode check that the two accept
// exactly the same messages.

// fkind is the shape of a data field.
type fkind uint8

const (
	fString  fkind = iota // string; minLen, maxLen (runes, 0 = no limit)
	fInt                  // integer in [min, 2^53-1]
	fBool                 // boolean
	fEnum                 // one of enum
	fStrings              // array of strings, each at least minLen runes
	fInts                 // array of integers in [min, 2^53-1]
	fTasks                // array of Task
	fObject               // object of spec obj
	fShare                // number in (0, 0.5] (a holdout share)
	fObjects              // array of objects of spec obj
)

// field describes one member of a data object.
type field struct {
	name     string
	kind     fkind
	required bool
	nullable bool // null is allowed too
	minLen   int
	maxLen   int
	min      int64
	enum     []string
	obj      *objSpec // fObject's members
}

// objSpec describes a data object; it rejects members it does not list.
type objSpec struct {
	fields []field
}

// index is lookup by a string.
func (s *objSpec) index(name string) int {
	for i := range s.fields {
		if s.fields[i].name == name {
			return i
		}
	}
	return -1
}

func (s *objSpec) lookup(key []byte) int {
	for i := range s.fields {
		if s.fields[i].name == string(key) {
			return i
		}
	}
	return -1
}

func req(f field) field { f.required = true; return f }

func str(name string) field                { return field{name: name, kind: fString} }
func nonEmpty(name string) field           { return field{name: name, kind: fString, minLen: 1} }
func integer(name string, min int64) field { return field{name: name, kind: fInt, min: min} }
func boolean(name string) field            { return field{name: name, kind: fBool} }
func enum(name string, values []string) field {
	return field{name: name, kind: fEnum, enum: values}
}
func nullable(f field) field { f.nullable = true; return f }
func object(name string, spec *objSpec) field {
	return field{name: name, kind: fObject, obj: spec}
}

var taskSpec = objSpec{fields: []field{
	req(integer("id", 1)),
	req(str("description")),
	req(nullable(nonEmpty("tool_hint"))),
	req(boolean("completed")),
	nonEmpty("task_type"),
}}

var dataSpecs = map[Type]*objSpec{
	SessionStarted: {fields: []field{
		req(str("goal")),
		req(nonEmpty("agent")),
		req(str("agent_version")),
		req(str("model")),
		req(field{name: "tools", kind: fStrings, minLen: 1}),
		str("task_type"),
		str("ruleset"),
		{name: "rules", kind: fStrings, minLen: 1},
		object("assignment", &assignmentSpec),
	}},
	PlanCreated: {fields: []field{
		req(field{name: "tasks", kind: fTasks}),
		req(enum("origin", origins)),
		str("parse_error"),
	}},
	HintStripped: {fields: []field{
		req(integer("task_id", 1)),
		req(nonEmpty("tool_hint")),
		req(enum("phase", phases)),
		req(enum("reason", stripReasons)),
		str("rule_id"),
	}},
	PlanUpdated: {fields: []field{
		req(integer("replan", 1)),
		req(enum("trigger", triggers)),
		str("reason"),
		req(field{name: "tasks", kind: fTasks}),
		req(field{name: "kept", kind: fInts, min: 1}),
		req(field{name: "dropped", kind: fTasks}),
		req(boolean("over_cap")),
		req(boolean("valid")),
		str("error"),
	}},
	ToolCalled: {fields: []field{
		req(nullable(integer("task_id", 1))),
		req(nonEmpty("tool")),
		req(nullable(nonEmpty("hint"))),
		req(boolean("ok")),
		str("error_kind"),
		{name: "error", kind: fString, maxLen: 4096},
		req(integer("duration_ms", 0)),
		req(boolean("control")),
		{name: "args_digest", kind: fString, minLen: 1, maxLen: 64},
	}},
	TaskCompleted: {fields: []field{
		req(integer("task_id", 1)),
		req(enum("completion", completions)),
		enum("reported", completions),
		req(integer("tool_calls", 0)),
		str("summary"),
	}},
	DepthLimitReached: {fields: []field{
		req(integer("task_id", 1)),
		req(integer("tool_calls", 0)),
		req(integer("limit", 1)),
	}},
	SessionEnded: {fields: []field{
		req(enum("outcome", outcomes)),
		req(integer("replans", 0)),
		req(integer("tool_calls", 0)),
		req(integer("failed_tool_calls", 0)),
		req(integer("iterations", 0)),
		req(integer("duration_ms", 0)),
		enum("feedback", feedbacks),
		object("usage", &usageSpec),
	}},
	ModelCalled: {fields: []field{
		req(nullable(integer("task_id", 1))),
		nonEmpty("model"),
		integer("input_tokens", 0),
		integer("output_tokens", 0),
		integer("cached_input_tokens", 0),
		req(integer("duration_ms", 0)),
	}},
}

// assignmentSpec is agent.session.started's assignment (v1.4).
var assignmentSpec = objSpec{fields: []field{
	req(nonEmpty("ruleset")),
	req(enum("arm", arms)),
	req(field{name: "holdout", kind: fShare}),
	req(enum("unit", units)),
	nonEmpty("unit_id"),
	{name: "rules", kind: fObjects, obj: &ruleArmSpec},
}}

// ruleArmSpec is an assignment's rules item (v1.4): a rule's own arm.
var ruleArmSpec = objSpec{fields: []field{
	req(nonEmpty("id")),
	req(enum("arm", arms)),
	req(field{name: "holdout", kind: fShare}),
}}

// usageSpec is agent.session.ended's usage (v1.2).
var usageSpec = objSpec{fields: []field{
	req(integer("model_calls", 0)),
	integer("input_tokens", 0),
	integer("output_tokens", 0),
	integer("cached_input_tokens", 0),
	req(integer("model_ms", 0)),
}}

// fixup records an integer written in a non-canonical form (1.0, 1e0, -0),
// to be rewritten in the stored data.
type fixup struct {
	node  int32
	value int64
}

// validator checks a parsed tree against a spec.
type validator struct {
	t      *tree
	fixups []fixup
	path   []seg // where the value being checked is
}

func (v *validator) reset(t *tree) {
	v.t, v.fixups, v.path = t, v.fixups[:0], v.path[:0]
}

func (v *validator) err(msg string) *Error {
	return &Error{Reason: ReasonSchema, Path: pointer(v.path), Msg: msg}
}

// errAt reports a problem with member name of the current object.
func (v *validator) errAt(name, msg string) *Error {
	return &Error{Reason: ReasonSchema, Path: pointer(v.path, name), Msg: msg}
}

// object checks object node i against spec.
func (v *validator) object(i int32, spec *objSpec) *Error {
	t := v.t
	nd := t.nodes[i]
	if nd.kind != kObject {
		return v.err("got " + nd.kind.String() + ", want object")
	}
	var seen uint32
	k := i + 1
	for m := int32(0); m < nd.n; m++ {
		key := t.text(k)
		fi := spec.lookup(key)
		if fi < 0 {
			return v.errAt(string(key), "unknown property")
		}
		seen |= 1 << fi
		f := &spec.fields[fi]
		v.path = append(v.path, seg{name: f.name})
		if err := v.field(k+1, f); err != nil {
			return err
		}
		v.path = v.path[:len(v.path)-1]
		k = t.nodes[k+1].next
	}
	for fi := range spec.fields {
		if f := &spec.fields[fi]; f.required && seen&(1<<fi) == 0 {
			msg := "missing required property"
			if f.nullable {
				msg += " (it may be null, but must be present)"
			}
			return v.errAt(f.name, msg)
		}
	}
	return nil
}

func (v *validator) field(i int32, f *field) *Error {
	t := v.t
	k := t.nodes[i].kind
	if f.nullable && k == kNull {
		return nil
	}
	switch f.kind {
	case fString:
		return v.str(i, f.minLen, f.maxLen, f.nullable)
	case fInt:
		return v.integer(i, f.min, f.nullable)
	case fBool:
		if k != kTrue && k != kFalse {
			return v.err("got " + k.String() + ", want boolean")
		}
		return nil
	case fEnum:
		if k == kString {
			s := t.text(i)
			for _, e := range f.enum {
				if string(s) == e {
					return nil
				}
			}
			return v.err(quote(s) + " is not one of " + strings.Join(f.enum, ", "))
		}
		return v.err("got " + k.String() + ", want one of " + strings.Join(f.enum, ", "))
	case fObject:
		return v.object(i, f.obj)
	case fShare:
		return v.share(i)
	}
	// Arrays.
	if k != kArray {
		return v.err("got " + k.String() + ", want array")
	}
	n := t.nodes[i].n
	e := i + 1
	v.path = append(v.path, seg{})
	for j := int32(0); j < n; j++ {
		v.path[len(v.path)-1].index = int(j)
		var err *Error
		switch f.kind {
		case fStrings:
			err = v.str(e, f.minLen, 0, false)
		case fInts:
			err = v.integer(e, f.min, false)
		case fTasks:
			err = v.object(e, &taskSpec)
		case fObjects:
			err = v.object(e, f.obj)
		}
		if err != nil {
			return err
		}
		e = t.nodes[e].next
	}
	v.path = v.path[:len(v.path)-1]
	return nil
}

func (v *validator) str(i int32, minLen, maxLen int, nullable bool) *Error {
	t := v.t
	if k := t.nodes[i].kind; k != kString {
		return v.err("got " + k.String() + ", want " + orNull("string", nullable))
	}
	s := t.text(i)
	if minLen > 0 && len(s) < minLen*utf8.UTFMax || maxLen > 0 && len(s) > maxLen {
		n := utf8.RuneCount(s)
		if n < minLen {
			if minLen == 1 {
				return v.err("empty string")
			}
			return v.err(fmt.Sprintf("string of %d characters, want at least %d", n, minLen))
		}
		if maxLen > 0 && n > maxLen {
			return v.err(fmt.Sprintf("string of %d characters, want at most %d", n, maxLen))
		}
	}
	return nil
}

func (v *validator) integer(i int32, min int64, nullable bool) *Error {
	t := v.t
	if k := t.nodes[i].kind; k != kNumber {
		return v.err("got " + k.String() + ", want " + orNull("integer", nullable))
	}
	s := t.raw(i)
	n, c, canonical := classifyInt(s)
	switch {
	case c == intNotInteger:
		return v.err(quote(s) + " is not an integer")
	case c == intNegative || c == intOK && n < min:
		return v.err(string(s) + " is less than the minimum " + strconv.FormatInt(min, 10))
	case c == intTooLarge:
		return v.err(quote(s) + " is greater than the maximum 9007199254740991")
	}
	if !canonical {
		v.fixups = append(v.fixups, fixup{node: i, value: n})
	}
	return nil
}

// share checks a number in (0, 0.5], exactly as written (no float
// rounding: 1e-400 is above 0).
func (v *validator) share(i int32) *Error {
	t := v.t
	if k := t.nodes[i].kind; k != kNumber {
		return v.err("got " + k.String() + ", want number")
	}
	s := t.raw(i)
	r, ok := new(big.Rat).SetString(string(s))
	switch {
	case !ok:
		return v.err(quote(s) + " is not a number")
	case r.Sign() <= 0:
		return v.err(string(s) + " is not greater than the exclusive minimum 0")
	case r.Cmp(big.NewRat(1, 2)) > 0:
		return v.err(string(s) + " is greater than the maximum 0.5")
	}
	return nil
}

func orNull(s string, nullable bool) string {
	if nullable {
		return s + " or null"
	}
	return s
}
