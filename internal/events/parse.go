package events

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// This file is a small JSON parser that builds a flat tree of the message.
// It accepts exactly the I-JSON texts (RFC 7493) that encoding/json accepts:
// RFC 8259 syntax, valid UTF-8, no lone surrogate escapes, no duplicate
// member names. encoding/json (and so the schema validator fed by it) would
// silently repair or pick among the last three; we reject them as
// malformed so that every consumer of a stored event sees the same values.

// kind is the JSON type of a node.
type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNumber
	kString
	kArray
	kObject
)

func (k kind) String() string {
	switch k {
	case kNull:
		return "null"
	case kFalse, kTrue:
		return "boolean"
	case kNumber:
		return "number"
	case kString:
		return "string"
	case kArray:
		return "array"
	}
	return "object"
}

// node is one JSON value. Containers are followed by their contents in
// document order: an array by its elements, an object by key, value, key,
// value. next skips a node's subtree.
type node struct {
	off, end   int32 // raw text; for strings the bytes between the quotes
	next       int32 // index of the node after this subtree
	n          int32 // containers: number of elements or members
	doff, dlen int32 // strings with escapes: the decoded text in tree.buf
	kind       kind
	esc        bool
}

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

// tree is a parsed message. It is reused through a sync.Pool.
type tree struct {
	src   []byte
	pos   int
	nodes []node
	buf   []byte // decoded text of strings with escapes
}

// parse parses src, which must hold one JSON value and nothing but white
// space around it.
func (t *tree) parse(src []byte) *Error {
	t.src, t.pos, t.nodes, t.buf = src, 0, t.nodes[:0], t.buf[:0]
	if len(src) >= math.MaxInt32 {
		return malformed("message too large")
	}
	if !utf8.Valid(src) {
		return malformed("invalid UTF-8")
	}
	t.skipSpace()
	if err := t.value(0); err != nil {
		return err
	}
	t.skipSpace()
	if t.pos != len(src) {
		return t.badChar("after top-level value")
	}
	return nil
}

func (t *tree) skipSpace() {
	for t.pos < len(t.src) {
		switch t.src[t.pos] {
		case ' ', '\t', '\n', '\r':
			t.pos++
		default:
			return
		}
	}
}

func (t *tree) badChar(context string) *Error {
	if t.pos >= len(t.src) {
		return malformed("unexpected end of JSON input")
	}
	r, _ := utf8.DecodeRune(t.src[t.pos:])
	return malformed(fmt.Sprintf("invalid character %q %s at offset %d", r, context, t.pos))
}

func (t *tree) add(k kind, off int) int32 {
	t.nodes = append(t.nodes, node{kind: k, off: int32(off)})
	return int32(len(t.nodes) - 1)
}

func (t *tree) finish(i int32) {
	t.nodes[i].end = int32(t.pos)
	t.nodes[i].next = int32(len(t.nodes))
}

func (t *tree) value(depth int) *Error {
	if t.pos >= len(t.src) {
		return malformed("unexpected end of JSON input")
	}
	switch c := t.src[t.pos]; c {
	case '{':
		return t.object(depth + 1)
	case '[':
		return t.array(depth + 1)
	case '"':
		return t.str()
	case 't':
		return t.literal("true", kTrue)
	case 'f':
		return t.literal("false", kFalse)
	case 'n':
		return t.literal("null", kNull)
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return t.number()
		}
		return t.badChar("looking for beginning of value")
	}
}

func (t *tree) literal(lit string, k kind) *Error {
	i := t.add(k, t.pos)
	for j := 0; j < len(lit); j++ {
		if t.pos >= len(t.src) || t.src[t.pos] != lit[j] {
			return t.badChar("in literal " + lit)
		}
		t.pos++
	}
	t.finish(i)
	return nil
}

