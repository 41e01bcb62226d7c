package render

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// TableWidth is the widest line a table prints: a table wider than this is
// split into blocks of columns, each repeating the row's leading label
// columns (its group), so that it reads on a 120-column terminal.
const TableWidth = 120

// A tableCol is one column of a table: its header, the cell of each row,
// and whether it holds numbers (label columns lead a row and are repeated
// in every block of a split table).
type tableCol struct {
	name    string
	numeric bool
	cell    func(row reflect.Value) string
}

// A tableList is a field holding a list of structs: it prints as a small
// table of its own under the main one, once per row that has items.
type tableList struct {
	name  string
	items func(row reflect.Value) reflect.Value
}

// writeTable prints rows (a slice of structs) as a table of at most
// TableWidth columns: nested structs become columns of their own (name.sub),
// intervals ({lo, hi}) print as [lo, hi], lists of values as a comma list,
// lists of structs as tables of their own; columns empty in every row are
// left out.
func writeTable(w io.Writer, rows reflect.Value, omit []string) error {
	et := rows.Type().Elem()
	for et.Kind() == reflect.Pointer {
		et = et.Elem()
	}
	var cols []tableCol
	var lists []tableList
	columnsOf(et, "", func(v reflect.Value) (reflect.Value, bool) { return v, true }, omit, &cols, &lists)

	head := make([]string, len(cols))
	numeric := make([]bool, len(cols))
	body := make([][]string, rows.Len())
	recs := make([]reflect.Value, rows.Len())
	for i := range rows.Len() {
		rv, ok := deref(rows.Index(i))
		recs[i] = rv
		body[i] = make([]string, len(cols))
		if !ok {
			continue
		}
		for j, c := range cols {
			body[i][j] = c.cell(rv)
		}
	}
	for j, c := range cols {
		head[j], numeric[j] = c.name, c.numeric
	}
	head, body, numeric = dropEmpty(head, body, numeric)
	if err := layout(w, head, body, numeric); err != nil {
		return err
	}
	for _, l := range lists {
		for i, rv := range recs {
			if !rv.IsValid() {
				continue
			}
			items := l.items(rv)
			if !items.IsValid() || items.Len() == 0 {
				continue
			}
			if _, err := fmt.Fprintf(w, "\n%s of %s:\n", l.name, rowLabel(head, body[i], numeric, i)); err != nil {
				return err
			}
			if err := writeTable(w, items, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowLabel names row i by its label columns ("agent=coder, day=…"), or by
// its number when it has none.
func rowLabel(head, row []string, numeric []bool, i int) string {
	var parts []string
	for j := range head {
		if numeric[j] {
			break
		}
		if row[j] != "" {
			parts = append(parts, head[j]+"="+row[j])
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("row %d", i+1)
	}
	return strings.Join(parts, ", ")
}

// columnsOf adds the columns and lists of struct type t, whose value get
// finds in a row, to cols and lists.
func columnsOf(t reflect.Type, prefix string, get func(reflect.Value) (reflect.Value, bool), omit []string, cols *[]tableCol, lists *[]tableList) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		field := func(row reflect.Value) (reflect.Value, bool) {
			v, ok := get(row)
			if !ok {
				return reflect.Value{}, false
			}
			return deref(v.Field(i))
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			columnsOf(ft, prefix, field, omit, cols, lists)
			continue
		}
		if name == "" {
			name = f.Name
		}
		if prefix == "" && slices.Contains(omit, name) {
			continue
		}
		name = prefix + name
		switch {
		case isInterval(ft):
			*cols = append(*cols, tableCol{name: name, numeric: true, cell: func(row reflect.Value) string {
				v, ok := field(row)
				if !ok {
					return ""
				}
				return "[" + number(v.FieldByName(intervalField(ft, "lo"))) + ", " + number(v.FieldByName(intervalField(ft, "hi"))) + "]"
			}})
		case ft.Kind() == reflect.Struct && !isText(ft):
			columnsOf(ft, name+".", field, nil, cols, lists)
		case (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && isRecord(ft.Elem()):
			*lists = append(*lists, tableList{name: name, items: func(row reflect.Value) reflect.Value {
				v, _ := field(row)
				return v
			}})
		default:
			*cols = append(*cols, tableCol{name: name, numeric: isNumber(ft), cell: func(row reflect.Value) string {
				v, ok := field(row)
				if !ok {
					return ""
				}
				return text(v)
			}})
		}
	}
}

// deref follows pointers and interfaces; ok is false at a nil.
func deref(v reflect.Value) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}, false
		}
		v = v.Elem()
	}
	return v, v.IsValid()
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
)

// isText reports whether values of t print as their own text (a time, a
// fmt.Stringer such as metrics.Dim) rather than field by field.
func isText(t reflect.Type) bool {
	return t == timeType || t.Implements(stringerType) || reflect.PointerTo(t).Implements(stringerType)
}

// isRecord reports whether t (behind pointers) is a struct shown field by
// field: the element of a list that prints as a table of its own.
func isRecord(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !isText(t)
}

func isNumber(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// isInterval reports whether t is a struct of two numbers named lo and hi
// in JSON (a confidence interval).
func isInterval(t reflect.Type) bool {
	if t.Kind() != reflect.Struct || t.NumField() != 2 {
		return false
	}
	return intervalField(t, "lo") != "" && intervalField(t, "hi") != ""
}

// intervalField is the Go name of t's numeric field whose JSON name is json.
func intervalField(t reflect.Type, json string) string {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == json && isNumber(f.Type) {
			return f.Name
		}
	}
	return ""
}

