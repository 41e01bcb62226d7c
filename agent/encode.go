package agent

import (
	"encoding/json"

	"github.com/evosignal/evosignal/internal/events"
)

// encode returns what json.Marshal(e) returns, without its second pass
// over the bytes when it would change nothing. json.Marshal calls
// e.MarshalJSON and then compacts the result: it checks that it is valid
// JSON, drops whitespace between tokens and escapes <, >, &, U+2028 and
// U+2029. An event's own encoding is valid, compact and has none of those
// characters unless its Data (raw JSON from the caller) or an attribute
// brings them, so a single check of the bytes (plainJSON) replaces the
// compaction; anything else goes through json.Marshal, which then decides.
func encode(e *events.Event) ([]byte, error) {
	if b, err := e.MarshalJSON(); err == nil && plainJSON(b) {
		return b, nil
	}
	return json.Marshal(e)
}

// maxDepth bounds the nesting plainJSON follows; deeper values go to
// json.Marshal, whose own limit (10,000) is higher.
const maxDepth = 1000

// plainJSON reports whether b is one valid JSON value with no whitespace
// between tokens and no byte that json.Marshal escapes (<, >, &, and the
// UTF-8 of U+2028 and U+2029): the bytes json.Marshal's compaction leaves
// as they are.
func plainJSON(b []byte) bool {
	s := scan{b: b}
	return s.value() && s.i == len(b)
}

// scan walks JSON bytes; peek gives 0 past the end, which no valid JSON
// byte is.
type scan struct {
	b     []byte
	i     int
	depth int
}

func (s *scan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scan) value() bool {
	switch c := s.peek(); {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *scan) object() bool {
	s.i++ // {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	if s.peek() == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		if s.peek() != '"' || !s.str() || s.peek() != ':' {
			return false
		}
		s.i++
		if !s.value() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *scan) array() bool {
	s.i++ // [
	if s.depth++; s.depth > maxDepth {
		return false
	}
	if s.peek() == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !s.value() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *scan) str() bool {
	s.i++ // "
	for {
		for s.i < len(s.b) && plainByte[s.b[s.i]] {
			s.i++
		}
		switch c := s.peek(); {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			s.i++
			switch s.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				s.i++
				for range 4 {
					if !isHex(s.peek()) {
						return false
					}
					s.i++
				}
			default:
				return false
			}
		case c == 0xE2 && s.i+2 < len(s.b) && s.b[s.i+1] == 0x80 && s.b[s.i+2]&^1 == 0xA8:
			return false // U+2028 or U+2029, which json.Marshal escapes
		case c == 0xE2:
			s.i++
		default:
			return false // a control character (or the end), or <, >, & which json.Marshal escapes
		}
	}
}

// plainByte marks the bytes a string holds as they are: all but control
// characters, the quote and backslash, those json.Marshal escapes (<, >,
// &), and 0xE2, the first byte of U+2028 and U+2029, which str looks at.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = true
	}
	for _, c := range []byte{'"', '\\', '<', '>', '&', 0xE2} {
		t[c] = false
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (s *scan) number() bool {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more digits; false if there is none.
func (s *scan) digits() bool {
	start := s.i
	for c := s.peek(); '0' <= c && c <= '9'; c = s.peek() {
		s.i++
	}
	return s.i > start
}

func (s *scan) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}
