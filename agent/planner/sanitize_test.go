package planner

import (
	"reflect"
	"testing"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
)

func TestSanitizeAndEnhance(t *testing.T) {
	rules := ruleset.RuleSet{Version: "v7", Rules: []ruleset.Rule{
		{ID: "avoid-web", Kind: ruleset.KindAvoid, TaskType: "edit", ToolHint: "search_web"},
		{ID: "cmd-to-grep", Kind: ruleset.KindReplace, TaskType: "search", ToolHint: "run_command", Instead: "grep"},
		{ID: "web-to-pdf", Kind: ruleset.KindAvoid, TaskType: "extract", ToolHint: "search_web", Instead: "pdf_extract"}, // pdf_extract is not available
		{ID: "prefer-pdf", Kind: ruleset.KindPrefer, TaskType: "edit", ToolHint: "pdf_extract"},                          // not available: skipped
		{ID: "prefer-write", Kind: ruleset.KindPrefer, TaskType: "edit", ToolHint: "write_file"},
		{ID: "prefer-web", Kind: ruleset.KindPrefer, TaskType: "extract", ToolHint: "search_web"}, // forbidden for extract by web-to-pdf
		{ID: "prefer-test", Kind: ruleset.KindPrefer, TaskType: "test", ToolHint: "run_command"},
	}}
	strip := func(id int64, hint string, phase events.Phase, ruleID string) agent.HintStripped {
		d := agent.HintStripped{TaskID: id, ToolHint: hint, Phase: phase, Reason: events.StripUnavailable}
		if ruleID != "" {
			d.Reason, d.RuleID = events.StripRule, ruleID
		}
		return d
	}
	tests := []struct {
		name        string
		sessionType string
		phase       events.Phase
		in          []agent.Task
		want        []agent.Task
		wantStrips  []agent.HintStripped
	}{
		{
			name:  "available hints kept, none stripped",
			phase: events.PhasePlan,
			in:    []agent.Task{task(1, "read", "read_file"), task(2, "think", "")},
			want:  []agent.Task{task(1, "read", "read_file"), task(2, "think", "")},
		},
		{
			name:       "unavailable hint stripped",
			phase:      events.PhasePlan,
			in:         []agent.Task{task(1, "extract", "pdf_to_text"), task(2, "write", "write_file")},
			want:       []agent.Task{task(1, "extract", ""), task(2, "write", "write_file")},
			wantStrips: []agent.HintStripped{strip(1, "pdf_to_text", events.PhasePlan, "")},
		},
		{
			name:       "phase replan recorded",
			phase:      events.PhaseReplan,
			in:         []agent.Task{task(4, "group", "spreadsheet")},
			want:       []agent.Task{task(4, "group", "")},
			wantStrips: []agent.HintStripped{strip(4, "spreadsheet", events.PhaseReplan, "")},
		},
		{
			name:  "blank hint made null, spaces trimmed, no event",
			phase: events.PhasePlan,
			in:    []agent.Task{{ID: 1, Description: "a", ToolHint: ptr("  ")}, {ID: 2, Description: "b", ToolHint: ptr(" grep ")}},
			want:  []agent.Task{task(1, "a", ""), task(2, "b", "grep")},
		},
		{
			name:       "avoid rule removes the hint for the task's own type",
			phase:      events.PhasePlan,
			in:         []agent.Task{typed(task(2, "replace callers", "search_web"), "edit")},
			want:       []agent.Task{typed(task(2, "replace callers", "write_file"), "edit")}, // then prefer-write fills it
			wantStrips: []agent.HintStripped{strip(2, "search_web", events.PhasePlan, "avoid-web")},
		},
		{
			name:        "rule matches the session's type when the task has none",
			sessionType: "edit",
			phase:       events.PhasePlan,
			in:          []agent.Task{task(1, "look it up", "search_web")},
			want:        []agent.Task{task(1, "look it up", "write_file")},
			wantStrips:  []agent.HintStripped{strip(1, "search_web", events.PhasePlan, "avoid-web")},
		},
		{
			name:        "the task's own type wins over the session's",
			sessionType: "edit",
			phase:       events.PhasePlan,
			in:          []agent.Task{typed(task(1, "look it up", "search_web"), "research")},
			want:        []agent.Task{typed(task(1, "look it up", "search_web"), "research")},
		},
		{
			name:  "no type, no rule",
			phase: events.PhasePlan,
			in:    []agent.Task{task(1, "look it up", "search_web"), task(2, "run", "run_command")},
			want:  []agent.Task{task(1, "look it up", "search_web"), task(2, "run", "run_command")},
		},
		{
			name:       "replace rule swaps in its instead",
			phase:      events.PhaseReplan,
			in:         []agent.Task{typed(task(5, "find callers", "run_command"), "search")},
			want:       []agent.Task{typed(task(5, "find callers", "grep"), "search")},
			wantStrips: []agent.HintStripped{strip(5, "run_command", events.PhaseReplan, "cmd-to-grep")},
		},
		{
			name:       "instead not available: removed, and a forbidden prefer is not applied",
			phase:      events.PhasePlan,
			in:         []agent.Task{typed(task(1, "get the text", "search_web"), "extract")},
			want:       []agent.Task{typed(task(1, "get the text", ""), "extract")},
			wantStrips: []agent.HintStripped{strip(1, "search_web", events.PhasePlan, "web-to-pdf")},
		},
		{
			name:  "prefer fills a missing hint, skipping an unavailable one, never overriding",
			phase: events.PhasePlan,
			in:    []agent.Task{typed(task(1, "edit", ""), "edit"), typed(task(2, "edit", "read_file"), "edit"), typed(task(3, "test", ""), "test")},
			want:  []agent.Task{typed(task(1, "edit", "write_file"), "edit"), typed(task(2, "edit", "read_file"), "edit"), typed(task(3, "test", "run_command"), "test")},
		},
		{
			name:       "unavailable hint stripped, then prefer fills",
			phase:      events.PhasePlan,
			in:         []agent.Task{typed(task(1, "run the tests", "pytest"), "test")},
			want:       []agent.Task{typed(task(1, "run the tests", "run_command"), "test")},
			wantStrips: []agent.HintStripped{strip(1, "pytest", events.PhasePlan, "")},
		},
		{
			name:       "unavailable wins over a rule for the same hint",
			phase:      events.PhasePlan,
			in:         []agent.Task{typed(task(1, "x", "made_up"), "edit")},
			want:       []agent.Task{typed(task(1, "x", "write_file"), "edit")},
			wantStrips: []agent.HintStripped{strip(1, "made_up", events.PhasePlan, "")},
		},
		{
			name:  "control tools are available hints",
			phase: events.PhasePlan,
			in:    []agent.Task{task(1, "finish", ToolCompleteTask)},
			want:  []agent.Task{task(1, "finish", ToolCompleteTask)},
		},
		{
			name:  "empty plan",
			phase: events.PhasePlan,
			in:    nil,
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{Tools: testTools, Rules: rules})
			mustNil(t, "Start()", f.p.Start(t.Context(), StartInfo{TaskType: tt.sessionType}))
			f.sink.take()
			in := cloneTasks(tt.in)
			got, strips := f.p.SanitizeAndEnhance(in, tt.phase)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SanitizeAndEnhance() tasks = %s, want %s", tasksJSON(t, got), tasksJSON(t, tt.want))
			}
			if !reflect.DeepEqual(strips, tt.wantStrips) {
				t.Errorf("SanitizeAndEnhance() strips = %+v, want %+v", strips, tt.wantStrips)
			}
			if !reflect.DeepEqual(in, tt.in) {
				t.Errorf("SanitizeAndEnhance() changed its input to %s", tasksJSON(t, in))
			}
			if evs := f.sink.take(); len(evs) != 0 {
				t.Errorf("SanitizeAndEnhance() emitted %d events, want none", len(evs))
			}
		})
	}
}
