package metrics

import (
	"context"
	"fmt"
	"slices"

	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/queries"
)

// typesFragment is the file holding the one definition of a task's type.
const typesFragment = "analyze/mappings_task_types.sql"

// classifyingQuery returns the embedded analysis query name, one that
// classifies tasks by type, with the task-type fragment in place of its
// include line (queries.Expand). Both are constant files, so the text is
// assembled from no input; a query that does not include the fragment is a
// bug (tests run every query).
func classifyingQuery(name string) string {
	if incs, err := queries.Includes(name); err != nil || !slices.Contains(incs, typesFragment) {
		panic(fmt.Sprintf("metrics: %s does not include %s (%v)", name, typesFragment, err))
	}
	return queries.MustExpand(name)
}

// classifyingArgs are the parameters of a query that includes the task-type
// fragment: the filter's, the taxonomy's, and extra.
func classifyingArgs(f Filter, tax *taxonomy.Taxonomy, extra ...any) []any {
	args := append(f.Args(), tax.Args()...)
	return append(args, extra...)
}

// runClassifying runs the classifying query name and returns its rows with a
// reader.
func runClassifying(ctx context.Context, src Source, name string, f Filter, tax *taxonomy.Taxonomy, extra ...any) (*Table, error) {
	t, err := src.Query(ctx, classifyingQuery(name), classifyingArgs(f, tax, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", name, err)
	}
	return t, nil
}
