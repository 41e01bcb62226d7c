package analyze

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// End-to-end tests of `analyze replans`, and TestOutOfOrder for all three
// of replans, trend and effect.

func TestReplansGolden(t *testing.T) {
	valid := buildEventsDB(t, nil, validSessions(t)...)
	edge := buildEventsDB(t, nil, fixture("replans_edge.jsonl"))
	inferred := buildEventsDB(t, nil, fixture("inferred.jsonl"))
	tests := []struct {
		name, golden string
		args         []string
	}{
		{"plan-less sessions, inferred re-decisions", "replans_inferred.golden.json", []string{"-db", inferred}},
		{"sample sessions", "replans_valid.golden.json", []string{"-db", valid}},
		{"sample sessions by agent", "replans_valid_by_agent.golden.json", []string{"-db", valid, "-by", "agent"}},
		{"failures, mismatch, over cap, orphan", "replans_edge.golden.json", []string{"-db", edge}},
		{"no session matches", "replans_empty.golden.json", []string{"-db", valid, "-agent", "nobody"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, tt.golden, runForJSON(t, append([]string{"replans"}, tt.args...)...))
		})
	}
}

func TestReplansEdges(t *testing.T) {
	valid := buildEventsDB(t, nil, validSessions(t)...)
	edge := buildEventsDB(t, nil, fixture("replans_edge.jsonl"))
	empty := buildEventsDB(t, nil)

	t.Run("zero sessions", func(t *testing.T) {
		for _, db := range []string{empty, valid} {
			rows := rowsOf(t, decodeJSON(t, runForJSON(t, "replans", "-db", db, "-agent", "nobody")))
			if len(rows) != 1 {
				t.Fatalf("rows = %d, want 1 (one empty group without -by)", len(rows))
			}
			r := rows[0]
			if r["sessions"] != 0.0 || r["open_sessions"] != 0.0 {
				t.Fatalf("sessions = %v, open = %v, want 0, 0", r["sessions"], r["open_sessions"])
			}
			for _, k := range []string{"replan_rate", "replan_rate_ci", "avg_replans", "first_try_success_rate", "success_rate",
				"success_rate_ci", "over_cap_rate", "stripped_hints_per_session", "median_ms_to_first_replan"} {
				if v, ok := r[k]; !ok || v != nil {
					t.Fatalf("%s = %v (present %v), want null", k, v, ok)
				}
			}
		}
		rows := rowsOf(t, decodeJSON(t, runForJSON(t, "replans", "-db", empty, "-by", "agent")))
		if len(rows) != 0 {
			t.Fatalf("grouped rows of an empty database = %v, want none", rows)
		}
	})

	t.Run("one session", func(t *testing.T) {
		// coder_rules_applied.jsonl is the only session of task type refactor:
		// a success without replans.
		r := rowsOf(t, decodeJSON(t, runForJSON(t, "replans", "-db", valid, "-task-type", "refactor")))[0]
		if r["sessions"] != 1.0 || r["success_rate"] != 1.0 || r["first_try_success_rate"] != 1.0 || r["replan_rate"] != 0.0 {
			t.Fatalf("row = %v, want one first-try success", r)
		}
		if lo, hi := interval(t, r["success_rate_ci"]); math.Abs(lo-0.2065493) > 1e-6 || math.Abs(hi-1) > 1e-12 {
			t.Fatalf("success_rate_ci = [%v, %v], want Wilson(1, 1) = [0.2065493, 1]", lo, hi)
		}
		if r["median_ms_to_first_replan"] != nil {
			t.Fatalf("median_ms_to_first_replan = %v, want null (no replan)", r["median_ms_to_first_replan"])
		}
	})

	t.Run("all failures, no end, mismatch", func(t *testing.T) {
		out := decodeJSON(t, runForJSON(t, "replans", "-db", edge))
		r := rowsOf(t, out)[0]
		if r["sessions"] != 3.0 || r["open_sessions"] != 1.0 || r["success_rate"] != 0.0 || r["first_try_success_rate"] != 0.0 {
			t.Fatalf("row = %v, want 3 ended failures and 1 open session", r)
		}
		if lo, hi := interval(t, r["success_rate_ci"]); math.Abs(lo) > 1e-12 || math.Abs(hi-0.5614970) > 1e-6 {
			t.Fatalf("success_rate_ci = [%v, %v], want Wilson(0, 3) = [0, 0.5614970]", lo, hi)
		}
		if r["reported_replans_mismatch"] != 1.0 {
			t.Fatalf("reported_replans_mismatch = %v, want 1", r["reported_replans_mismatch"])
		}
		notes := fmt.Sprint(out["notes"])
		if !strings.Contains(notes, "in 1 ended session(s)") || !strings.Contains(notes, "1 session(s) never ended") {
			t.Fatalf("notes = %s, want the mismatch and the open session", notes)
		}
	})
}