func (t *tree) object(depth int) *Error {
	i, empty, err := t.open(kObject, '}', depth)
	if err != nil || empty {
		return err
	}
	n := int32(0)
	for done := false; !done; {
		if t.pos >= len(t.src) || t.src[t.pos] != '"' {
			return t.badChar("looking for beginning of object key string")
		}
		if err := t.str(); err != nil {
			return err
		}
		t.skipSpace()
		if t.pos >= len(t.src) || t.src[t.pos] != ':' {
			return t.badChar("after object key")
		}
		t.pos++
		t.skipSpace()
		if err := t.value(depth); err != nil {
			return err
		}
		n++
		if done, err = t.next('}', "after object key:value pair"); err != nil {
			return err
		}
	}
	t.nodes[i].n = n
	t.finish(i)
	if n > 1 {
		return t.checkDuplicates(i)
	}
	return nil
}

func (t *tree) array(depth int) *Error {
	i, empty, err := t.open(kArray, ']', depth)
	if err != nil || empty {
		return err
	}
	n := int32(0)
	for done := false; !done; {
		if err := t.value(depth); err != nil {
			return err
		}
		n++
		if done, err = t.next(']', "after array element"); err != nil {
			return err
		}
	}
	t.nodes[i].n = n
	t.finish(i)
	return nil
}

// open starts a container of kind k (an object or an array, at depth) at
// its opening bracket. empty reports that it closed right away (close,
// after white space), and then the node is finished.
func (t *tree) open(k kind, close byte, depth int) (i int32, empty bool, err *Error) {
	if depth > maxDepth {
		return 0, false, malformed("exceeded max nesting depth")
	}
	i = t.add(k, t.pos)
	t.pos++ // { or [
	t.skipSpace()
	if t.pos < len(t.src) && t.src[t.pos] == close {
		t.pos++
		t.finish(i)
		return i, true, nil
	}
	return i, false, nil
}

// next reads what follows a member or an element of a container: done at
// its close, else a comma (after names the place of a wrong character),
// and the white space around either.
func (t *tree) next(close byte, after string) (done bool, err *Error) {
	t.skipSpace()
	if t.pos >= len(t.src) {
		return false, malformed("unexpected end of JSON input")
	}
	switch t.src[t.pos] {
	case close:
		t.pos++
		return true, nil
	case ',':
		t.pos++
		t.skipSpace()
		return false, nil
	}
	return false, t.badChar(after)
}

// checkDuplicates rejects an object with two members of the same (decoded)
// name.
func (t *tree) checkDuplicates(obj int32) *Error {
	n := t.nodes[obj].n
	if n <= 16 {
		var keys [16][]byte
		k := obj + 1
		for m := int32(0); m < n; m++ {
			kb := t.text(k)
			for _, prev := range keys[:m] {
				if len(prev) == len(kb) && string(prev) == string(kb) {
					return malformed("duplicate member name " + quote(kb))
				}
			}
			keys[m] = kb
			k = t.nodes[k+1].next
		}
		return nil
	}
	seen := make(map[string]struct{}, n)
	for k, m := obj+1, int32(0); m < n; k, m = t.nodes[k+1].next, m+1 {
		kb := t.text(k)
		if _, dup := seen[string(kb)]; dup {
			return malformed("duplicate member name " + quote(kb))
		}
		seen[string(kb)] = struct{}{}
	}
	return nil
}

