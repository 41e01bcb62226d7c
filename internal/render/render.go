// Package render prints analysis results as a terminal table, CSV, JSON or
// JSON lines. JSON is the stable, documented shape (docs/analyze.md): an
// Envelope whose rows are the analyzer's row structs, encoded by their json
// tags; ndjson prints those rows alone, one object a line. CSV shows the
// same rows, one column per top-level json field, nested values (lists,
// objects) as compact JSON. The table is for people (table.go): no JSON in
// cells, at most TableWidth columns wide. WriteResult prints the rows of a
// SQL query (analyze sql) the same ways.
package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Formats are the output formats.
var Formats = []string{"table", "json", "ndjson", "csv"}

// ShapeVersion is the version of the JSON envelope and row shapes. It
// changes only with a breaking change of a documented field.
const ShapeVersion = 1

// Envelope wraps every analysis in JSON output.
type Envelope struct {
	Analysis    string    `json:"analysis"`
	Version     int       `json:"version"`
	GeneratedAt time.Time `json:"generated_at"`
	Filter      any       `json:"filter"`
	Classifier  string    `json:"classifier,omitempty"` // taxonomy version, where task types were classified
	Rows        any       `json:"rows"`
	Extra       any       `json:"extra,omitempty"` // analysis-specific sections (documented per analysis)
	Notes       []string  `json:"notes,omitempty"` // data-quality lines and method notes

	// Omit names the columns (json names of row fields) that table and
	// CSV leave out: the group dimensions a hints or mappings row is not
	// grouped by (metrics.UngroupedDims), which its JSON omits too.
	Omit []string `json:"-"`
}

// Write prints env in format. rows must be a slice of structs (or of
// pointers to structs).
func Write(w io.Writer, format string, env *Envelope) error {
	env.Version = ShapeVersion
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(env)
	case "csv":
		head, body, err := cells(env.Rows, env.Omit)
		if err != nil {
			return err
		}
		cw := csv.NewWriter(w)
		cw.Write(head)
		cw.WriteAll(body)
		return cw.Error()
	case "ndjson":
		rows := reflect.ValueOf(env.Rows)
		if rows.Kind() != reflect.Slice {
			return fmt.Errorf("render: rows are %T, want a slice of structs", env.Rows)
		}
		enc := json.NewEncoder(w)
		for i := range rows.Len() {
			if err := enc.Encode(rows.Index(i).Interface()); err != nil {
				return fmt.Errorf("row %d: %w", i+1, err)
			}
		}
		return nil
	case "table":
		if _, _, err := cells(env.Rows, env.Omit); err != nil {
			return err
		}
		rows := reflect.ValueOf(env.Rows)
		if err := writeTable(w, rows, env.Omit); err != nil {
			return err
		}
		if rows.Len() == 0 {
			fmt.Fprintln(w, "(no rows)")
		}
		for _, n := range env.Notes {
			fmt.Fprintln(w, wrap("note: "+n, TableWidth, "      "))
		}
		return nil
	}
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// cells flattens a slice of structs into a header and string rows, leaving
// out the columns named in omit.
func cells(rows any, omit []string) ([]string, [][]string, error) {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice {
		return nil, nil, fmt.Errorf("render: rows are %T, want a slice of structs", rows)
	}
	et := v.Type().Elem()
	for et.Kind() == reflect.Pointer {
		et = et.Elem()
	}
	if et.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("render: rows are %T, want a slice of structs", rows)
	}
	var head []string
	var idx [][]int
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			path := append(append([]int(nil), prefix...), i)
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, path)
				continue
			}
			if name == "" {
				name = f.Name
			}
			if slices.Contains(omit, name) {
				continue
			}
			head = append(head, name)
			idx = append(idx, path)
		}
	}
	walk(et, nil)
	body := make([][]string, 0, v.Len())
	for i := range v.Len() {
		rv := v.Index(i)
		for rv.Kind() == reflect.Pointer {
			rv = rv.Elem()
		}
		row := make([]string, len(idx))
		for j, p := range idx {
			row[j] = cell(rv.FieldByIndex(p))
		}
		body = append(body, row)
	}
	return head, body, nil
}

// cell is the CSV text of a value: a scalar as scalarText gives it, a time
// in RFC 3339, a fmt.Stringer's text, anything else as compact JSON.
func cell(v reflect.Value) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if s, ok := scalarText(v); ok {
		return s
	}
	if t, ok := v.Interface().(time.Time); ok {
		return t.UTC().Format(time.RFC3339)
	}
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String() // a value with a text form of its own (metrics.Dim)
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Sprint(v.Interface())
	}
	return string(b)
}

// jsonName is the name f's json tag gives it ("" for none), the name of
// its column in a table and in CSV; false for a field neither shows (not
// exported, or tagged "-").
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name, name != "-"
}

// scalarText is the cell text of a number, a string or a bool, the same in
// a table and in CSV: a float with four decimals (NaN, no data, as
// nothing), the others as fmt prints them. It is false for any other kind.
func scalarText(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if f != f { // NaN: undefined (no data)
			return "", true
		}
		return strconv.FormatFloat(f, 'f', 4, 64), true
	case reflect.String:
		return v.String(), true
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprint(v.Interface()), true
	}
	return "", false
}
