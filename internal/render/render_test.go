package render

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Lo float64 `json:"lo"`
}

type row struct {
	Name  string    `json:"name"`
	Rate  *float64  `json:"rate"`
	NaN   float64   `json:"nan"`
	CI    *inner    `json:"ci"`
	Tags  []string  `json:"tags"`
	At    time.Time `json:"at"`
	Skip  string    `json:"-"`
	Count int64     `json:"count"`
}

func TestWrite(t *testing.T) {
	half := 0.5
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	rows := []row{
		{Name: "a", Rate: &half, NaN: math.NaN(), CI: &inner{Lo: 0.25}, Tags: []string{"x", "y"}, At: at, Skip: "hidden", Count: 3},
		{Name: "b"},
	}
	tests := []struct {
		name, format string
		want         []string
		notWant      []string
	}{
		{"table", "table", []string{"name  rate    nan     ci.lo   tags  at                    count\n",
			"a     0.5000          0.2500  x, y  2026-11-29T10:00:00Z  3\n", "note: n1"}, []string{"hidden", "NaN", "{", "["}},
		{"csv", "csv", []string{"name,rate,nan,ci,tags,at,count\n", "a,0.5000,,\"{\"\"lo\"\":0.25}\",\"[\"\"x\"\",\"\"y\"\"]\",2026-11-29T10:00:00Z,3\n", "b,,0.0000,,null,0001-01-01T00:00:00Z,0\n"}, []string{"hidden"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tt.format, &Envelope{Analysis: "x", Rows: rows, Notes: []string{"n1"}}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("Write(%s) = %q, want it to contain %q", tt.format, b.String(), w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("Write(%s) = %q, want no %q", tt.format, b.String(), w)
				}
			}
		})
	}
}

func TestWriteJSONEnvelope(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "json", &Envelope{Analysis: "replans", Rows: []struct {
		N int `json:"n"`
	}{{1}}}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["analysis"] != "replans" || got["version"] != float64(ShapeVersion) {
		t.Fatalf("envelope = %v, want analysis replans, version %d", got, ShapeVersion)
	}
}

func TestWriteRejects(t *testing.T) {
	for _, tt := range []struct {
		name, format string
		rows         any
	}{
		{"unknown format", "xml", []row{}},
		{"rows not a slice", "table", row{}},
		{"slice of non-structs", "csv", []int{1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := Write(&bytes.Buffer{}, tt.format, &Envelope{Rows: tt.rows}); err == nil {
				t.Fatalf("Write(%s, %T) succeeded, want an error", tt.format, tt.rows)
			}
		})
	}
}

// label has a text form of its own, as metrics.Dim has.
type label struct{ s string }

func (l label) String() string { return l.s }

type grouped struct {
	Embedded
	Calls int64 `json:"calls"`
}

type Embedded struct {
	Agent label `json:"agent"`
	Model label `json:"model"`
}

// Omit leaves columns out of table and CSV, embedded ones too; a
// fmt.Stringer shows as its text.
func TestWriteOmit(t *testing.T) {
	rows := []grouped{{Embedded{label{"coder"}, label{"m1"}}, 3}}
	for _, format := range []string{"table", "csv"} {
		var b bytes.Buffer
		if err := Write(&b, format, &Envelope{Rows: rows, Omit: []string{"model"}}); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); strings.Contains(got, "model") || strings.Contains(got, "m1") || !strings.Contains(got, "coder") {
			t.Errorf("Write(%s, Omit model) =\n%s\nwant agent and calls only", format, got)
		}
	}
}

// ndjson prints the rows alone, one JSON object a line.
func TestWriteNDJSON(t *testing.T) {
	type r struct {
		N    int      `json:"n"`
		Tags []string `json:"tags"`
	}
	var b bytes.Buffer
	if err := Write(&b, "ndjson", &Envelope{Analysis: "x", Rows: []r{{1, []string{"a"}}, {2, nil}}, Notes: []string{"n1"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "{\"n\":1,\"tags\":[\"a\"]}\n{\"n\":2,\"tags\":null}\n"; got != want {
		t.Fatalf("Write(ndjson) = %q, want %q", got, want)
	}
}
