package sqlservice

import (
	"database/sql"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// TestParamRoundTrip: what NewRequest encodes, the service decodes to the
// value (or the typed slice) database/sql would have bound.
func TestParamRoundTrip(t *testing.T) {
	ts := time.Date(2026, 11, 1, 9, 30, 0, 123456789, time.UTC)
	tests := []struct {
		name     string
		in, want any
	}{
		{"nil", nil, nil},
		{"bool", true, true},
		{"string", "héllo", "héllo"},
		{"int", 42, int64(42)},
		{"int64 max", int64(math.MaxInt64), int64(math.MaxInt64)},
		{"uint64 max", uint64(math.MaxUint64), uint64(math.MaxUint64)},
		{"float", 2.0, 2.0},
		{"NaN", math.NaN(), math.NaN()},
		{"infinity", math.Inf(-1), math.Inf(-1)},
		{"time", ts, ts},
		{"time in a zone", ts.In(time.FixedZone("x", 3600)), ts},
		{"blob", []byte{0, 1, 255}, []byte{0, 1, 255}},
		{"hugeint", new(big.Int).Lsh(big.NewInt(1), 100), new(big.Int).Lsh(big.NewInt(1), 100)},
		{"interval", duckdb.Interval{Months: 1, Days: 2, Micros: 3}, duckdb.Interval{Months: 1, Days: 2, Micros: 3}},
		{"strings", []string{"a", "b"}, []string{"a", "b"}},
		{"empty strings", []string{}, []string{}},
		{"ints", []int64{}, []int64{}},
		{"floats", []float64{1, 2.5}, []float64{1, 2.5}},
		{"times", []time.Time{ts}, []time.Time{ts}},
		{"mixed", []any{"a", int64(1)}, []any{"a", int64(1)}},
		{"struct", map[string]any{"a": int64(1), "b": []string{"x"}}, map[string]any{"a": int64(1), "b": []string{"x"}}},
		{"null.String", sql.NullString{String: "x", Valid: true}, "x"},
		{"null.Int64 NULL", sql.NullInt64{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := NewRequest("SELECT $x", sql.Named("x", tc.in))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(req)
			parsed, err := parseRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			q, err := parsed.decode()
			if err != nil {
				t.Fatalf("decode %s: %v", body, err)
			}
			got := q.Named["x"]
			if f, ok := tc.want.(float64); ok && math.IsNaN(f) {
				if g, ok := got.(float64); !ok || !math.IsNaN(g) {
					t.Fatalf("got %T(%v), want NaN", got, got)
				}
				return
			}
			if b, ok := tc.want.(*big.Int); ok {
				if g, ok := got.(*big.Int); !ok || g.Cmp(b) != 0 {
					t.Fatalf("got %T(%v), want %v", got, got, b)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%s decodes to %T(%v), want %T(%v)", body, got, got, tc.want, tc.want)
			}
		})
	}
}

// TestPlainJSONParams are parameters as a client in another language writes
// them.
func TestPlainJSONParams(t *testing.T) {
	tests := []struct {
		name, json string
		want       any
	}{
		{"integer", `7`, int64(7)},
		{"big integer", `18446744073709551615`, uint64(math.MaxUint64)},
		{"huge integer", `1267650600228229401496703205376`, new(big.Int).Lsh(big.NewInt(1), 100)},
		{"fraction", `0.5`, 0.5},
		{"exponent", `1e3`, 1000.0},
		{"list of strings", `["a", "b"]`, []string{"a", "b"}},
		{"empty list", `[]`, []string{}},
		{"list of numbers", `[1, 2.5]`, []float64{1, 2.5}},
		{"list of lists", `[[1], [2]]`, []any{[]int64{1}, []int64{2}}},
		{"timestamp", `{"type": "timestamp", "value": "2026-01-02T03:04:05+01:00"}`, time.Date(2026, 1, 2, 2, 4, 5, 0, time.UTC)},
		{"date", `{"type": "date", "value": "2026-01-02"}`, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
		{"typed empty list", `{"type": "list", "element": "bigint", "value": []}`, []int64{}},
		{"typed NULL", `{"type": "timestamp", "value": null}`, nil},
		{"json", `{"type": "json", "value": {"a": [1]}}`, `{"a":[1]}`},
		{"bigint as string", `{"type": "bigint", "value": "9007199254740993"}`, int64(9007199254740993)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeParam(json.RawMessage(tc.json))
			if err != nil {
				t.Fatalf("decodeParam(%s) = %v", tc.json, err)
			}
			if b, ok := tc.want.(*big.Int); ok {
				if g, ok := got.(*big.Int); !ok || g.Cmp(b) != 0 {
					t.Fatalf("decodeParam(%s) = %T(%v), want %v", tc.json, got, got, b)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decodeParam(%s) = %T(%v), want %T(%v)", tc.json, got, got, tc.want, tc.want)
			}
		})
	}
	for _, bad := range []string{`{"a": 1}`, `{"type": "timestamp"}`, `{"type": "list", "element": "uuid", "value": []}`,
		`{"type": "interval", "value": {"weeks": 1}}`, `{"type": "blob", "value": "%%"}`, `[1, "a"] x`} {
		if got, err := decodeParam(json.RawMessage(bad)); err == nil {
			t.Errorf("decodeParam(%s) = %v, want an error", bad, got)
		}
	}
}

// FuzzRequest: no request body makes the decoder panic, and a body it
// accepts decodes the same way twice.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"sql": "SELECT 1"}`,
		`{"sql": "SELECT $1, $a", "args": [1, "x", null, [1, 2]], "named": {"a": {"type": "timestamp", "value": "2026-01-01T00:00:00Z"}}}`,
		`{"sql": "x", "format": "json", "max_rows": 3, "timeout_ms": 10}`,
		`{"sql": "x", "args": [{"type": "struct", "value": {"a": {"type": "list", "value": [[[]]]}}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRequest(b)
		if err != nil {
			return
		}
		q1, err1 := r.decode()
		q2, err2 := r.decode()
		if (err1 == nil) != (err2 == nil) || err1 == nil && !reflect.DeepEqual(q1, q2) && !hasNaN(q1) {
			t.Fatalf("decode is not deterministic: %v/%v", err1, err2)
		}
	})
}

func hasNaN(q Query) bool {
	b, err := json.Marshal(q)
	return err != nil || len(b) == 0
}