// str parses a string starting at its opening quote.
func (t *tree) str() *Error {
	start := t.pos + 1
	i := start
	// Skip plain bytes eight at a time: none is a quote, a backslash or
	// below 0x20.
	for ; i+8 <= len(t.src); i += 8 {
		x := binary.LittleEndian.Uint64(t.src[i:])
		if hasZeroByte(x^(lsb*'"'))|hasZeroByte(x^(lsb*'\\'))|hasLessByte(x, 0x20) != 0 {
			break
		}
	}
	for ; i < len(t.src); i++ {
		c := t.src[i]
		if c == '"' {
			t.nodes = append(t.nodes, node{kind: kString, off: int32(start), end: int32(i), next: int32(len(t.nodes) + 1)})
			t.pos = i + 1
			return nil
		}
		if c == '\\' {
			return t.strEscaped(start, i)
		}
		if c < 0x20 {
			t.pos = i
			return t.badChar("in string literal")
		}
	}
	return malformed("unexpected end of JSON input")
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasZeroByte is non-zero if a byte of x is zero.
func hasZeroByte(x uint64) uint64 { return (x - lsb) &^ x & msb }

// hasLessByte is non-zero if a byte of x is below n (n <= 128).
func hasLessByte(x uint64, n byte) uint64 { return (x - lsb*uint64(n)) &^ x & msb }

// strEscaped continues str at the first backslash, decoding into t.buf.
func (t *tree) strEscaped(start, i int) *Error {
	doff := len(t.buf)
	t.buf = append(t.buf, t.src[start:i]...)
	for i < len(t.src) {
		c := t.src[i]
		switch {
		case c == '"':
			t.nodes = append(t.nodes, node{
				kind: kString, esc: true, off: int32(start), end: int32(i),
				doff: int32(doff), dlen: int32(len(t.buf) - doff), next: int32(len(t.nodes) + 1),
			})
			t.pos = i + 1
			return nil
		case c < 0x20:
			t.pos = i
			return t.badChar("in string literal")
		case c != '\\':
			t.buf = append(t.buf, c)
			i++
			continue
		}
		if i+1 >= len(t.src) {
			return malformed("unexpected end of JSON input")
		}
		switch e := t.src[i+1]; e {
		case '"', '\\', '/':
			t.buf = append(t.buf, e)
		case 'b':
			t.buf = append(t.buf, '\b')
		case 'f':
			t.buf = append(t.buf, '\f')
		case 'n':
			t.buf = append(t.buf, '\n')
		case 'r':
			t.buf = append(t.buf, '\r')
		case 't':
			t.buf = append(t.buf, '\t')
		case 'u':
			r, err := t.hex4(i + 2)
			if err != nil {
				return err
			}
			i += 6
			switch {
			case r >= 0xD800 && r < 0xDC00:
				if i+1 < len(t.src) && t.src[i] == '\\' && t.src[i+1] == 'u' {
					lo, err := t.hex4(i + 2)
					if err != nil {
						return err
					}
					if lo >= 0xDC00 && lo < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
						i += 6
						t.buf = utf8.AppendRune(t.buf, r)
						continue
					}
				}
				return malformed(fmt.Sprintf("lone surrogate escape \\u%04x at offset %d", r, i-6))
			case r >= 0xDC00 && r < 0xE000:
				return malformed(fmt.Sprintf("lone surrogate escape \\u%04x at offset %d", r, i-6))
			}
			t.buf = utf8.AppendRune(t.buf, r)
			continue
		default:
			t.pos = i + 1
			return t.badChar("in string escape code")
		}
		i += 2
	}
	return malformed("unexpected end of JSON input")
}

func (t *tree) hex4(i int) (rune, *Error) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(t.src) {
			return 0, malformed("unexpected end of JSON input")
		}
		c := t.src[j]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			t.pos = j
			return 0, t.badChar(`in \u hexadecimal character escape`)
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// number checks the RFC 8259 number grammar; the value is read later, by
// whoever needs it.
func (t *tree) number() *Error {
	s, i := t.src, t.pos
	start := i
	if s[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		digits()
	default:
		t.pos = i
		return t.badChar("in numeric literal")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			t.pos = i
			return t.badChar("after decimal point in numeric literal")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			t.pos = i
			return t.badChar("in exponent of numeric literal")
		}
	}
	t.nodes = append(t.nodes, node{kind: kNumber, off: int32(start), end: int32(i), next: int32(len(t.nodes) + 1)})
	t.pos = i
	return nil
}

// text returns the decoded text of string node i.
func (t *tree) text(i int32) []byte {
	n := &t.nodes[i]
	if n.esc {
		return t.buf[n.doff : n.doff+n.dlen]
	}
	return t.src[n.off:n.end]
}

// raw returns the source text of node i (without quotes for a string).
func (t *tree) raw(i int32) []byte {
	n := &t.nodes[i]
	return t.src[n.off:n.end]
}
