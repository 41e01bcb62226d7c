// Package taxonomy classifies task descriptions into task types. The store
// classifies its stored facts with one, and the analyzers pass one to their
// queries; it sits below both and imports neither.
package taxonomy

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"unicode"
)

// MaxTypes is the number of types the SQL classification reads
// (one CASE branch each in queries/analyze/mappings_task_types.sql).
const MaxTypes = 32

// defaultTaxonomy is the taxonomy used without -taxonomy: coding, testing,
// filesystem, search, execution, docs, analysis, memory, planning and
// security, with general as the fallback, in English and Chinese.
//
//go:embed default.json
var defaultTaxonomy []byte

// Taxonomy classifies task descriptions into task types. Its file (JSON):
//
//	{
//	  "name": "evosignal-default",
//	  "version": "1",
//	  "fallback": "general",
//	  "types": [
//	    {"type": "testing", "keywords": ["test", "测试"], "patterns": ["\\bpytest\\b"]},
//	    …
//	  ]
//	}
//
// Types are tried in file order; the first that matches a description wins,
// and a description nothing matches is of type fallback. A keyword is a
// literal, matched case-insensitively: one written in ASCII letters
// matches at the start of a word ("test" matches "tests" and "TestUpload",
// not "latest"); one with any other character (Chinese) matches anywhere.
// A pattern is an RE2 regular expression, matched anywhere in the lower-cased
// description (write it in lower case).
//
// The classification runs in SQL (queries/analyze/mappings_task_types.sql):
// each type's keywords and patterns are compiled into one RE2 alternation,
// passed as the parallel lists $tax_types and $tax_patterns (at most
// MaxTypes). The tests classify in Go by the same rule
// (internal/workshop/taxonomytest) and hold the SQL to it.
type Taxonomy struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Fallback string `json:"fallback"`
	Types    []Type `json:"types"`

	patterns []string // one per type, as bound to $tax_patterns
	id       string
}

// Type is one task type of a taxonomy.
type Type struct {
	Type     string   `json:"type"`
	Keywords []string `json:"keywords,omitempty"`
	Patterns []string `json:"patterns,omitempty"`
}

// DefaultTaxonomy returns the embedded default taxonomy
// (internal/taxonomy/default.json).
func Default() *Taxonomy {
	t, err := Parse(defaultTaxonomy)
	if err != nil {
		panic(fmt.Sprintf("taxonomy: embedded default: %v", err)) // checked by tests
	}
	return t
}

// LoadTaxonomy reads a taxonomy file; an empty path is the default taxonomy.
func Load(path string) (*Taxonomy, error) {
	if path == "" {
		return Default(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read taxonomy: %w", err)
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("taxonomy %s: %w", path, err)
	}
	return t, nil
}

// ParseTaxonomy decodes a taxonomy file and checks it, reporting every
// problem at once. Unknown members are an error (a misspelt "keyword" must
// not silently classify nothing).
func Parse(b []byte) (*Taxonomy, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var t Taxonomy
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("decode taxonomy: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decode taxonomy: data after the taxonomy object")
	}
	if err := t.compile(); err != nil {
		return nil, err
	}
	return &t, nil
}

// compile validates t and builds one pattern per type.
func (t *Taxonomy) compile() error {
	var errs []error
	if strings.TrimSpace(t.Name) == "" {
		errs = append(errs, errors.New("no name"))
	}
	if strings.TrimSpace(t.Version) == "" {
		errs = append(errs, errors.New("no version"))
	}
	if !validTypeName(t.Fallback) {
		errs = append(errs, fmt.Errorf("fallback %q: want a non-empty name without spaces", t.Fallback))
	}
	if len(t.Types) == 0 {
		errs = append(errs, errors.New("no types"))
	}
	if len(t.Types) > MaxTypes {
		errs = append(errs, fmt.Errorf("%d types: at most %d", len(t.Types), MaxTypes))
	}
	seen := map[string]bool{}
	t.patterns = nil
	for i, ty := range t.Types {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("type %d (%q): %s", i+1, ty.Type, fmt.Sprintf(format, args...)))
		}
		switch {
		case !validTypeName(ty.Type):
			bad("want a non-empty name without spaces")
		case seen[ty.Type]:
			bad("listed twice")
		case ty.Type == t.Fallback:
			bad("is the fallback")
		}
		seen[ty.Type] = true
		var alts []string
		for _, k := range ty.Keywords {
			k = strings.ToLower(strings.TrimSpace(k))
			if k == "" {
				bad("empty keyword")
				continue
			}
			alts = append(alts, keywordPattern(k))
		}
		for _, p := range ty.Patterns {
			if _, err := regexp.Compile(p); err != nil {
				bad("pattern %q: %v", p, err)
				continue
			}
			alts = append(alts, "(?:"+p+")")
		}
		if len(ty.Keywords)+len(ty.Patterns) == 0 {
			bad("no keywords or patterns")
		}
		src := strings.Join(alts, "|")
		if _, err := regexp.Compile(src); err != nil {
			bad("%v", err)
			continue
		}
		t.patterns = append(t.patterns, src)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", t.Fallback)
	for i, ty := range t.Types {
		fmt.Fprintf(h, "%s\x00%s\x00", ty.Type, t.patterns[i])
	}
	t.id = t.Name + "@" + t.Version + "+" + hex.EncodeToString(h.Sum(nil))[:12]
	return nil
}

func validTypeName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, unicode.IsSpace)
}

// keywordPattern is the RE2 source matching keyword k (lower case): at the
// start of a word when k is all ASCII, anywhere otherwise (scripts without
// spaces between words, such as Chinese).
func keywordPattern(k string) string {
	q := regexp.QuoteMeta(k)
	for _, r := range k {
		if r > unicode.MaxASCII {
			return q
		}
	}
	if c := k[0]; c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' {
		return `\b` + q
	}
	return q // starts with punctuation: no word boundary to anchor to
}

// ID is the taxonomy's version as recorded with every result
// (render.Envelope.Classifier): name@version+hash, where hash is the first
// 12 hex digits of the SHA-256 of the compiled types and patterns, so that
// two files that classify alike have the same ID and an edited file that
// kept its version does not.
func (t *Taxonomy) ID() string { return t.id }

// Keywords returns the literal keywords of taskType, or nil when the
// taxonomy does not list it.
func (t *Taxonomy) Keywords(taskType string) []string {
	for _, ty := range t.Types {
		if ty.Type == taskType {
			return ty.Keywords
		}
	}
	return nil
}

// Args are the taxonomy's named parameters: $tax_types, $tax_patterns
// (parallel lists, priority = position), $tax_fallback, and $tax_id (ID:
// the stored facts' classification is used when it was made with this
// taxonomy, see facts_classifier).
func (t *Taxonomy) Args() []any {
	return append(t.ClassifyArgs(),
		sql.Named("tax_fallback", t.Fallback),
		sql.Named("tax_id", t.id))
}

// ClassifyArgs are the parameters of queries/include/classify_case.sql:
// $tax_types and $tax_patterns.
func (t *Taxonomy) ClassifyArgs() []any {
	types := make([]string, len(t.Types))
	for i, ty := range t.Types {
		types[i] = ty.Type
	}
	return []any{
		sql.Named("tax_types", types),
		sql.Named("tax_patterns", append([]string(nil), t.patterns...)),
	}
}
