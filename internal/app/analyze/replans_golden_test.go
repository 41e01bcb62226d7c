package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/golden"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// What the replans, trend and effect tests share: a real DuckDB file built
// from JSON-lines fixtures, run() called as main calls it, golden outputs
// and JSON shapes.

// validSessions are the 14 hand-written sample sessions.
func validSessions(tb testing.TB) []string {
	tb.Helper()
	return testdb.SampleSessions(tb)
}

// fixture is a file of testdata/analyze.
func fixture(name string) string { return filepath.Join("../../../testdata/analyze", name) }

// buildEventsDB loads the JSON-lines files into a new DuckDB file through
// the ingester and returns its path, closed. With shuffle set, the lines of
// every file are loaded in a random order and in small batches, so that a
// session's events arrive out of order and across transactions.
func buildEventsDB(tb testing.TB, shuffle *rand.Rand, files ...string) string {
	tb.Helper()
	opts := testdb.Options{Shuffle: shuffle}
	if shuffle != nil {
		opts.BatchSize = 5
	}
	return testdb.Build(tb, opts, testdb.Files(tb, files...)...)
}

// runForOutput calls run as main does and returns what it printed.
func runForOutput(tb testing.TB, args ...string) string {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		tb.Fatalf("analyze %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

var generatedAt = regexp.MustCompile(`"generated_at": "[^"]*"`)

// runForJSON runs a command with -format json and returns its output with
// generated_at masked.
func runForJSON(tb testing.TB, args ...string) []byte {
	tb.Helper()
	out := runForOutput(tb, append(args, "-format", "json")...)
	return generatedAt.ReplaceAll([]byte(out), []byte(`"generated_at": "(masked)"`))
}

// decodeJSON decodes an output for assertions.
func decodeJSON(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("output is not JSON: %v\n%s", err, b)
	}
	return v
}

// checkGolden compares got with testdata/analyze/name, numbers to 1e-9
// (platforms may round the last bits differently), or rewrites it with
// -update.
func checkGolden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	golden.CheckJSON(tb, fixture(name), got)
}

// jsonShape adds the kind of every value in v, by path, to into: ".rows[].x"
// → {"number", "null"}. Array elements share the path of the array plus [].
func jsonShape(path string, v any, into map[string]map[string]bool) {
	kind := "null"
	switch x := v.(type) {
	case map[string]any:
		kind = "object"
		for k, e := range x {
			jsonShape(path+"."+k, e, into)
		}
	case []any:
		kind = "array"
		for _, e := range x {
			jsonShape(path+"[]", e, into)
		}
	case string:
		kind = "string"
	case float64:
		kind = "number"
	case bool:
		kind = "bool"
	}
	if into[path] == nil {
		into[path] = map[string]bool{}
	}
	into[path][kind] = true
}

// checkShape checks the union of the JSON shapes of outputs against the key
// list testdata/analyze/name: one line per path with the kinds seen there.
func checkShape(tb testing.TB, name string, outputs ...[]byte) {
	tb.Helper()
	shape := map[string]map[string]bool{}
	for _, o := range outputs {
		jsonShape("", decodeJSON(tb, o), shape)
	}
	var lines []string
	for p, kinds := range shape {
		ks := make([]string, 0, len(kinds))
		for k := range kinds {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		lines = append(lines, p+" "+strings.Join(ks, "|"))
	}
	sort.Strings(lines)
	got := strings.Join(lines, "\n") + "\n"
	golden.CheckWith(tb, fixture(name), []byte(got), func(got, want []byte) string {
		if bytes.Equal(got, want) {
			return ""
		}
		wl := strings.Split(strings.TrimSpace(string(want)), "\n")
		gl := strings.Split(strings.TrimSpace(string(got)), "\n")
		var missing, extra []string
		for _, l := range wl {
			if !slices.Contains(gl, l) {
				missing = append(missing, l)
			}
		}
		for _, l := range gl {
			if !slices.Contains(wl, l) {
				extra = append(extra, l)
			}
		}
		return fmt.Sprintf("JSON shape differs: a breaking change of the documented shape?\nmissing or changed:\n  %s\nnew:\n  %s",
			strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
	})
}

// rowsOf returns the rows of a decoded output.
func rowsOf(tb testing.TB, out map[string]any) []map[string]any {
	tb.Helper()
	rs, ok := out["rows"].([]any)
	if !ok {
		tb.Fatalf("rows are %T, want an array", out["rows"])
	}
	rows := make([]map[string]any, len(rs))
	for i, r := range rs {
		rows[i] = r.(map[string]any)
	}
	return rows
}

// interval reads a {lo, hi} field, or fails.
func interval(tb testing.TB, v any) (lo, hi float64) {
	tb.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		tb.Fatalf("interval is %v, want {lo, hi}", v)
	}
	return m["lo"].(float64), m["hi"].(float64)
}
