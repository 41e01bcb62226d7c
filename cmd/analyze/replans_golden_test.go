package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
)

// What the replans, trend and effect tests share: a real DuckDB file built
// from JSON-lines fixtures, run() called as main calls it, golden outputs
// and JSON shapes.

// validSessions are the 14 hand-written sample sessions.
func validSessions(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("../../testdata/events/valid/*.jsonl")
	if err != nil || len(files) == 0 {
		tb.Fatalf("sample sessions: %v (found %d)", err, len(files))
	}
	return files
}

// fixture is a file of testdata/analyze.
func fixture(name string) string { return filepath.Join("../../testdata/analyze", name) }

// buildEventsDB loads the JSON-lines files into a new DuckDB file through
// the ingester and returns its path, closed. With shuffle set, the lines of
// every file are loaded in a random order and in small batches, so that a
// session's events arrive out of order and across transactions.
func buildEventsDB(tb testing.TB, shuffle *rand.Rand, files ...string) string {
	tb.Helper()
	ctx := context.Background()
	path := filepath.Join(tb.TempDir(), "evo.duckdb")
	st, err := store.Open(ctx, path)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	defer st.Close()
	cfg := ingest.DefaultConfig()
	if shuffle != nil {
		cfg.BatchSize = 5
	}
	in, err := ingest.New(cfg, st, nil)
	if err != nil {
		tb.Fatalf("new ingester: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if shuffle != nil {
			lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
			shuffle.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
			b = bytes.Join(lines, []byte("\n"))
		}
		res, err := in.LoadFile(ctx, bytes.NewReader(b), f)
		if err != nil {
			tb.Fatalf("load %s: %v", f, err)
		}
		if res.DeadLetters > 0 || res.Accepted == 0 {
			tb.Fatalf("load %s: %+v, want every line accepted", f, res)
		}
	}
	if err := st.Close(); err != nil {
		tb.Fatalf("close store: %v", err)
	}
	return path
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

// updateGolden reports whether -update was given: golden files are then
// rewritten instead of compared. The flag is defined in trend_test.go.
func updateGolden() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	v, _ := g.Get().(bool)
	return v
}

// checkGolden compares got with testdata/analyze/name, numbers to 1e-9
// (platforms may round the last bits differently), or rewrites it with
// -update.
func checkGolden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	path := fixture(name)
	if updateGolden() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("golden file: %v (run go test ./cmd/analyze -update to create it)", err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		tb.Fatalf("output is not JSON: %v", err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		tb.Fatalf("golden %s is not JSON: %v", name, err)
	}
	if d := jsonDiff("", g, w); d != "" {
		tb.Fatalf("output differs from %s at %s\n(run go test ./cmd/analyze -update and review the diff)\ngot:\n%s", name, d, got)
	}
}

// jsonDiff returns the path of the first difference between got and want.
func jsonDiff(path string, got, want any) string {
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
			if d := jsonDiff(path+"."+k, gv, wv); d != "" {
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
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); d != "" {
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
	path := fixture(name)
	if updateGolden() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("key list: %v (run go test ./cmd/analyze -update to create it)", err)
	}
	if got != string(want) {
		wl := strings.Split(strings.TrimSpace(string(want)), "\n")
		gl := strings.Split(strings.TrimSpace(got), "\n")
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
		tb.Fatalf("JSON shape differs from %s: a breaking change of the documented shape?\nmissing or changed:\n  %s\nnew:\n  %s",
			name, strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
	}
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
