package metrics

import (
	"fmt"
	"math"
	"math/big"
)

// row reads the cells of one row of a query result by column name, for
// every analyzer. The first problem (a missing column, a value of another
// type, an integer out of int64 range) is kept in err and later reads
// return zero values, so that a caller checks err once per row (eachRow
// does).
type row struct {
	t     *Table
	cells []any
	err   error
}

// eachRow calls fn for every row of t and stops at the first error, its
// own or a reader's.
func eachRow(t *Table, fn func(r *row) error) error {
	for i, cells := range t.Rows {
		r := &row{t: t, cells: cells}
		err := fn(r)
		if err == nil {
			err = r.err
		}
		if err != nil {
			return fmt.Errorf("row %d: %w", i+1, err)
		}
	}
	return nil
}

func (r *row) cell(col string) any {
	if r.err != nil {
		return nil
	}
	i := r.t.Col(col)
	if i < 0 {
		r.err = fmt.Errorf("query result has no column %q (columns %v)", col, r.t.Columns)
		return nil
	}
	return r.cells[i]
}

func (r *row) fail(col string, v any, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("column %q: got %T %v, want %s", col, v, v, want)
	}
}

// int reads an integer column; NULL reads as 0.
func (r *row) int(col string) int64 {
	v := r.cell(col)
	n, ok := toInt64(v)
	if !ok {
		r.fail(col, v, "an integer in int64 range")
	}
	return n
}

// ints reads a list-of-integers column; NULL reads as nil, as NULL elements
// read as 0.
func (r *row) ints(col string) []int64 {
	switch v := r.cell(col).(type) {
	case nil:
		return nil
	case []any:
		out := make([]int64, len(v))
		for i, e := range v {
			n, ok := toInt64(e)
			if !ok {
				r.fail(col, e, "a list of integers in int64 range")
				return nil
			}
			out[i] = n
		}
		return out
	default:
		r.fail(col, v, "a list of integers")
		return nil
	}
}

// toInt64 converts an integer value as database/sql or the query service
// returns it; false when v is no integer or out of int64 range.
func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case nil:
		return 0, true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case uint32:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint8:
		return int64(x), true
	case *big.Int:
		return x.Int64(), x.IsInt64()
	}
	return 0, false
}

// float reads a numeric column; NULL reads as nil.
func (r *row) float(col string) *float64 {
	var f float64
	switch v := r.cell(col).(type) {
	case nil:
		return nil
	case float64:
		f = v
	case float32:
		f = float64(v)
	case int64:
		f = float64(v)
	case int32:
		f = float64(v)
	default:
		r.fail(col, v, "a number")
		return nil
	}
	return &f
}

// big reads an integer column of any size (a HUGEINT sum); NULL reads as
// nil.
func (r *row) big(col string) *big.Int {
	switch v := r.cell(col).(type) {
	case nil:
		return nil
	case *big.Int:
		return v
	default:
		n, ok := toInt64(v)
		if !ok {
			r.fail(col, v, "an integer")
			return nil
		}
		return big.NewInt(n)
	}
}

// bool reads a boolean column; NULL reads as false.
func (r *row) bool(col string) bool {
	switch v := r.cell(col).(type) {
	case nil:
		return false
	case bool:
		return v
	default:
		r.fail(col, v, "a boolean")
		return false
	}
}

// str reads a text column; NULL reads as nil.
func (r *row) str(col string) *string {
	switch v := r.cell(col).(type) {
	case nil:
		return nil
	case string:
		return &v
	default:
		r.fail(col, v, "text")
		return nil
	}
}

// text reads a text column; NULL reads as "".
func (r *row) text(col string) string {
	if s := r.str(col); s != nil {
		return *s
	}
	return ""
}

// need reads a text column that must not be NULL.
func (r *row) need(col string) string {
	s := r.str(col)
	if s == nil {
		r.fail(col, nil, "text, not NULL")
		return ""
	}
	return *s
}

// strs reads a VARCHAR[] column; NULL reads as an empty list, as do NULL
// elements.
func (r *row) strs(col string) []string {
	out := []string{}
	switch v := r.cell(col).(type) {
	case nil:
	case []any:
		for _, e := range v {
			switch s := e.(type) {
			case string:
				out = append(out, s)
			case nil:
			default:
				r.fail(col, e, "a list of text")
				return []string{}
			}
		}
	case []string:
		out = append(out, v...)
	default:
		r.fail(col, v, "a list of text")
	}
	return out
}

// group reads the grouping columns every analysis query returns. sparse
// groups leave the dimensions without a value out of JSON (see Group).
func (r *row) group(sparse bool) Group {
	dim := func(col string) Dim { return Dim{v: r.str(col), sparse: sparse} }
	return Group{
		Agent:        dim("agent"),
		AgentVersion: dim("agent_version"),
		Model:        dim("model"),
		TaskType:     dim("task_type"),
		Day:          dim("day"),
		Week:         dim("week"),
		Ruleset:      dim("ruleset"),
	}
}
