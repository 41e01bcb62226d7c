package metrics

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/queries"
)

// typesFragment is the file holding the one definition of a task's type,
// and includeTypes the line by which an analysis query includes it.
const (
	typesFragment = "analyze/mappings_task_types.sql"
	includeTypes  = "-- @include analyze/mappings_task_types.sql"
)

// typedQuery returns the embedded analysis query name with the task-type
// fragment in place of its include line (queries.Expand). Both are
// constant files, so the text is assembled from no input; a query without
// the line is a bug (tests run every query).
func typedQuery(name string) string {
	if !strings.Contains(queries.MustRead(name), includeTypes) {
		panic(fmt.Sprintf("metrics: %s does not include %s", name, typesFragment))
	}
	return queries.MustExpand(name)
}

// typedArgs are the parameters of a query that includes the task-type
// fragment: the filter's, the taxonomy's, and extra.
func typedArgs(f Filter, tax *taxonomy.Taxonomy, extra ...any) []any {
	args := append(f.Args(), tax.Args()...)
	return append(args, extra...)
}

// runTyped runs the typed query name and returns its rows with a reader.
func runTyped(ctx context.Context, src Source, name string, f Filter, tax *taxonomy.Taxonomy, extra ...any) (*Table, error) {
	t, err := src.Query(ctx, typedQuery(name), typedArgs(f, tax, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", name, err)
	}
	return t, nil
}

// typedRow reads the columns of one result row by name. Its methods panic on a
// missing column (a mismatch between a .sql file and its reader, caught by
// the tests) and on a value of a type the column never has.
type typedRow struct {
	t   *Table
	row []any
}

func (c typedRow) get(col string) any {
	i := c.t.Col(col)
	if i < 0 {
		panic(fmt.Sprintf("metrics: result has no column %q (columns %v)", col, c.t.Columns))
	}
	return c.row[i]
}

// int reads an integer column; NULL is 0.
func (c typedRow) int(col string) int64 { return typedInt(c.get(col)) }

// str reads a text column; NULL is nil.
func (c typedRow) str(col string) *string {
	switch v := c.get(col).(type) {
	case nil:
		return nil
	case string:
		return &v
	default:
		panic(fmt.Sprintf("metrics: column %q is %T, want text", col, v))
	}
}

// ints reads a list-of-integers column; NULL is nil.
func (c typedRow) ints(col string) []int64 {
	switch v := c.get(col).(type) {
	case nil:
		return nil
	case []any:
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = typedInt(x)
		}
		return out
	default:
		panic(fmt.Sprintf("metrics: column %q is %T, want a list", col, v))
	}
}

func typedInt(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case int64:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint64:
		return int64(x)
	case uint32:
		return int64(x)
	case *big.Int:
		return x.Int64()
	default:
		panic(fmt.Sprintf("metrics: %v is %T, want an integer", v, v))
	}
}

// CallGroup names the group a row of hints or mappings belongs to: the
// dimensions of -by, each present (in JSON) only when grouped by it.
// task_type is the resolved task type.
type CallGroup struct {
	Agent        *string `json:"agent,omitempty"`
	AgentVersion *string `json:"agent_version,omitempty"`
	Model        *string `json:"model,omitempty"`
	TaskType     *string `json:"task_type,omitempty"`
	Day          *string `json:"day,omitempty"`
	Week         *string `json:"week,omitempty"`
	Ruleset      *string `json:"ruleset,omitempty"`
}

func readGroup(c typedRow) CallGroup {
	return CallGroup{
		Agent:        c.str("agent"),
		AgentVersion: c.str("agent_version"),
		Model:        c.str("model"),
		TaskType:     c.str("task_type"),
		Day:          c.str("day"),
		Week:         c.str("week"),
		Ruleset:      c.str("ruleset"),
	}
}

// key is the group as one comparable string.
func (g CallGroup) key() string {
	var b strings.Builder
	for _, p := range []*string{g.Agent, g.AgentVersion, g.Model, g.TaskType, g.Day, g.Week, g.Ruleset} {
		if p == nil {
			b.WriteString("\x01")
		} else {
			b.WriteString(*p)
		}
		b.WriteByte(0)
	}
	return b.String()
}
