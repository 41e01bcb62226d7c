package sqlservice

import (
	"bytes"
	"database/sql"
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Formats of an answer.
const (
	FormatArrow = "arrow" // Arrow IPC stream in one or more messages (the default)
	FormatJSON  = "json"  // one JSON message
)

// Request is the JSON body of a query request (docs/query-service.md).
type Request struct {
	SQL string `json:"sql"`
	// Args are the positional parameters ($1, $2, … or ?), Named the named
	// ones ($name), as JSON values (see decodeParam).
	Args  []json.RawMessage          `json:"args,omitempty"`
	Named map[string]json.RawMessage `json:"named,omitempty"`
	// Format is FormatArrow (default) or FormatJSON.
	Format string `json:"format,omitempty"`
	// MaxRows and TimeoutMS lower the service's limits for this query; 0
	// (or more than the service allows) means the service's maximum.
	MaxRows   int64 `json:"max_rows,omitempty"`
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// NewRequest builds a request from arguments as database/sql takes them:
// sql.Named values are named parameters, the others positional. See
// EncodeParam for the Go types it takes.
func NewRequest(query string, args ...any) (Request, error) {
	r := Request{SQL: query}
	for i, a := range args {
		name := ""
		if n, ok := a.(sql.NamedArg); ok {
			name, a = n.Name, n.Value
		}
		raw, err := EncodeParam(a)
		if err != nil {
			if name != "" {
				return Request{}, fmt.Errorf("parameter $%s: %w", name, err)
			}
			return Request{}, fmt.Errorf("parameter %d: %w", i+1, err)
		}
		if name == "" {
			r.Args = append(r.Args, raw)
			continue
		}
		if r.Named == nil {
			r.Named = map[string]json.RawMessage{}
		}
		r.Named[name] = raw
	}
	return r, nil
}

// typed is the JSON form of a parameter JSON has no literal for.
type typed struct {
	Type    string `json:"type"`
	Element string `json:"element,omitempty"`
	Value   any    `json:"value"`
}

func marshal(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	return b, err
}

// EncodeParam is the JSON form of a Go parameter value: nil, bool, string,
// integers and float64 as JSON literals or typed values, time.Time as a
// timestamp, []byte as a blob, *big.Int as a hugeint, duckdb.Interval, slices
// as lists (with their element type) and map[string]any as a struct.
// driver.Valuer values are encoded by their Value.
func EncodeParam(v any) (json.RawMessage, error) {
	if vr, ok := v.(driver.Valuer); ok {
		if _, isTime := v.(time.Time); !isTime {
			dv, err := vr.Value()
			if err != nil {
				return nil, err
			}
			v = dv
		}
	}
	switch x := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint8, uint16, uint32:
		return marshal(x)
	case uint:
		return EncodeParam(uint64(x))
	case uint64:
		if x <= math.MaxInt64 {
			return marshal(x)
		}
		return marshal(typed{Type: "ubigint", Value: strconv.FormatUint(x, 10)})
	case float32:
		return EncodeParam(float64(x))
	case float64:
		return marshal(typed{Type: "double", Value: floatValue(x)})
	case time.Time:
		return marshal(typed{Type: "timestamp", Value: x.Format(time.RFC3339Nano)})
	case []byte:
		return marshal(typed{Type: "blob", Value: base64.StdEncoding.EncodeToString(x)})
	case *big.Int:
		return marshal(typed{Type: "hugeint", Value: x.String()})
	case duckdb.Interval:
		return marshal(typed{Type: "interval", Value: x})
	case map[string]any:
		m := map[string]json.RawMessage{}
		for k, e := range x {
			raw, err := EncodeParam(e)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", k, err)
			}
			m[k] = raw
		}
		return marshal(typed{Type: "struct", Value: m})
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, fmt.Errorf("parameter of Go type %T is not supported", v)
	}
	elems := make([]json.RawMessage, rv.Len())
	for i := range elems {
		raw, err := EncodeParam(rv.Index(i).Interface())
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i+1, err)
		}
		elems[i] = raw
	}
	return marshal(typed{Type: "list", Element: elementOf(rv.Type().Elem()), Value: elems})
}