// number prints a number as a cell does.
func number(v reflect.Value) string {
	v, ok := deref(v)
	if !ok {
		return ""
	}
	return text(v)
}

// text is the table text of a value that is not a struct shown field by
// field: numbers, strings, times, fmt.Stringers, lists of these (a comma
// list) and maps (k=v pairs).
func text(v reflect.Value) string {
	v, ok := deref(v)
	if !ok {
		return ""
	}
	if v.Type() == timeType {
		t := v.Interface().(time.Time)
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	if v.Type().Implements(stringerType) {
		return v.Interface().(fmt.Stringer).String()
	}
	if s, ok := scalarText(v); ok {
		return s
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range v.Len() {
			parts[i] = text(v.Index(i))
		}
		return strings.Join(parts, ", ")
	case reflect.Map:
		keys := v.MapKeys()
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = text(k) + "=" + text(v.MapIndex(k))
		}
		slices.Sort(parts)
		return strings.Join(parts, ", ")
	case reflect.Struct:
		parts := make([]string, 0, v.NumField())
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				parts = append(parts, text(v.Field(i)))
			}
		}
		return strings.Join(parts, " ")
	}
	return fmt.Sprint(v.Interface())
}

// dropEmpty leaves out the columns that are empty in every row (a grouping
// the rows are not grouped by); with no rows it keeps them all.
func dropEmpty(head []string, body [][]string, numeric []bool) ([]string, [][]string, []bool) {
	if len(body) == 0 {
		return head, body, numeric
	}
	var keep []int
	for j := range head {
		for _, r := range body {
			if r[j] != "" {
				keep = append(keep, j)
				break
			}
		}
	}
	h, n := make([]string, len(keep)), make([]bool, len(keep))
	b := make([][]string, len(body))
	for i := range body {
		b[i] = make([]string, len(keep))
	}
	for k, j := range keep {
		h[k], n[k] = head[j], numeric[j]
		for i := range body {
			b[i][k] = body[i][j]
		}
	}
	return h, b, n
}

// layout prints head and body as aligned columns, split into blocks of
// columns where the table is wider than TableWidth; each block repeats the
// leading label (non-numeric) columns. A cell longer than tableCellWidth
// wraps onto more lines within its column.
func layout(w io.Writer, head []string, body [][]string, numeric []bool) error {
	lines := make([][][]string, len(body)) // row, column, line of the cell
	for i := range body {
		lines[i] = make([][]string, len(body[i]))
		for j := range body[i] {
			lines[i][j] = cellLines(body[i][j])
		}
	}
	width := make([]int, len(head))
	for j, h := range head {
		width[j] = utf8.RuneCountInString(h)
		for _, r := range lines {
			for _, l := range r[j] {
				width[j] = max(width[j], utf8.RuneCountInString(l))
			}
		}
	}
	span := func(cols []int) int {
		n := 0
		for k, j := range cols {
			if k > 0 {
				n += 2
			}
			n += width[j]
		}
		return n
	}
	var keys []int
	for j := range head {
		if numeric[j] {
			break
		}
		keys = append(keys, j)
	}
	for len(keys) > 0 && span(keys) > TableWidth/2 {
		keys = keys[:len(keys)-1]
	}
	var blocks [][]int
	cur := slices.Clone(keys)
	for j := len(keys); j < len(head); j++ {
		if len(cur) > len(keys) && span(append(slices.Clone(cur), j)) > TableWidth {
			blocks = append(blocks, cur)
			cur = slices.Clone(keys)
		}
		cur = append(cur, j)
	}
	if len(cur) > len(keys) || len(blocks) == 0 {
		blocks = append(blocks, cur)
	}
	var b strings.Builder
	line := func(cells func(j int) string, cols []int) {
		var l strings.Builder
		for k, j := range cols {
			c := cells(j)
			l.WriteString(c)
			if k < len(cols)-1 {
				l.WriteString(strings.Repeat(" ", width[j]-utf8.RuneCountInString(c)+2))
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteString("\n")
	}
	for n, cols := range blocks {
		if n > 0 {
			b.WriteString("\n")
		}
		line(func(j int) string { return head[j] }, cols)
		for _, r := range lines {
			height := 1
			for _, j := range cols {
				height = max(height, len(r[j]))
			}
			for k := range height {
				line(func(j int) string {
					if k < len(r[j]) {
						return r[j][k]
					}
					return ""
				}, cols)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cellLines is the text of a cell on lines of at most tableCellWidth runes,
// broken at spaces where it can be; control characters are escaped.
func cellLines(s string) []string {
	s = strings.NewReplacer("\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(s)
	if utf8.RuneCountInString(s) <= tableCellWidth {
		return []string{s}
	}
	var out []string
	for _, l := range strings.Split(wrap(s, tableCellWidth, ""), "\n") {
		for r := []rune(l); len(r) > 0; {
			n := min(len(r), tableCellWidth)
			out = append(out, string(r[:n]))
			r = r[n:]
		}
	}
	return out
}

// wrap breaks s into lines of at most width runes at spaces, each line
// after the first starting with indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		l := utf8.RuneCountInString(word)
		if i > 0 {
			if n+1+l > width {
				b.WriteString("\n" + indent)
				n = utf8.RuneCountInString(indent)
			} else {
				b.WriteString(" ")
				n++
			}
		}
		b.WriteString(word)
		n += l
	}
	return b.String()
}
