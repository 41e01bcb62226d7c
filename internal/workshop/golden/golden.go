// Package golden compares test output with golden files, and rewrites them
// when the test binary runs with -update:
//
//	go test ./internal/app/analyze ./internal/events -update
//
// then review the diff. Importing the package defines the -update flag, once
// for the test binary; only the packages whose tests import it take the flag.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files with the output of the tests instead of comparing")

// Update reports whether -update was given.
func Update() bool { return *update }

// Diff describes how got differs from want, or returns "" when they agree.
type Diff func(got, want []byte) string

// Check compares got with the file at path byte for byte, or writes got to
// it with -update.
func Check(tb testing.TB, path string, got []byte) {
	tb.Helper()
	CheckWith(tb, path, got, func(got, want []byte) string {
		if bytes.Equal(got, want) {
			return ""
		}
		return "contents differ"
	})
}

// CheckJSON compares got with the JSON document at path: same keys and
// values, numbers equal to 1e-9 (platforms may round the last bits
// differently). With -update it writes got to path as it is.
func CheckJSON(tb testing.TB, path string, got []byte) {
	tb.Helper()
	CheckWith(tb, path, got, func(got, want []byte) string {
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			return fmt.Sprintf("output is not JSON: %v", err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			return fmt.Sprintf("golden file is not JSON: %v", err)
		}
		if d := JSONDiff("", g, w); d != "" {
			return "at " + d
		}
		return ""
	})
}

// CheckWith compares got with the file at path by diff, or writes got to it
// with -update.
func CheckWith(tb testing.TB, path string, got []byte, diff Diff) {
	tb.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatalf("update golden file: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("golden file: %v (run the test with -update to create it)", err)
	}
	if d := diff(got, want); d != "" {
		tb.Fatalf("output differs from %s: %s\n(run the test with -update and review the diff)\ngot:\n%s", path, d, got)
	}
}

// JSONDiff returns the path of the first difference between two decoded
// JSON values, numbers compared to 1e-9, or "".
func JSONDiff(path string, got, want any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %T, want an object", path, got)
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, gok := g[k]
			wv, wok := w[k]
			if gok != wok {
				return fmt.Sprintf("%s.%s: present %v, want %v", path, k, gok, wok)
			}
			if d := JSONDiff(path+"."+k, gv, wv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %v, want %d elements", path, got, len(w))
		}
		for i := range w {
			if d := JSONDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); d != "" {
				return d
			}
		}
		return ""
	case float64:
		g, ok := got.(float64)
		if !ok || math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
			return fmt.Sprintf("%s: got %v, want %v", path, got, w)
		}
		return ""
	}
	if got != want {
		return fmt.Sprintf("%s: got %v, want %v", path, got, want)
	}
	return ""
}
