// Package taxonomytest classifies task descriptions in Go by the rule the
// SQL applies (queries/include/classify_case.sql): the oracle the tests hold
// the SQL classification, and the taxonomies' own patterns, to.
package taxonomytest

import (
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/evosignal/evosignal/internal/taxonomy"
)

// Classifier returns tax's classification in Go: the type of a description
// is the first type whose pattern, as tax binds it to the SQL
// ($tax_patterns of ClassifyArgs), matches the lower-cased description;
// with none, the fallback.
func Classifier(tax *taxonomy.Taxonomy) func(description string) string {
	var types, patterns []string
	for _, a := range tax.ClassifyArgs() {
		na, ok := a.(sql.NamedArg)
		if !ok {
			panic(fmt.Sprintf("taxonomytest: ClassifyArgs holds a %T, want sql.NamedArg", a))
		}
		switch na.Name {
		case "tax_types":
			types = na.Value.([]string)
		case "tax_patterns":
			patterns = na.Value.([]string)
		}
	}
	if len(types) == 0 || len(types) != len(patterns) {
		panic(fmt.Sprintf("taxonomytest: %d types and %d patterns in ClassifyArgs", len(types), len(patterns)))
	}
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		res[i] = regexp.MustCompile(p)
	}
	return func(description string) string {
		d := strings.ToLower(description)
		for i, re := range res {
			if re.MatchString(d) {
				return types[i]
			}
		}
		return tax.Fallback
	}
}
