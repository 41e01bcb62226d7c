package skilllite

import (
	"testing"

	"github.com/evosignal/evosignal/internal/plandialect"
)

func TestOutcomeOf(t *testing.T) {
	type plan = []plandialect.Task
	const done = plandialect.Completed
	none := plan{{ID: 1}, {ID: 2}}
	some := plan{{ID: 1, Status: done}, {ID: 2}}
	all := plan{{ID: 1, Status: done}, {ID: 2, Status: done}}
	tests := []struct {
		name string
		d    doneData
		p    plan
		want string
	}{
		{"completion_type wins", doneData{completionType: "Partial-Success", taskCompleted: true, hasTaskCompleted: true}, all, "partial_success"},
		{"completion_type failed", doneData{completionType: "failed"}, all, "failure"},
		{"completion_type cancelled", doneData{completionType: "cancelled"}, none, "aborted"},
		{"completion_type timed out", doneData{completionType: "timed_out"}, none, "timeout"},
		{"unknown completion_type falls back", doneData{completionType: "max_iterations", taskCompleted: true, hasTaskCompleted: true}, none, "success"},
		{"task_completed false, some done", doneData{hasTaskCompleted: true}, some, "partial_success"},
		{"task_completed false, none done", doneData{hasTaskCompleted: true}, none, "failure"},
		{"task_completed false, no plan", doneData{hasTaskCompleted: true}, nil, "failure"},
		{"nothing said, all done", doneData{}, all, "success"},
		{"nothing said, no plan", doneData{}, nil, "success"},
		{"nothing said, some done", doneData{}, some, "partial_success"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outcomeOf(tt.d, tt.p); string(got) != tt.want {
				t.Fatalf("outcomeOf(%+v, %v) = %s, want %s", tt.d, tt.p, got, tt.want)
			}
		})
	}
}
