package sqlservice

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// MaxBuiltValue is the largest value, in bytes, a query may build with one
// of the functions whose result size is an argument (repeat, lpad, rpad,
// bar, list_resize, array_resize, printf and format widths, the list form
// of range and generate_series).
//
// DuckDB's memory_limit does not hold these values: they are allocated
// outside its buffer pool, in the vector being computed, and DuckDB checks
// for an interrupt only between vectors, so neither a time limit nor the
// memory watchdog can stop one call once it runs (measured: SELECT
// length(repeat('x', 1000000000)) took 2 GiB of RSS and ran 25 s past a
// 10 s time limit). The guard refuses them before they run instead: the
// size argument must be a constant, and the result at most this large. A
// vector of 2048 such values is then at most 128 MiB.
const MaxBuiltValue = 64 << 10 // 64 KiB

// checkSizes refuses calls of the size-building functions whose result is
// unbounded or larger than MaxBuiltValue.
func checkSizes(tree any) error {
	var bad []string
	walkCalls(tree, func(name string, args []any) {
		if msg := sizeProblem(name, args); msg != "" {
			bad = append(bad, msg)
		}
	}, 0)
	if len(bad) > 0 {
		return refused("%s: the query service answers values of at most %d bytes built by these functions (MaxBuiltValue), and their size must be a constant",
			strings.Join(bad, "; "), MaxBuiltValue)
	}
	return nil
}

// walkCalls calls f with the name and arguments of every scalar function
// call of a parse tree.
func walkCalls(v any, f func(name string, args []any), depth int) {
	if depth > 10000 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "TABLE_FUNCTION" {
			// A table function makes rows one vector at a time (range,
			// repeat): its arguments are checked, not the call.
			fn, _ := x["function"].(map[string]any)
			walkCalls(fn["children"], f, depth+1)
			for k, e := range x {
				if k != "function" {
					walkCalls(e, f, depth+1)
				}
			}
			return
		}
		if x["class"] == "FUNCTION" {
			if name, ok := x["function_name"].(string); ok {
				args, _ := x["children"].([]any)
				f(strings.ToLower(name), args)
			}
		}
		for _, e := range x {
			walkCalls(e, f, depth+1)
		}
	case []any:
		for _, e := range x {
			walkCalls(e, f, depth+1)
		}
	}
}

// sizeProblem says what is wrong with one call, or "".
func sizeProblem(name string, args []any) string {
	n := func(i int) (float64, bool) {
		if i >= len(args) {
			return 0, false
		}
		return constNumber(args[i])
	}
	over := func(size float64) string {
		if size > MaxBuiltValue {
			return fmt.Sprintf("%s() would build a value of %.0f bytes", name, size)
		}
		return ""
	}
	switch name {
	case "repeat":
		cnt, ok := n(1)
		if !ok {
			return "repeat() with a count that is not a constant"
		}
		unit, ok := builtBound(args[0])
		if !ok {
			return "repeat() of a value whose size is not known before it runs (repeat a constant)"
		}
		return over(unit * cnt)
	case "lpad", "rpad":
		width, ok := n(1)
		if !ok {
			return name + "() with a width that is not a constant"
		}
		return over(4 * width) // characters of up to 4 bytes
	case "bar":
		if len(args) < 4 {
			return "" // the default width, 80
		}
		width, ok := n(3)
		if !ok {
			return "bar() with a width that is not a constant"
		}
		return over(4 * width)
	case "list_resize", "array_resize":
		size, ok := n(1)
		if !ok {
			return name + "() with a size that is not a constant"
		}
		return over(16 * size)
	case "range", "generate_series": // the list form; the table form is a TABLE_FUNCTION
		cnt, ok := rangeCount(args, n)
		if !ok {
			return name + "() as a list with bounds that are not numeric constants (FROM " + name + "(…) makes rows instead)"
		}
		return over(8 * cnt)
	case "printf", "format":
		if len(args) == 0 {
			return ""
		}
		f, ok := constString(args[0])
		if !ok {
			return name + "() with a format that is not a constant"
		}
		if bigWidth.MatchString(f) {
			return name + "() with a width or precision of five digits or more, or taken from an argument"
		}
	}
	return ""
}

// bigWidth finds widths and precisions of printf ("%1000000s", "%*s") and
// format ("{:>1000000}", "{:{}}") that could build a large value.
var bigWidth = regexp.MustCompile(`\d{5,}|%[-+ #0]*\*|\.\*|\{[^}]*\{`)

// rangeCount is how many elements range(…) or generate_series(…) makes
// from constant bounds.
func rangeCount(args []any, n func(int) (float64, bool)) (float64, bool) {
	start, stop, step := 0.0, 0.0, 1.0
	var ok bool
	switch len(args) {
	case 1:
		stop, ok = n(0)
	case 2, 3:
		var ok1, ok2 bool
		start, ok1 = n(0)
		stop, ok2 = n(1)
		ok = ok1 && ok2
		if len(args) == 3 {
			var ok3 bool
			step, ok3 = n(2)
			ok = ok && ok3 && step != 0
		}
	}
	if !ok {
		return 0, false
	}
	return math.Max(0, (stop-start)/step) + 1, true
}

// builtBound is the largest size, in bytes, of an expression's value when
// it can be known from the query: a constant, or a call of a size-building
// function with constant arguments.
func builtBound(e any) (float64, bool) {
	if s, ok := constString(e); ok {
		return float64(len(s)), true
	}
	if _, ok := constNumber(e); ok {
		return 40, true
	}
	x, _ := e.(map[string]any)
	name, _ := x["function_name"].(string)
	args, _ := x["children"].([]any)
	if x["class"] != "FUNCTION" || len(args) < 2 {
		return 0, false
	}
	size, ok := constNumber(args[1])
	switch strings.ToLower(name) {
	case "repeat":
		unit, uok := builtBound(args[0])
		return unit * size, ok && uok
	case "lpad", "rpad":
		return 4 * size, ok
	}
	return 0, false
}

// constant returns the value of a constant expression, looking through
// casts of constants.
func constant(e any) (any, bool) {
	x, ok := e.(map[string]any)
	if !ok {
		return nil, false
	}
	switch x["class"] {
	case "CONSTANT":
		v, _ := x["value"].(map[string]any)
		if null, _ := v["is_null"].(bool); null || v == nil {
			return nil, false
		}
		return v["value"], true
	case "CAST":
		return constant(x["child"])
	}
	return nil, false
}

func constNumber(e any) (float64, bool) {
	v, ok := constant(e)
	if !ok {
		return 0, false
	}
	f, ok := v.(float64)
	return f, ok
}

func constString(e any) (string, bool) {
	v, ok := constant(e)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}
