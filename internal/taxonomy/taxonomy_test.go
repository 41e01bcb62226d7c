package taxonomy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestDefaultTaxonomy(t *testing.T) {
	tax := Default()
	var types []string
	for _, ty := range tax.Types {
		types = append(types, ty.Type)
	}
	slices.Sort(types)
	want := []string{"analysis", "coding", "docs", "execution", "filesystem", "memory", "planning", "search", "security", "testing"}
	if !slices.Equal(types, want) {
		t.Fatalf("default types = %v, want %v", types, want)
	}
	if tax.Fallback != "general" {
		t.Fatalf("fallback = %q, want general", tax.Fallback)
	}
	if !regexp.MustCompile(`^evosignal-default@1\+[0-9a-f]{12}$`).MatchString(tax.ID()) {
		t.Fatalf("ID() = %q, want evosignal-default@1+<12 hex digits>", tax.ID())
	}
	for _, ty := range tax.Types {
		var zh bool
		for _, k := range ty.Keywords {
			zh = zh || strings.ContainsFunc(k, func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff })
		}
		if !zh {
			t.Errorf("type %s has no Chinese keyword", ty.Type)
		}
	}
}

func TestParseTaxonomy(t *testing.T) {
	tests := []struct {
		name string
		file string
		errs []string // substrings of the error, all reported at once
	}{
		{"valid", `{"name":"t","version":"2","fallback":"other","types":[{"type":"a","keywords":["x"]},{"type":"b","patterns":["y+"]}]}`, nil},
		{"unknown member", `{"name":"t","version":"2","fallback":"other","types":[{"type":"a","keyword":["x"]}]}`, []string{"unknown field"}},
		{"every problem", `{"name":"","version":"","fallback":"a","types":[{"type":"a","keywords":[" "]},{"type":"b","patterns":["("]},{"type":"b"},{"type":"c d","keywords":["x"]}]}`,
			[]string{"no name", "no version", `type 1 ("a"): is the fallback`, `type 1 ("a"): empty keyword`, `type 2 ("b"): pattern "("`,
				`type 3 ("b"): listed twice`, `type 3 ("b"): no keywords or patterns`, `type 4 ("c d"): want a non-empty name`}},
		{"no types", `{"name":"t","version":"1","fallback":"g","types":[]}`, []string{"no types"}},
		{"too many types", manyTypes(MaxTypes + 1), []string{"33 types: at most 32"}},
		{"as many types as the SQL reads", manyTypes(MaxTypes), nil},
		{"trailing data", `{"name":"t","version":"1","fallback":"g","types":[{"type":"a","keywords":["x"]}]} {}`, []string{"data after"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.file))
			if len(tt.errs) == 0 {
				if err != nil {
					t.Fatalf("ParseTaxonomy = %v, want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseTaxonomy = nil, want errors %q", tt.errs)
			}
			for _, e := range tt.errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("ParseTaxonomy error %q does not mention %q", err, e)
				}
			}
		})
	}
}

// The ID follows what classifies, not how the file is written.
func TestTaxonomyID(t *testing.T) {
	a, err := Parse([]byte(`{"name":"t","version":"1","fallback":"g","types":[{"type":"a","keywords":["x","Y"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse([]byte("{\n  \"version\": \"1\", \"name\": \"t\",\n  \"types\": [{\"type\": \"a\", \"keywords\": [\" x \", \"y\"]}], \"fallback\": \"g\"\n}"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte(`{"name":"t","version":"1","fallback":"g","types":[{"type":"a","keywords":["x","z"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.ID() != b.ID() {
		t.Errorf("reformatted taxonomy: ID %s, want %s", b.ID(), a.ID())
	}
	if a.ID() == c.ID() {
		t.Errorf("changed keyword kept ID %s", a.ID())
	}
}

func TestKeywordPattern(t *testing.T) {
	tests := []struct {
		keyword, text string
		want          bool
	}{
		{"test", "run the tests", true},
		{"test", "testupload", true},
		{"test", "the latest", false},
		{"api key", "rotate the api key", true},
		{"测试", "运行单元测试", true},
		{"c++", "a c++ build", true},
		{"a.b", "axb", false}, // quoted: the dot is literal
	}
	for _, tt := range tests {
		re := regexp.MustCompile(keywordPattern(tt.keyword))
		if got := re.MatchString(tt.text); got != tt.want {
			t.Errorf("keyword %q on %q = %v, want %v", tt.keyword, tt.text, got, tt.want)
		}
	}
}

// manyTypes is a taxonomy file with n types.
func manyTypes(n int) string {
	types := make([]string, n)
	for i := range types {
		types[i] = fmt.Sprintf(`{"type":"t%d","keywords":["k%d"]}`, i, i)
	}
	return `{"name":"many","version":"1","fallback":"g","types":[` + strings.Join(types, ",") + `]}`
}
