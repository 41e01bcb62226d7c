package infer

import (
	"slices"
	"strings"
	"testing"
)

// calls builds calls from "tool" (ok) and "tool!" (failed) words.
func calls(s string) []Call {
	var out []Call
	for _, w := range strings.Fields(s) {
		tool, failed := strings.CutSuffix(w, "!")
		c := Call{Tool: tool, OK: !failed}
		if failed {
			c.ErrorKind = "exit_status"
		}
		out = append(out, c)
	}
	return out
}

func ats(rs []Redecision) []int {
	out := []int{}
	for _, r := range rs {
		out = append(out, r.At)
	}
	return out
}

func TestInfer(t *testing.T) {
	fams := map[string]string{"grep": "search", "glob": "search", "bash": "exec", "python": "exec"}
	tests := []struct {
		name  string
		rule  Rule
		calls string
		want  []int
	}{
		{"switch after a failure", Rule{MinFailures: 1}, "a a! b", []int{2}},
		{"retry of the same tool is not a switch", Rule{MinFailures: 1}, "a! a! a", []int{}},
		{"switch after success is not a re-decision", Rule{MinFailures: 1}, "a b c", []int{}},
		{"streak too short", Rule{MinFailures: 2}, "a! b a! a! b", []int{4}},
		{"streak broken by a success", Rule{MinFailures: 2}, "a! a a! b", []int{}},
		{"each switch after a streak", Rule{MinFailures: 1}, "a! b! c! c d", []int{1, 2}},
		{"failure of the new tool starts its own streak", Rule{MinFailures: 2}, "a! a! b! b! c", []int{2, 4}},
		{"same family is no switch", Rule{MinFailures: 1, Families: fams}, "grep! glob! bash", []int{2}},
		{"families: tools outside the map are their own", Rule{MinFailures: 1, Families: fams}, "x! bash! python y", []int{1}},
		{"cap keeps the first", Rule{MinFailures: 1, Cap: 2}, "a! b! c! d! e", []int{1, 2}},
		{"failure at the end", Rule{MinFailures: 1}, "a b!", []int{}},
		{"empty", Rule{MinFailures: 1}, "", []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ats(tt.rule.Infer(calls(tt.calls))); !slices.Equal(got, tt.want) {
				t.Fatalf("Infer(%q) at %v, want %v", tt.calls, got, tt.want)
			}
		})
	}
}

func TestInferEvidence(t *testing.T) {
	r := Rule{MinFailures: 2, Families: map[string]string{"grep": "search"}}
	got := r.Infer(calls("grep! grep! bash"))
	want := Redecision{At: 2, Failures: 2, From: "search", To: "bash", FromTool: "grep", ToTool: "bash", ErrorKinds: []string{"exit_status", "exit_status"}}
	if len(got) != 1 || !equalRedecision(got[0], want) {
		t.Fatalf("Infer = %+v, want [%+v]", got, want)
	}
	if e := got[0].Evidence(); e != "after 2 failed calls of grep (search) [exit_status,exit_status], call 2 switched to bash" {
		t.Fatalf("Evidence() = %q", e)
	}
}

func equalRedecision(a, b Redecision) bool {
	return a.At == b.At && a.Failures == b.Failures && a.From == b.From && a.To == b.To &&
		a.FromTool == b.FromTool && a.ToTool == b.ToTool && slices.Equal(a.ErrorKinds, b.ErrorKinds)
}

func TestRuleValidate(t *testing.T) {
	err := Rule{MinFailures: 0, Cap: -1, Families: map[string]string{"": "x"}}.Validate()
	for _, want := range []string{"min failures 0", "cap -1", "empty name"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}

func TestMatch(t *testing.T) {
	red := func(at ...int) []Redecision {
		var out []Redecision
		for _, a := range at {
			out = append(out, Redecision{At: a})
		}
		return out
	}
	tests := []struct {
		name         string
		inferred     []Redecision
		replans      []int
		window       int
		tp, fp, fn   int
		prec, recall float64
	}{
		{"exact", red(2, 5), []int{2, 5}, 0, 2, 0, 0, 1, 1},
		{"off by one, no window", red(3), []int{2}, 0, 0, 1, 1, 0, 0},
		{"off by one, window 1", red(3), []int{2}, 1, 1, 0, 0, 1, 1},
		{"inferred before the replan, no window", red(1), []int{2}, 0, 0, 1, 1, 0, 0},
		{"inferred before the replan, window 1", red(1), []int{2}, 1, 1, 0, 0, 1, 1},
		{"one replan matches one inference", red(2, 2), []int{2}, 0, 1, 1, 0, 0.5, 1},
		{"earliest first", red(3, 4), []int{2, 4}, 1, 2, 0, 0, 1, 1},
		{"nothing inferred", nil, []int{1}, 0, 0, 0, 1, 1, 0},
		{"nothing to find", red(1), nil, 0, 0, 1, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Match(tt.inferred, tt.replans, tt.window)
			if s.TP != tt.tp || s.FP != tt.fp || s.FN != tt.fn || s.Precision() != tt.prec || s.Recall() != tt.recall {
				t.Fatalf("Match(%v, %v, %d) = %+v (precision %v recall %v), want tp %d fp %d fn %d precision %v recall %v",
					ats(tt.inferred), tt.replans, tt.window, s, s.Precision(), s.Recall(), tt.tp, tt.fp, tt.fn, tt.prec, tt.recall)
			}
		})
	}
}
