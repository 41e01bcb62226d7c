package analyze

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/evosignal/evosignal/internal/render"
	"github.com/evosignal/evosignal/internal/workshop/golden"
)

// Tables are for a person at a 120-column terminal: every analysis's table
// output is compared with a golden text file (testdata/analyze/*.table.txt,
// rewritten with -update) and no line is wider than render.TableWidth or
// holds JSON.
func TestTableGolden(t *testing.T) {
	valid := buildEventsDB(t, nil, validSessions(t)...)
	edge := buildEventsDB(t, nil, fixture("hints_edge.jsonl"))
	swaps := buildEventsDB(t, nil, fixture("rules_swaps.jsonl"))
	weeks := buildEventsDB(t, nil, fixture("mappings_weeks.jsonl"))
	effect := buildEventsDB(t, nil, fixture("effect_rules.jsonl"))
	tests := []struct {
		name string
		args []string
	}{
		{"replans", []string{"replans", "-db", valid}},
		{"replans_by_agent", []string{"replans", "-db", valid, "-by", "agent"}},
		{"replans_by_task_type_day", []string{"replans", "-db", valid, "-by", "task_type,day"}},
		{"trend", []string{"trend", "-db", valid}},
		{"hints", []string{"hints", "-db", edge, "-by", "task_type", "-min-calls", "1"}},
		{"mappings", []string{"mappings", "-db", weeks, "-by", "week"}},
		{"rules", append([]string{"rules", "-db", swaps, "-format", "table"}, swapArgs...)},
		{"effect", []string{"effect", "-db", effect, "-min-sessions", "10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "-format") {
				args = append(args, "-format", "table")
			}
			got := runForOutput(t, args...)
			for i, line := range strings.Split(got, "\n") {
				if n := utf8.RuneCountInString(line); n > render.TableWidth {
					t.Errorf("line %d is %d wide, want at most %d:\n%s", i+1, n, render.TableWidth, line)
				}
				if strings.Contains(line, "{") {
					t.Errorf("line %d holds JSON: %s", i+1, line)
				}
			}
			golden.Check(t, fixture(tt.name+".table.txt"), []byte(got))
		})
	}
}
