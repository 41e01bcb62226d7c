package sqlservice

import (
	"strings"
	"testing"
)

func TestParseType(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"simple", "INTEGER", "INTEGER"},
		{"alias", "JSON", "JSON"},
		{"decimal", "DECIMAL(38,2)", "DECIMAL(38,2)"},
		{"list", "VARCHAR[]", "VARCHAR[]"},
		{"list of lists", "BIGINT[][]", "BIGINT[][]"},
		{"array", "INTEGER[3]", "INTEGER[3]"},
		{"array of lists", "INTEGER[][2]", "INTEGER[][2]"},
		{"struct", `STRUCT("a" INTEGER, "b c" VARCHAR[])`, `STRUCT("a" INTEGER, "b c" VARCHAR[])`},
		{"struct quote", `STRUCT("a""b" INTEGER)`, `STRUCT("a""b" INTEGER)`},
		{"struct bare names", `STRUCT(a INTEGER, b DOUBLE)`, `STRUCT("a" INTEGER, "b" DOUBLE)`},
		{"map", "MAP(VARCHAR, STRUCT(\"x\" TIMESTAMPTZ)[])", "MAP(VARCHAR, STRUCT(\"x\" TIMESTAMPTZ)[])"},
		{"union", `UNION("n" INTEGER, "s" VARCHAR)`, `UNION("n" INTEGER, "s" VARCHAR)`},
		{"lower case", "timestamp_ns", "TIMESTAMP_NS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseType(tc.in)
			if err != nil {
				t.Fatalf("ParseType(%q) = %v", tc.in, err)
			}
			if got.String() != tc.want {
				t.Fatalf("ParseType(%q).String() = %q, want %q", tc.in, got, tc.want)
			}
			again, err := ParseType(got.String())
			if err != nil || again.String() != got.String() {
				t.Fatalf("round trip of %q = %v, %v", got, again, err)
			}
		})
	}
}

func TestParseTypeErrors(t *testing.T) {
	for _, in := range []string{"", "[]", "INTEGER[", "INTEGER[x]", "DECIMAL(40,2)", "DECIMAL(3,4)", "STRUCT(", `STRUCT("a INTEGER)`,
		"MAP(INTEGER)", "INTEGER junk", strings.Repeat("STRUCT(a ", 100) + "INTEGER" + strings.Repeat(")", 100)} {
		if got, err := ParseType(in); err == nil {
			t.Errorf("ParseType(%q) = %v, want an error", in, got)
		}
	}
}

// FuzzParseType: whatever a type string holds (it comes from the service),
// parsing ends without panic and what it parses round-trips.
func FuzzParseType(f *testing.F) {
	for _, s := range []string{"INTEGER", "DECIMAL(18,3)", `STRUCT("a" INTEGER[], "b" MAP(VARCHAR, JSON))[2]`, `UNION("x" BIT)`, "X[][][]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ, err := ParseType(s)
		if err != nil {
			return
		}
		again, err := ParseType(typ.String())
		if err != nil || again.String() != typ.String() {
			t.Fatalf("ParseType(%q) = %q, which parses as %v, %v", s, typ, again, err)
		}
		arrowType(typ) // every parsed type has a layout
	})
}
