package sqlservice

import (
	"fmt"
	"strconv"
	"strings"
)

// Type is a DuckDB column type as the Go driver names it
// (ColumnTypeDatabaseTypeName): a base name such as INTEGER, TIMESTAMPTZ or
// JSON, DECIMAL(w,s), T[] (LIST), T[n] (ARRAY), STRUCT("name" T, …),
// MAP(K, V) and UNION("name" T, …). Results carry these strings (the JSON
// format's "types", the Arrow fields' "duckdb.type" metadata), and both ends
// of the service derive the Arrow layout and the Go values from them.
type Type struct {
	Name   string  // BOOLEAN, …, DECIMAL, LIST, ARRAY, STRUCT, MAP, UNION, JSON, …
	Width  int     // DECIMAL
	Scale  int     // DECIMAL
	Size   int     // ARRAY
	Elem   *Type   // LIST, ARRAY
	Key    *Type   // MAP
	Value  *Type   // MAP
	Fields []Field // STRUCT, UNION
}

// Field is a member of a STRUCT or UNION.
type Field struct {
	Name string
	Type *Type
}

// ParseType reads a type name in the Go driver's notation.
func ParseType(s string) (*Type, error) {
	p := &typeParser{s: s}
	t, err := p.typ()
	if err == nil {
		if p.skip(); p.i != len(p.s) {
			err = fmt.Errorf("unexpected %q", p.s[p.i:])
		}
	}
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", s, err)
	}
	return t, nil
}

// String writes t in the notation ParseType reads (and DuckDB's SQL accepts).
func (t *Type) String() string {
	switch t.Name {
	case "DECIMAL":
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Width, t.Scale)
	case "LIST":
		return t.Elem.String() + "[]"
	case "ARRAY":
		return fmt.Sprintf("%s[%d]", t.Elem, t.Size)
	case "MAP":
		return fmt.Sprintf("MAP(%s, %s)", t.Key, t.Value)
	case "STRUCT", "UNION":
		var b strings.Builder
		b.WriteString(t.Name + "(")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`"` + strings.ReplaceAll(f.Name, `"`, `""`) + `" ` + f.Type.String())
		}
		b.WriteString(")")
		return b.String()
	}
	return t.Name
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *typeParser) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *typeParser) expect(c byte) error {
	if !p.eat(c) {
		return fmt.Errorf("expected %q at offset %d", c, p.i)
	}
	return nil
}

func (p *typeParser) word() string {
	p.skip()
	j := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' {
			p.i++
			continue
		}
		break
	}
	return p.s[j:p.i]
}

func (p *typeParser) number() (int, error) {
	w := p.word()
	n, err := strconv.Atoi(w)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("expected a number at offset %d", p.i)
	}
	return n, nil
}

// name reads a field name: "quoted" (with "" for a quote) or a bare word.
func (p *typeParser) name() (string, error) {
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		if w := p.word(); w != "" {
			return w, nil
		}
		return "", fmt.Errorf("expected a field name at offset %d", p.i)
	}
	var b strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		if p.s[p.i] != '"' {
			b.WriteByte(p.s[p.i])
			continue
		}
		if p.i+1 < len(p.s) && p.s[p.i+1] == '"' {
			b.WriteByte('"')
			p.i++
			continue
		}
		p.i++
		return b.String(), nil
	}
	return "", fmt.Errorf("unterminated field name")
}

// maxDepth bounds nesting so that a hostile type string cannot exhaust the
// stack.
const maxDepth = 64

func (p *typeParser) typ() (*Type, error) { return p.typeAt(0) }

func (p *typeParser) typeAt(depth int) (*Type, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	t, err := p.base(depth)
	if err != nil {
		return nil, err
	}
	for p.eat('[') {
		if p.eat(']') {
			t = &Type{Name: "LIST", Elem: t}
			continue
		}
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		if err := p.expect(']'); err != nil {
			return nil, err
		}
		t = &Type{Name: "ARRAY", Size: n, Elem: t}
	}
	return t, nil
}

func (p *typeParser) base(depth int) (*Type, error) {
	w := strings.ToUpper(p.word())
	if w == "" {
		return nil, fmt.Errorf("expected a type name at offset %d", p.i)
	}
	t := &Type{Name: w}
	switch w {
	case "DECIMAL":
		if !p.eat('(') {
			t.Width, t.Scale = 18, 3 // DuckDB's default
			return t, nil
		}
		var err error
		if t.Width, err = p.number(); err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		if t.Scale, err = p.number(); err != nil {
			return nil, err
		}
		if t.Width < 1 || t.Width > 38 || t.Scale > t.Width {
			return nil, fmt.Errorf("DECIMAL(%d,%d) out of range", t.Width, t.Scale)
		}
		return t, p.expect(')')
	case "MAP":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		var err error
		if t.Key, err = p.typeAt(depth + 1); err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		if t.Value, err = p.typeAt(depth + 1); err != nil {
			return nil, err
		}
		return t, p.expect(')')
	case "STRUCT", "UNION":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		for {
			name, err := p.name()
			if err != nil {
				return nil, err
			}
			ft, err := p.typeAt(depth + 1)
			if err != nil {
				return nil, err
			}
			t.Fields = append(t.Fields, Field{Name: name, Type: ft})
			if p.eat(')') {
				return t, nil
			}
			if err := p.expect(','); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// textual reports whether values of t travel as text: types Arrow has no
// faithful layout for, or whose Go value the driver gives as text anyway.
func (t *Type) textual() bool {
	switch t.Name {
	case "VARCHAR", "ENUM", "BIT", "JSON", "TIMETZ", "UHUGEINT", "BIGNUM", "UNION", "VARIANT":
		return true
	}
	return !t.known()
}

// known reports whether t is a type this package maps to Arrow.
func (t *Type) known() bool {
	switch t.Name {
	case "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
		"UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "VARCHAR", "ENUM", "BIT", "JSON", "BLOB",
		"GEOMETRY", "UUID", "DATE", "TIME", "TIMETZ", "TIMESTAMP", "TIMESTAMPTZ",
		"TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "INTERVAL", "HUGEINT", "UHUGEINT",
		"BIGNUM", "DECIMAL", "LIST", "ARRAY", "STRUCT", "MAP", "UNION", "VARIANT", "SQLNULL":
		return true
	}
	return false
}