// elementOf names the element type of a list parameter, when it is one a
// list can be typed with.
func elementOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "varchar"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return "bigint"
	case reflect.Float32, reflect.Float64:
		return "double"
	}
	if t == reflect.TypeFor[time.Time]() {
		return "timestamp"
	}
	return ""
}

func floatValue(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// Query is a request's statement and its decoded parameters.
type Query struct {
	SQL     string
	Args    []any          // positional
	Named   map[string]any // by name
	MaxRows int64          // 0: no limit
}

// decode checks the request and decodes its parameters.
func (r Request) decode() (Query, error) {
	q := Query{SQL: r.SQL}
	if strings.TrimSpace(r.SQL) == "" {
		return q, newError(400, "empty query: the request has no sql")
	}
	if r.MaxRows < 0 || r.TimeoutMS < 0 {
		return q, newError(400, "max_rows and timeout_ms must not be negative")
	}
	switch r.Format {
	case "", FormatArrow, FormatJSON:
	default:
		return q, newError(400, fmt.Sprintf("format %q: want %q or %q", r.Format, FormatArrow, FormatJSON))
	}
	for i, raw := range r.Args {
		v, err := decodeParam(raw)
		if err != nil {
			return q, newError(400, fmt.Sprintf("args[%d]: %v", i, err))
		}
		q.Args = append(q.Args, v)
	}
	names := make([]string, 0, len(r.Named))
	for n := range r.Named {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v, err := decodeParam(r.Named[n])
		if err != nil {
			return q, newError(400, fmt.Sprintf("named[%q]: %v", n, err))
		}
		if q.Named == nil {
			q.Named = map[string]any{}
		}
		q.Named[strings.TrimPrefix(n, "$")] = v
	}
	return q, nil
}

// parseRequest reads a request body.
func parseRequest(b []byte) (Request, error) {
	var r Request
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, newError(400, fmt.Sprintf("request is not a query object: %v", err))
	}
	if dec.More() {
		return r, newError(400, "request has data after the query object")
	}
	return r, nil
}

// maxParamDepth bounds the nesting of a parameter value.
const maxParamDepth = 32

// decodeParam turns a parameter's JSON into the Go value bound to DuckDB:
// null, true/false and strings as themselves; an integer literal as int64
// (uint64 or *big.Int when larger), other numbers as float64; an array as a
// list; an object as a typed value {"type": …, "value": …}.
func decodeParam(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return paramValue(v, 0)
}

func paramValue(v any, depth int) (any, error) {
	if depth > maxParamDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxParamDepth)
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		return number(x)
	case []any:
		return list(x, "", depth)
	case map[string]any:
		return typedValue(x, depth)
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v)
}

func number(n json.Number) (any, error) {
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u, nil
		}
		if b, ok := new(big.Int).SetString(s, 10); ok {
			return b, nil
		}
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("number %s: %w", s, err)
	}
	return f, nil
}

// list decodes an array. With an element type, or when every element has
// the same kind, it is a typed Go slice, so that DuckDB can infer the list's
// type; an empty array without an element type is an empty VARCHAR[].
func list(xs []any, element string, depth int) (any, error) {
	vals := make([]any, len(xs))
	for i, x := range xs {
		v, err := paramValue(x, depth+1)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i+1, err)
		}
		vals[i] = v
	}
	if element == "" {
		element = inferElement(vals)
	}
	switch element {
	case "varchar":
		return slice[string](vals, element)
	case "bigint":
		return slice[int64](vals, element)
	case "double":
		out := make([]float64, len(vals))
		for i, v := range vals {
			switch f := v.(type) {
			case float64:
				out[i] = f
			case int64:
				out[i] = float64(f)
			default:
				return nil, fmt.Errorf("element %d: %T in a list of double", i+1, v)
			}
		}
		return out, nil
	case "boolean":
		return slice[bool](vals, element)
	case "timestamp":
		return slice[time.Time](vals, element)
	case "any":
		return vals, nil
	}
	return nil, fmt.Errorf("list element type %q: want varchar, bigint, double, boolean or timestamp", element)
}

