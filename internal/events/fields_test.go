package events

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/evosignal/evosignal/schema"
)

// Focused differential tests for the two readers most likely to drift from
// the schema validator: the time attribute and integers. Each compares against a tiny
// schema compiled by the same library, and has a fuzz target of its own
// (small inputs let the fuzzer reach the corners fast).

var fieldSchemas = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	docs := map[string]string{
		"date-time": "", // the time attribute of cloudevent.json, filled in below
		"int0":      `{"type":"integer","minimum":0,"maximum":9007199254740991}`,
		"int1":      `{"type":"integer","minimum":1,"maximum":9007199254740991}`,
	}
	b, err := schema.FS.ReadFile(schema.Current("cloudevent.json"))
	if err != nil {
		return nil, err
	}
	var ce struct {
		Properties struct {
			Time json.RawMessage `json:"time"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &ce); err != nil {
		return nil, err
	}
	docs["date-time"] = string(ce.Properties.Time)
	out := map[string]*jsonschema.Schema{}
	for name, doc := range docs {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			return nil, err
		}
		url := "mem:///" + name + ".json"
		if err := c.AddResource(url, v); err != nil {
			return nil, err
		}
		if out[name], err = c.Compile(url); err != nil {
			return nil, err
		}
	}
	return out, nil
})

func fieldSchema(tb testing.TB, name string) *jsonschema.Schema {
	tb.Helper()
	m, err := fieldSchemas()
	if err != nil {
		tb.Fatal(err)
	}
	return m[name]
}

func checkDateTime(tb testing.TB, s string) {
	tb.Helper()
	_, got := parseDateTime([]byte(s))
	want := fieldSchema(tb, "date-time").Validate(s) == nil
	if got != want {
		tb.Fatalf("parseDateTime(%q) ok = %v, schema says %v", s, got, want)
	}
}

// checkInt compares classifyInt with the integer schemas on number text s
// (which must be a JSON number).
func checkInt(tb testing.TB, s string) {
	tb.Helper()
	v, c, canonical := classifyInt([]byte(s))
	for _, min := range []int64{0, 1} {
		got := c == intOK && v >= min
		want := fieldSchema(tb, fmt.Sprintf("int%d", min)).Validate(json.Number(s)) == nil
		if got != want {
			tb.Fatalf("classifyInt(%q) = %d, %d: accepted with minimum %d = %v, schema says %v", s, v, c, min, got, want)
		}
	}
	if canonical && fmt.Sprint(v) != s {
		tb.Fatalf("classifyInt(%q) canonical, value %d", s, v)
	}
}

func TestDateTimeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seeds := []string{"2025-06-12T10:03:08.070Z", "2016-12-31T23:59:60Z", "2016-12-31T15:59:60-08:00", "2024-02-29t00:00:00+23:59", "0000-01-01T00:00:00.1z"}
	const alphabet = "0123456789-:+.TtZz 9"
	n := 200000
	if testing.Short() {
		n /= 20
	}
	for i := 0; i < n; i++ {
		b := []byte(seeds[r.IntN(len(seeds))])
		for n := r.IntN(3) + 1; n > 0; n-- {
			switch j := r.IntN(len(b) + 1); r.IntN(3) {
			case 0: // replace
				if j < len(b) {
					b[j] = alphabet[r.IntN(len(alphabet))]
				}
			case 1: // insert
				b = append(b[:j], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[j:]...)...)
			case 2: // delete
				if j < len(b) {
					b = append(b[:j], b[j+1:]...)
				}
			}
		}
		checkDateTime(t, string(b))
	}
}

func TestIntRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	digits := func(n int, lead bool) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			d := r.IntN(10)
			if r.IntN(3) == 0 {
				d = 0 // zeros matter here
			}
			if i == 0 && lead && d == 0 {
				d = 1 + r.IntN(9)
			}
			sb.WriteByte(byte('0' + d))
		}
		return sb.String()
	}
	n := 100000
	if testing.Short() {
		n /= 20
	}
	for i := 0; i < n; i++ {
		var sb strings.Builder
		if r.IntN(4) == 0 {
			sb.WriteByte('-')
		}
		if r.IntN(4) == 0 {
			sb.WriteByte('0')
		} else {
			sb.WriteString(digits(1+r.IntN(20), true))
		}
		if r.IntN(2) == 0 {
			sb.WriteByte('.')
			sb.WriteString(digits(1+r.IntN(20), false))
		}
		if r.IntN(2) == 0 {
			sb.WriteString([]string{"e", "E"}[r.IntN(2)])
			sb.WriteString([]string{"", "+", "-"}[r.IntN(3)])
			sb.WriteString(strings.Repeat("0", r.IntN(3)))
			sb.WriteString(fmt.Sprint(r.IntN(40)))
		}
		checkInt(t, sb.String())
	}
	// Exponent limits of math/big.Rat.SetString.
	for _, s := range []string{
		"0e9223372036854775807", "0e9223372036854775808", "0e-9223372036854775808", "0e-9223372036854775809",
		"0.0e99999999999999999999", "1e-1000000", "10e-1000001", "1e-1000001", "1.0e-9223372036854775808",
		"1e00000000000000000000000000001", "1.5e-0", "12.000000000000000000001", "9007199254740991.0", "90071992547409910e-1",
		"9.007199254740992e15", "-0", "-0.0", "0.0", "00", "1e0", "100e-2", "123456789012345678901234567890e-29",
	} {
		if json.Valid([]byte(s)) {
			checkInt(t, s)
		}
	}
}

func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{"2025-06-12T10:03:08.070Z", "2016-12-31T23:59:60Z", "2016-12-31T15:59:60-08:00", "2025-06-12T+1:-0:08Z", "2024-02-29t00:00:00.5+23:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDateTime(t, s)
	})
}

func FuzzClassifyInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.0", "1e2", "30E-1", "9007199254740991", "9007199254740992", "0e99999999999", "1.5", "-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
			return
		}
		s = strings.TrimSpace(s) // json.Valid allows surrounding white space
		if s != "" && (s[len(s)-1] < '0' || s[len(s)-1] > '9') {
			return
		}
		checkInt(t, s)
	})
}
