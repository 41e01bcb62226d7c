package sqlservice

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// JSONValue is the JSON form of a value of type t, as in the service's JSON
// answers: numbers as numbers (HUGEINT and DECIMAL exactly, as number
// literals), NaN and infinities as the strings "NaN", "Infinity",
// "-Infinity"; TIMESTAMPTZ as RFC 3339 in UTC, TIMESTAMP as the same without
// the zone, DATE as 2006-01-02, TIME as 15:04:05.999999; BLOB as base64;
// UUID in its usual text form; INTERVAL as {"months", "days", "micros"};
// LIST and ARRAY as arrays, STRUCT as an object, MAP as an array of {"key",
// "value"}; a JSON column as the JSON value itself.
func JSONValue(t *Type, v any) any {
	if v == nil {
		return nil
	}
	switch t.Name {
	case "JSON":
		return v
	case "FLOAT", "DOUBLE":
		var f float64
		switch x := v.(type) {
		case float32:
			f = float64(x)
		case float64:
			f = x
		default:
			return v
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return floatValue(f)
		}
		return v
	case "UUID":
		if b, ok := v.([]byte); ok && len(b) == 16 {
			return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		}
	case "HUGEINT", "UHUGEINT", "BIGNUM":
		if b, ok := v.(*big.Int); ok {
			return json.Number(b.String())
		}
	case "DECIMAL":
		if d, ok := v.(duckdb.Decimal); ok && d.Value != nil {
			return json.Number(decimalText(d))
		}
	case "LIST", "ARRAY":
		if xs, ok := v.([]any); ok {
			out := make([]any, len(xs))
			for i, x := range xs {
				out[i] = JSONValue(t.Elem, x)
			}
			return out
		}
	case "STRUCT":
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for _, f := range t.Fields {
				out[f.Name] = JSONValue(f.Type, m[f.Name])
			}
			return out
		}
	case "MAP":
		if m, ok := v.(duckdb.OrderedMap); ok {
			out := make([]any, 0, m.Len())
			vals := m.Values()
			for i, k := range m.Keys() {
				out = append(out, map[string]any{"key": JSONValue(t.Key, k), "value": JSONValue(t.Value, vals[i])})
			}
			return out
		}
	}
	if tm, ok := v.(time.Time); ok {
		return timeText(t, tm)
	}
	return v
}

// timeText is the text form of a time value of type t.
func timeText(t *Type, tm time.Time) string {
	switch t.Name {
	case "DATE":
		return tm.Format(time.DateOnly)
	case "TIME":
		return tm.Format("15:04:05.999999")
	case "TIMETZ":
		return tm.Format(timeTZLayout)
	case "TIMESTAMPTZ":
		return tm.UTC().Format(time.RFC3339Nano)
	}
	return tm.Format("2006-01-02T15:04:05.999999999")
}

// decimalText writes a DECIMAL exactly: 12.30 for 1230 at scale 2.
func decimalText(d duckdb.Decimal) string {
	s := new(big.Int).Abs(d.Value).String()
	sign := ""
	if d.Value.Sign() < 0 {
		sign = "-"
	}
	if d.Scale == 0 {
		return sign + s
	}
	if len(s) <= int(d.Scale) {
		s = strings.Repeat("0", int(d.Scale)-len(s)+1) + s
	}
	return sign + s[:len(s)-int(d.Scale)] + "." + s[len(s)-int(d.Scale):]
}

// Text is a value of type t as one table or CSV cell: NULL is empty, text as
// itself, times as in JSONValue, nested values as compact JSON.
func Text(t *Type, v any) string {
	if v == nil {
		return ""
	}
	switch x := JSONValue(t, v).(type) {
	case string:
		return x
	case json.Number:
		return string(x)
	case bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	case float32, float64:
		return fmt.Sprint(x)
	case []byte:
		b, _ := json.Marshal(x)
		return strings.Trim(string(b), `"`)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
}

// jsonAnswer is the body of a JSON answer.
type jsonAnswer struct {
	Columns   []string `json:"columns"`
	Types     []string `json:"types"`
	Rows      [][]any  `json:"rows"`
	Truncated bool     `json:"truncated"`
}

// jsonSink builds a JSON answer.
type jsonSink struct {
	ans   jsonAnswer
	types []*Type
	// limit is the most bytes the answer may take (the NATS max payload):
	// the sink stops a query whose values alone pass it, rather than hold
	// a result that could never be sent. 0: no limit (Local).
	limit, size int64
}

func (s *jsonSink) columns(names []string, types []*Type) error {
	s.ans.Columns, s.types = names, types
	s.ans.Types = make([]string, len(types))
	for i, t := range types {
		s.ans.Types[i] = t.String()
	}
	s.ans.Rows = [][]any{}
	return nil
}

func (s *jsonSink) row(vals []driver.Value) error {
	row := make([]any, len(vals))
	for i, v := range vals {
		row[i] = JSONValue(s.types[i], v)
		s.size += valueSize(v)
	}
	if s.limit > 0 && s.size > s.limit {
		return newError(413, fmt.Sprintf("the JSON answer is larger than a NATS message (max payload %d) after %d rows: ask for format %q, or fewer rows with max_rows",
			s.limit, len(s.ans.Rows), FormatArrow))
	}
	s.ans.Rows = append(s.ans.Rows, row)
	return nil
}

// encode writes the answer.
func (s *jsonSink) encode(truncated bool) ([]byte, error) {
	s.ans.Truncated = truncated
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s.ans); err != nil {
		return nil, newError(500, fmt.Sprintf("encode JSON answer: %v", err))
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// valueSize is about the least bytes a value takes in a JSON answer.
func valueSize(v driver.Value) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x)) + 3
	case []byte:
		return int64(len(x)) + 3
	case []any:
		n := int64(2)
		for _, e := range x {
			n += valueSize(e) + 1
		}
		return n
	case map[string]any:
		n := int64(2)
		for k, e := range x {
			n += int64(len(k)) + 4 + valueSize(e)
		}
		return n
	}
	return 2
}
