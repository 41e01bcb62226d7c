package analyze

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hints, mappings and rules tests share the helpers of
// replans_golden_test.go (a DuckDB file built from fixtures, run() called as
// main calls it, goldens and JSON key lists).

func TestHintsGolden(t *testing.T) {
	valid := buildEventsDB(t, nil, validSessions(t)...)
	edge := buildEventsDB(t, nil, fixture("hints_edge.jsonl"))
	tests := []struct {
		name, golden string
		args         []string
	}{
		{"sample sessions by task type", "hints_valid_by_task_type.golden.json", []string{"-db", valid, "-by", "task_type"}},
		{"edge cases", "hints_edge.golden.json", []string{"-db", edge, "-min-calls", "3"}},
		{"edge cases by task type", "hints_edge_by_task_type.golden.json", []string{"-db", edge, "-by", "task_type"}},
		{"no session matches", "hints_empty.golden.json", []string{"-db", edge, "-agent", "nobody"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, tt.golden, runForJSON(t, append([]string{"hints"}, tt.args...)...))
		})
	}
}

// Shuffled lines, loaded in small batches, give the same output for the
// three commands.
func TestHintsMappingsRulesOutOfOrder(t *testing.T) {
	sets := []struct {
		name  string
		files []string
		args  [][]string
	}{
		{"sample sessions", validSessions(t), [][]string{{"hints", "-by", "task_type"}, {"mappings"}, {"rules", "-min-calls", "1"}}},
		{"hints edge", []string{fixture("hints_edge.jsonl")}, [][]string{{"hints"}, {"hints", "-by", "task_type,agent"}, {"mappings"}}},
		{"mappings weeks", []string{fixture("mappings_weeks.jsonl")}, [][]string{{"mappings"}, {"mappings", "-windows", "2"}}},
		{"rules swaps", []string{fixture("rules_swaps.jsonl")}, [][]string{{"rules", "-min-calls", "5", "-prefer-success", "0.6", "-replace-success", "0.4"}}},
	}
	for i, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			inOrder := buildEventsDB(t, nil, set.files...)
			shuffled := buildEventsDB(t, rand.New(rand.NewPCG(uint64(i), 7)), set.files...)
			for _, args := range set.args {
				want := runForJSON(t, append(args, "-db", inOrder)...)
				got := runForJSON(t, append(args, "-db", shuffled)...)
				if !bytes.Equal(got, want) {
					t.Fatalf("analyze %s: shuffled input changes the output\nin order:\n%s\nshuffled:\n%s", strings.Join(args, " "), want, got)
				}
			}
		})
	}
}

func TestHintsShape(t *testing.T) {
	valid := buildEventsDB(t, nil, validSessions(t)...)
	edge := buildEventsDB(t, nil, fixture("hints_edge.jsonl"))
	checkShape(t, "hints.shape.txt",
		runForJSON(t, "hints", "-db", edge),
		runForJSON(t, "hints", "-db", edge, "-by", "task_type", "-min-calls", "1"),
		runForJSON(t, "hints", "-db", valid, "-by", "agent,agent_version,model,task_type,day,week,ruleset"),
		runForJSON(t, "hints", "-db", valid, "-since", "2025-06-01", "-until", "2025-07-01", "-agent", "coder", "-model", "gpt-4.1-mini", "-task-type", "coding"),
		runForJSON(t, "hints", "-db", valid, "-agent", "nobody"),
	)
}

// Table and CSV show the dimensions grouped by and no others.
func TestHintsFormats(t *testing.T) {
	db := buildEventsDB(t, nil, fixture("hints_edge.jsonl"))
	table := runForOutput(t, "hints", "-db", db, "-format", "table", "-by", "task_type")
	head := strings.Fields(strings.SplitN(table, "\n", 2)[0])
	if len(head) < 3 || head[0] != "task_type" || head[1] != "hint" || strings.Contains(table, "agent_version") {
		t.Fatalf("table header %v, want task_type, hint, … and no other dimension", head)
	}
	csv := runForOutput(t, "hints", "-db", db, "-format", "csv")
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if !strings.HasPrefix(lines[0], "hint,calls,failed,failure_rate,failure_ci,") || len(lines) != 8 {
		t.Fatalf("csv = %q, want a header starting with hint and 7 hints", csv)
	}
}

// A taxonomy file replaces the default: its version is recorded, and its
// types are the ones rows are grouped by.
func TestHintsTaxonomyFlag(t *testing.T) {
	db := buildEventsDB(t, nil, fixture("hints_edge.jsonl"))
	path := filepath.Join(t.TempDir(), "tax.json")
	tax := `{"name": "tiny", "version": "7", "fallback": "other", "types": [{"type": "fixing", "keywords": ["fix", "修复"]}]}`
	if err := os.WriteFile(path, []byte(tax), 0o644); err != nil {
		t.Fatal(err)
	}
	out := decodeJSON(t, runForJSON(t, "hints", "-db", db, "-by", "task_type", "-taxonomy", path))
	if c, _ := out["classifier"].(string); !strings.HasPrefix(c, "tiny@7+") {
		t.Fatalf("classifier %q, want tiny@7+<hash>", c)
	}
	types := map[string]bool{}
	for _, r := range rowsOf(t, out) {
		types[r["task_type"].(string)] = true
	}
	// he-1 and he-4 tasks are classified (fixing or other); he-2 has the
	// session type docs, he-3 the task type security.
	for _, want := range []string{"fixing", "other", "docs", "security"} {
		if !types[want] {
			t.Errorf("no rows of type %s in %v", want, types)
		}
	}
	if len(types) != 4 {
		t.Errorf("types %v, want fixing, other, docs, security", types)
	}
}

func TestHintsUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"hints", "-h"}, &stdout, &stderr); err != nil || !strings.Contains(stderr.String(), "-min-calls") {
		t.Fatalf("hints -h = %v, printed %q; want nil and the flags", err, stderr.String())
	}
	stderr.Reset()
	if err := run(context.Background(), []string{"hints", "-min-calls", "0"}, &stdout, &stderr); err != errUsage || !strings.Contains(stderr.String(), "-min-calls") {
		t.Fatalf("-min-calls 0: err = %v, stderr %q; want errUsage naming the flag", err, stderr.String())
	}
	db := buildEventsDB(t, nil, fixture("hints_edge.jsonl"))
	err := run(context.Background(), []string{"hints", "-db", db, "-taxonomy", filepath.Join(t.TempDir(), "none.json")}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Fatalf("missing taxonomy: err = %v, want one naming the file", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name": "x", "version": "1", "fallback": "g", "types": [{"type": "a", "patterns": ["("]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"hints", "-db", db, "-taxonomy", bad}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `pattern "("`) {
		t.Fatalf("bad taxonomy: err = %v, want one naming the pattern", err)
	}
}
