package analyze

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

func TestEffectGolden(t *testing.T) {
	rules := buildEventsDB(t, nil, fixture("effect_rules.jsonl"))
	valid := buildEventsDB(t, nil, validSessions(t)...)
	tests := []struct {
		name, golden string
		args         []string
	}{
		{"hand-built rules", "effect_rules.golden.json", []string{"-db", rules, "-min-sessions", "10"}},
		{"hand-built rules on first-try success", "effect_rules_first_try.golden.json", []string{"-db", rules, "-min-sessions", "10", "-metric", "first_try_success"}},
		{"sample sessions", "effect_valid.golden.json", []string{"-db", valid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, tt.golden, runForJSON(t, append([]string{"effect"}, tt.args...)...))
		})
	}
}

// effectRow finds the row of kind and id.
func effectRow(tb testing.TB, rows []map[string]any, kind, id string) map[string]any {
	tb.Helper()
	for _, r := range rows {
		if r["kind"] == kind && r["id"] == id {
			return r
		}
	}
	tb.Fatalf("no row %s %s in %v", kind, id, rows)
	return nil
}

func TestEffectVerdicts(t *testing.T) {
	db := buildEventsDB(t, nil, fixture("effect_rules.jsonl"))
	rows := rowsOf(t, decodeJSON(t, runForJSON(t, "effect", "-db", db, "-min-sessions", "10")))
	tests := []struct {
		kind, id          string
		treated, control  float64
		unmatched, strata float64
		verdict           string
		retire            bool
	}{
		// coding: 10 r-good (all first-try successes), 10 r-bad (all
		// failures after a replan), 10 without rules (5 and 5); docs: 2
		// r-good without a control; unknown task type: 1 r-nil, 1 without.
		{"rule", "r-good", 10, 20, 2, 1, "helpful", false},
		{"rule", "r-bad", 10, 20, 0, 1, "harmful", true},
		{"rule", "r-nil", 1, 1, 0, 1, "undecided", false},
		{"ruleset", "rs-1", 21, 11, 2, 2, "undecided", false},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.id, func(t *testing.T) {
			r := effectRow(t, rows, tt.kind, tt.id)
			got := fmt.Sprint(r["treated_sessions"], r["control_sessions"], r["unmatched_sessions"], r["strata"], r["verdict"], r["retire"])
			want := fmt.Sprint(tt.treated, tt.control, tt.unmatched, tt.strata, tt.verdict, tt.retire)
			if got != want {
				t.Fatalf("treated, control, unmatched, strata, verdict, retire = %s, want %s", got, want)
			}
		})
	}
	// r-good by hand: 10/10 against 5/20, Wilson [0.7224672, 1] and
	// [0.1118617, 0.4687009]; Newcombe: 0.75 − √((1 − 0.7224672)² + (0.4687009 − 0.25)²).
	s := effectRow(t, rows, "rule", "r-good")["success"].(map[string]any)
	lo, _ := interval(t, s["difference_ci"])
	if want := 0.75 - math.Hypot(1-0.7224672, 0.4687009-0.25); s["difference"] != 0.75 || math.Abs(lo-want) > 1e-6 {
		t.Fatalf("r-good success difference = %v [%v, …], want 0.75 [%v, …]", s["difference"], lo, want)
	}

	// On replans (lower is better) r-bad, which always replans, is harmful too.
	rows = rowsOf(t, decodeJSON(t, runForJSON(t, "effect", "-db", db, "-min-sessions", "10", "-metric", "replan")))
	if r := effectRow(t, rows, "rule", "r-bad"); r["verdict"] != "harmful" {
		t.Fatalf("r-bad on replans: verdict %v, want harmful", r["verdict"])
	}
}

func TestEffectEdges(t *testing.T) {
	empty := buildEventsDB(t, nil)
	valid := buildEventsDB(t, nil, validSessions(t)...)
	for _, db := range []string{empty, valid} {
		out := decodeJSON(t, runForJSON(t, "effect", "-db", db, "-agent", "nobody"))
		if rows := rowsOf(t, out); len(rows) != 0 {
			t.Fatalf("rows = %v, want none", rows)
		}
		if notes := fmt.Sprint(out["notes"]); !strings.Contains(notes, "no ended session") {
			t.Fatalf("notes = %s, want one saying no session applied a rule", notes)
		}
	}
	// The one session with rules has no comparable session: nothing to
	// compare, rates of the control null, verdict undecided.
	rows := rowsOf(t, decodeJSON(t, runForJSON(t, "effect", "-db", valid)))
	r := effectRow(t, rows, "rule", "r-017")
	s := r["success"].(map[string]any)
	if r["treated_sessions"] != 0.0 || r["unmatched_sessions"] != 1.0 || s["treated_rate"] != nil || s["difference_ci"] != nil || r["verdict"] != "undecided" {
		t.Fatalf("r-017 = %v, want 1 unmatched session, null rates, undecided", r)
	}
}

func TestEffectShape(t *testing.T) {
	rules := buildEventsDB(t, nil, fixture("effect_rules.jsonl"))
	checkShape(t, "effect.shape.txt",
		runForJSON(t, "effect", "-db", rules, "-min-sessions", "10"),
		runForJSON(t, "effect", "-db", rules, "-by", "agent,agent_version,model,task_type,day,week,ruleset"),
		runForJSON(t, "effect", "-db", rules, "-agent", "coder", "-model", "gpt-4.1-mini", "-task-type", "coding",
			"-since", "2025-06-01", "-until", "2025-07-01", "-metric", "replan", "-nil-margin", "0.1"),
		runForJSON(t, "effect", "-db", rules, "-agent", "nobody"),
	)
}

func TestEffectUsage(t *testing.T) {
	for _, args := range [][]string{
		{"effect", "-min-sessions", "0"},
		{"effect", "-nil-margin", "2"},
		{"effect", "-metric", "happiness"},
	} {
		if err := run(t.Context(), args, io.Discard, io.Discard); err != errUsage {
			t.Fatalf("analyze %s = %v, want errUsage", strings.Join(args, " "), err)
		}
	}
}
