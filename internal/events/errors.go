package events

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reason classifies why Decode rejected a message.
type Reason string

// Reasons, as reported in Error.Reason.
const (
	// ReasonMalformed: not a single JSON object in I-JSON form (RFC 7493):
	// bad syntax, trailing data, invalid UTF-8, a lone surrogate escape, a
	// duplicate member name, or a top-level value that is not an object.
	ReasonMalformed Reason = "malformed_json"
	// ReasonUnknownType: the envelope is valid but type is not a v1 type.
	ReasonUnknownType Reason = "unknown_type"
	// ReasonSchema: the JSON is well formed but violates the v1 schema.
	ReasonSchema Reason = "schema_violation"
)

// Sentinel errors. Decode, Payload, New and Event.UnmarshalJSON return an
// *Error (possibly wrapped); errors.Is matches it against the sentinel of its
// Reason, one to one.
var (
	// ErrMalformed matches an *Error with ReasonMalformed.
	ErrMalformed = errors.New("malformed event json")
	// ErrUnknownType matches an *Error with ReasonUnknownType.
	ErrUnknownType = errors.New("unknown event type")
	// ErrInvalid matches an *Error with ReasonSchema.
	ErrInvalid = errors.New("event violates schema")
)

// Error describes why a message is not a valid v1 event.
type Error struct {
	Reason Reason
	// Path is the JSON pointer (RFC 6901) of the offending value, such as
	// /data/tasks/2/tool_hint; for a missing member, the pointer it would
	// have. Empty when the message as a whole is at fault.
	Path string
	// Msg says what is wrong, in one line.
	Msg string
}

// Error returns e.g. `schema_violation at /data/origin: "foo" is not one of
// model, fallback, empty`.
func (e *Error) Error() string {
	if e.Path == "" {
		return string(e.Reason) + ": " + e.Msg
	}
	return string(e.Reason) + " at " + e.Path + ": " + e.Msg
}

// Is reports whether target is the sentinel of e.Reason.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrMalformed:
		return e.Reason == ReasonMalformed
	case ErrUnknownType:
		return e.Reason == ReasonUnknownType
	case ErrInvalid:
		return e.Reason == ReasonSchema
	}
	return false
}

// seg is one step of a JSON pointer: a member name, or an array index when
// name is "".
type seg struct {
	name  string
	index int
}

// pointer renders segs, then extra member names, as a JSON pointer.
func pointer(segs []seg, extra ...string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		if s.name != "" {
			b.WriteString(escapePointer(s.name))
		} else {
			b.WriteString(strconv.Itoa(s.index))
		}
	}
	for _, name := range extra {
		b.WriteByte('/')
		b.WriteString(escapePointer(name))
	}
	return b.String()
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func malformed(msg string) *Error {
	return &Error{Reason: ReasonMalformed, Msg: msg}
}

// quote returns s as a Go-quoted string, shortened for an error message.
func quote(s []byte) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(string(s[:cut])) + "…"
	}
	return strconv.Quote(string(s))
}
