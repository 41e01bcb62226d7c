package web

import (
	"slices"
	"testing"
)

func TestDiffPlan(t *testing.T) {
	tests := []struct {
		name               string
		tasks              []diffTask
		dropped            []string
		wantMarks, wantWas []string
		wantGone           []int
	}{
		{"kept completed, added", []diffTask{{"Read it", false}, {"Write it", true}}, nil,
			[]string{"kept", "added"}, []string{"", ""}, nil},
		{"listed again word for word", []diffTask{{"Run  the TESTS", true}}, []string{"Run the tests"},
			[]string{"kept"}, []string{""}, nil},
		{"reworded, dropped", []diffTask{{"Fix the quoting in the parser", true}}, []string{"Deploy it", "Fix the parser"},
			[]string{"reworded"}, []string{"Fix the parser"}, []int{0}},
		{"too different to be reworded", []diffTask{{"Write a regression test", true}}, []string{"Fix the parser"},
			[]string{"added"}, []string{""}, []int{0}},
		{"the best pair wins", []diffTask{{"Fix the CSV parser", true}, {"Fix the CSV parser quoting now", true}},
			[]string{"Fix the CSV parser quoting"},
			[]string{"added", "reworded"}, []string{"", "Fix the CSV parser quoting"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marks, was, gone := diffPlan(tt.tasks, tt.dropped)
			if !slices.Equal(marks, tt.wantMarks) || !slices.Equal(was, tt.wantWas) || !slices.Equal(gone, tt.wantGone) {
				t.Fatalf("diffPlan(%v, %q) = %q, %q, %v, want %q, %q, %v", tt.tasks, tt.dropped, marks, was, gone, tt.wantMarks, tt.wantWas, tt.wantGone)
			}
		})
	}
}