func inferElement(vals []any) string {
	if len(vals) == 0 {
		return "varchar"
	}
	kind := func(v any) string {
		switch v.(type) {
		case string:
			return "varchar"
		case int64:
			return "bigint"
		case float64:
			return "double"
		case bool:
			return "boolean"
		case time.Time:
			return "timestamp"
		}
		return "any"
	}
	k := kind(vals[0])
	for _, v := range vals[1:] {
		switch kv := kind(v); {
		case kv == k:
		case kv == "double" && k == "bigint", kv == "bigint" && k == "double":
			k = "double"
		default:
			return "any"
		}
	}
	return k
}

func slice[T any](vals []any, element string) ([]T, error) {
	out := make([]T, len(vals))
	for i, v := range vals {
		x, ok := v.(T)
		if !ok {
			return nil, fmt.Errorf("element %d: %T in a list of %s", i+1, v, element)
		}
		out[i] = x
	}
	return out, nil
}

// typedValue decodes {"type": T, "value": V} (and "element" for lists).
func typedValue(m map[string]any, depth int) (any, error) {
	t, _ := m["type"].(string)
	val, has := m["value"]
	for k := range m {
		if k != "type" && k != "value" && k != "element" {
			return nil, fmt.Errorf("typed value has unknown key %q (want type, value, element)", k)
		}
	}
	if t == "" || !has {
		return nil, fmt.Errorf(`an object parameter is a typed value {"type": …, "value": …}`)
	}
	if val == nil {
		return nil, nil // a typed NULL is NULL
	}
	str := func() (string, error) {
		switch s := val.(type) {
		case string:
			return s, nil
		case json.Number:
			return s.String(), nil
		}
		return "", fmt.Errorf("%s value: want a string, got %T", t, val)
	}
	switch t {
	case "timestamp":
		s, err := str()
		if err != nil {
			return nil, err
		}
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("timestamp value: %w", err)
		}
		return ts.UTC(), nil
	case "date":
		s, err := str()
		if err != nil {
			return nil, err
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, fmt.Errorf("date value: %w", err)
		}
		return d, nil
	case "double":
		s, err := str()
		if err != nil {
			return nil, err
		}
		switch s {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("double value: %w", err)
		}
		return f, nil
	case "bigint":
		s, err := str()
		if err != nil {
			return nil, err
		}
		return strconv.ParseInt(s, 10, 64)
	case "ubigint":
		s, err := str()
		if err != nil {
			return nil, err
		}
		return strconv.ParseUint(s, 10, 64)
	case "hugeint":
		s, err := str()
		if err != nil {
			return nil, err
		}
		b, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("hugeint value %q", s)
		}
		return b, nil
	case "blob":
		s, err := str()
		if err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(s)
	case "interval":
		o, ok := val.(map[string]any)
		if !ok {
			return nil, fmt.Errorf(`interval value: want {"months": …, "days": …, "micros": …}`)
		}
		var iv duckdb.Interval
		for k, x := range o {
			n, ok := x.(json.Number)
			if !ok {
				return nil, fmt.Errorf("interval %s: want a number", k)
			}
			i, err := n.Int64()
			if err != nil {
				return nil, fmt.Errorf("interval %s: %w", k, err)
			}
			switch k {
			case "months":
				iv.Months = int32(i)
			case "days":
				iv.Days = int32(i)
			case "micros":
				iv.Micros = i
			default:
				return nil, fmt.Errorf("interval has unknown key %q", k)
			}
		}
		return iv, nil
	case "list":
		xs, ok := val.([]any)
		if !ok {
			return nil, fmt.Errorf("list value: want an array")
		}
		element, _ := m["element"].(string)
		return list(xs, element, depth)
	case "struct":
		o, ok := val.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("struct value: want an object")
		}
		out := make(map[string]any, len(o))
		for k, x := range o {
			v, err := paramValue(x, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", k, err)
			}
			out[k] = v
		}
		return out, nil
	case "json":
		b, err := json.Marshal(val)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}
	return nil, fmt.Errorf("unknown parameter type %q (want timestamp, date, double, bigint, ubigint, hugeint, blob, interval, list, struct or json)", t)
}
