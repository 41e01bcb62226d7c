package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// ContentHash returns the hex SHA-256 of e's canonical form, which tells
// whether two events under one (source, id) are the same event (a re-send)
// or two different ones. The canonical form is the event as MarshalJSON
// writes it, with its time cut to whole microseconds (the precision the
// database keeps, so that a stored event and its re-send hash alike),
// written again with every object's members sorted by name (byte order),
// no white space, strings escaped as MarshalJSON escapes them, and numbers
// as written (Decode has already rewritten integers as plain digits).
//
// So the hash does not depend on member order, white space, string escapes
// or the time's offset; it does depend on every attribute, every extension
// and every value in data.
func (e *Event) ContentHash() (string, error) {
	m, err := e.canonicalMembers()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonicalObject(m))
	return hex.EncodeToString(sum[:]), nil
}

// SameContent reports whether a and b have the same content, as their
// ContentHash would tell. A re-send usually arrives spelled as it was
// stored (data byte for byte, the same attributes and extension values):
// then it says so without hashing, because ContentHash depends on an event
// only through its fields and its time to the microsecond. Otherwise it
// compares the hashes.
func SameContent(a, b *Event) (bool, error) {
	if sameFields(a, b) {
		return true, nil
	}
	ha, err := a.ContentHash()
	if err != nil {
		return false, err
	}
	hb, err := b.ContentHash()
	if err != nil {
		return false, err
	}
	return ha == hb, nil
}

// sameFields reports whether a and b hold equal fields, data as bytes and
// time to the microsecond; false says nothing.
func sameFields(a, b *Event) bool {
	if !a.Time.Truncate(time.Microsecond).Equal(b.Time.Truncate(time.Microsecond)) {
		return false
	}
	ca, cb := *a, *b
	ca.Time, cb.Time = time.Time{}, time.Time{}
	return reflect.DeepEqual(ca, cb)
}

// ContentDiff returns the names of the top-level members (attributes,
// extensions, data) whose canonical forms differ between a and b, sorted;
// none when ContentHash of a and b agree.
func ContentDiff(a, b *Event) ([]string, error) {
	ma, err := a.canonicalMembers()
	if err != nil {
		return nil, err
	}
	mb, err := b.canonicalMembers()
	if err != nil {
		return nil, err
	}
	var out []string
	for k, v := range ma {
		if w, ok := mb[k]; !ok || !bytes.Equal(v, w) {
			out = append(out, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// canonicalMembers returns the canonical form of each top-level member of
// e's encoding.
func (e *Event) canonicalMembers() (map[string][]byte, error) {
	// The time is written here, not by MarshalJSON, which refuses years
	// outside 0–9999 (an older database may hold such an event).
	c := *e
	c.Time = time.Time{}
	raw, err := c.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("canonical form of event %s: %w", e.ID, err)
	}
	var out map[string][]byte
	var t tree
	if perr := t.parse(raw); perr == nil && t.nodes[0].kind == kObject {
		out = t.members()
	} else if out, err = canonicalMembersOf(raw); err != nil {
		// What Decode refuses and encoding/json reads (data with a
		// duplicate member name, stored by an older version, say).
		return nil, fmt.Errorf("canonical form of event %s: %w", e.ID, err)
	}
	out[attrTime] = appendString(nil, e.Time.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano))
	return out, nil
}

// members returns the canonical form of each member of the object t holds
// at its root, as canonicalMembersOf does for what it decodes, in a fifth
// to a half of the time (BenchmarkSameContent, other-spelling).
func (t *tree) members() map[string][]byte {
	root := &t.nodes[0]
	out := make(map[string][]byte, root.n)
	for j, k := int32(0), int32(1); j < root.n; j++ {
		out[string(t.text(k))] = t.appendCanonical(nil, k+1)
		k = t.nodes[k+1].next
	}
	return out
}

// appendCanonical appends the canonical form of node i: objects' members
// sorted by name, no white space, strings escaped by appendString, numbers
// as written.
func (t *tree) appendCanonical(b []byte, i int32) []byte {
	nd := t.nodes[i]
	switch nd.kind {
	case kNull:
		return append(b, "null"...)
	case kFalse:
		return append(b, "false"...)
	case kTrue:
		return append(b, "true"...)
	case kNumber:
		return append(b, t.src[nd.off:nd.end]...)
	case kString:
		return appendString(b, string(t.text(i)))
	case kArray:
		b = append(b, '[')
		for j, c := int32(0), i+1; j < nd.n; j, c = j+1, t.nodes[c].next {
			if j > 0 {
				b = append(b, ',')
			}
			b = t.appendCanonical(b, c)
		}
		return append(b, ']')
	}
	type member struct {
		name []byte
		val  int32
	}
	ms := make([]member, 0, nd.n)
	for j, k := int32(0), i+1; j < nd.n; j++ {
		ms = append(ms, member{t.text(k), k + 1})
		k = t.nodes[k+1].next
	}
	slices.SortFunc(ms, func(x, y member) int { return bytes.Compare(x.name, y.name) })
	b = append(b, '{')
	for j, m := range ms {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendString(b, string(m.name))
		b = append(b, ':')
		b = t.appendCanonical(b, m.val)
	}
	return append(b, '}')
}

// canonicalMembersOf returns the canonical form of each member of the JSON
// object raw, decoded by encoding/json.
func canonicalMembersOf(raw []byte) (map[string][]byte, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		var err error
		if out[k], err = appendCanonical(nil, v); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return out, nil
}

func canonicalObject(m map[string][]byte) []byte {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	b := []byte{'{'}
	for i, k := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = append(b, m[k]...)
	}
	return append(b, '}')
}

func appendCanonical(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return appendString(b, v), nil
	case json.Number:
		return append(b, v...), nil
	case []any:
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, x); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		m := make(map[string][]byte, len(v))
		for k, x := range v {
			c, err := appendCanonical(nil, x)
			if err != nil {
				return nil, err
			}
			m[k] = c
		}
		return append(b, canonicalObject(m)...), nil
	}
	return nil, fmt.Errorf("unexpected JSON value of type %T", v)
}