// TestOutOfOrder loads every fixture in order and shuffled (in batches of
// five): every command must print the same.
func TestOutOfOrder(t *testing.T) {
	sets := []struct {
		name  string
		files []string
		args  [][]string
	}{
		{"sample sessions", validSessions(t), [][]string{
			{"replans"}, {"replans", "-by", "agent,day"}, {"trend"}, {"effect"},
		}},
		{"edge", []string{fixture("replans_edge.jsonl")}, [][]string{{"replans"}, {"trend"}}},
		{"trend", []string{fixture("trend_days.jsonl")}, [][]string{{"trend"}, {"trend", "-every", "week", "-by", "ruleset"}, {"replans", "-by", "day"}}},
		{"effect", []string{fixture("effect_rules.jsonl")}, [][]string{{"effect", "-min-sessions", "10"}, {"replans", "-by", "ruleset"}}},
	}
	for i, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			inOrder := buildEventsDB(t, nil, set.files...)
			shuffled := buildEventsDB(t, rand.New(rand.NewPCG(uint64(i), 42)), set.files...)
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

func TestReplansShape(t *testing.T) {
	valid := buildEventsDB(t, nil, validSessions(t)...)
	edge := buildEventsDB(t, nil, fixture("replans_edge.jsonl"))
	checkShape(t, "replans.shape.txt",
		runForJSON(t, "replans", "-db", valid),
		runForJSON(t, "replans", "-db", valid, "-by", strings.Join([]string{"agent", "agent_version", "model", "task_type", "day", "week", "ruleset"}, ",")),
		runForJSON(t, "replans", "-db", edge, "-since", "2025-06-01", "-until", "2025-07-01", "-agent", "skilllite", "-model", "qwen2.5-coder-32b"),
		runForJSON(t, "replans", "-db", valid, "-agent", "nobody", "-task-type", "none"),
	)
}

func TestReplansFormats(t *testing.T) {
	db := buildEventsDB(t, nil, validSessions(t)...)
	table := runForOutput(t, "replans", "-db", db, "-format", "table")
	for _, want := range []string{"sessions", "replan_rate", "note: 1 session(s) never ended", "Succeeded without a valid replan (4 sessions)"} {
		if !strings.Contains(table, want) {
			t.Fatalf("table output lacks %q:\n%s", want, table)
		}
	}
	csv := runForOutput(t, "replans", "-db", db, "-format", "csv", "-by", "agent")
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "agent,") {
		t.Fatalf("csv output = %q, want a header and two agents", csv)
	}
}

func TestReplansUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"replans", "-h"}, &stdout, &stderr); err != nil {
		t.Fatalf("replans -h = %v, want nil", err)
	}
	if !strings.Contains(stderr.String(), "-db") {
		t.Fatalf("replans -h printed %q, want the flags", stderr.String())
	}
	stderr.Reset()
	err := run(context.Background(), []string{"replans", "-by", "colour", "-format", "xml"}, &stdout, &stderr)
	if err != errUsage || !strings.Contains(stderr.String(), "colour") || !strings.Contains(stderr.String(), "xml") {
		t.Fatalf("bad flags: err = %v, stderr = %q; want errUsage naming both problems", err, stderr.String())
	}
	err = run(context.Background(), []string{"replans", "-db", filepath.Join(t.TempDir(), "missing.duckdb")}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "missing.duckdb") {
		t.Fatalf("missing database: err = %v, want one naming the file", err)
	}
}
