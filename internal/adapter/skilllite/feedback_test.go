package skilllite

import (
	"reflect"
	"testing"
	"time"
)

func TestCrossCheck(t *testing.T) {
	at := func(s string) time.Time { return time.Date(2026, 6, 28, 10, 0, 0, 0, time.UTC).Add(mustDuration(t, s)) }
	turn := func(line int, calls, failed, replans int64, ct string) TurnCounts {
		return TurnCounts{Line: line, Session: "s", AgentToolCalls: calls, CompletionType: ct,
			ToolCalls: calls, Failed: failed, Replans: replans, TaskCompleted: ct == "success"}
	}
	row := func(id, calls, failed, replans int64, ct string) Decision {
		return Decision{ID: id, TotalTools: calls, FailedTools: failed, Replans: replans,
			TaskCompleted: ct == "success", CompletionType: ct, CompletionTypeReported: ct}
	}
	plain := TurnCounts{Line: 3, AgentToolCalls: 0, CompletionType: "failure"}
	tests := []struct {
		name      string
		turns     []TurnCounts
		rows      []Decision
		matched   map[int]int64 // turn line → decision id
		differing map[int][]string
		unmatched []int
	}{
		{
			name:    "rows in turn order, older and newer ones around them",
			turns:   []TurnCounts{turn(1, 4, 0, 0, "success"), plain, turn(5, 12, 2, 2, "partial_success")},
			rows:    []Decision{row(1, 4, 0, 0, "success"), row(2, 3, 1, 0, "partial_success"), row(3, 4, 0, 0, "success"), row(4, 12, 2, 2, "partial_success"), row(5, 2, 0, 0, "success")},
			matched: map[int]int64{1: 3, 5: 4},
		},
		{
			name:      "counts differ",
			turns:     []TurnCounts{turn(1, 4, 0, 0, "success"), turn(2, 7, 3, 3, "partial_success")},
			rows:      []Decision{row(1, 4, 0, 0, "success"), {ID: 2, TotalTools: 7, FailedTools: 2, Replans: 2, CompletionTypeReported: "partial_success", CompletionType: "partial_success"}},
			matched:   map[int]int64{1: 1, 2: 2},
			differing: map[int][]string{2: {"failed_tools", "replans"}},
		},
		{
			name:      "a turn SkillLite did not record",
			turns:     []TurnCounts{turn(1, 4, 0, 0, "success"), turn(2, 2, 0, 0, "success"), turn(3, 7, 3, 3, "partial_success")},
			rows:      []Decision{row(1, 4, 0, 0, "success"), row(2, 7, 3, 3, "partial_success")},
			matched:   map[int]int64{1: 1, 3: 2},
			unmatched: []int{2},
		},
		{
			name:    "rows of another run between the run's",
			turns:   []TurnCounts{turn(1, 4, 0, 0, "success"), turn(2, 2, 0, 0, "success")},
			rows:    []Decision{row(1, 4, 0, 0, "success"), row(2, 9, 0, 0, "success"), row(3, 2, 0, 0, "success")},
			matched: map[int]int64{1: 1, 2: 3},
		},
		{
			name:      "no row agrees",
			turns:     []TurnCounts{turn(1, 4, 0, 0, "success")},
			rows:      []Decision{row(1, 5, 0, 0, "success"), row(2, 4, 0, 0, "failure")},
			unmatched: []int{1},
		},
		{
			name: "session keys narrow the rows",
			turns: []TurnCounts{
				{Line: 1, SessionKey: "a", AgentToolCalls: 2, CompletionType: "success", ToolCalls: 2, TaskCompleted: true},
				{Line: 2, SessionKey: "b", AgentToolCalls: 2, CompletionType: "success", ToolCalls: 2, TaskCompleted: true},
			},
			rows: []Decision{
				{ID: 1, SessionID: "b", TotalTools: 2, CompletionTypeReported: "success", TaskCompleted: true},
				{ID: 2, SessionID: "a", TotalTools: 2, CompletionTypeReported: "success", TaskCompleted: true},
				{ID: 3, SessionID: "c", TotalTools: 2, CompletionTypeReported: "success", TaskCompleted: true},
			},
			matched: map[int]int64{1: 2, 2: 1},
		},
		{
			name: "a real time rules out a row written long before or after",
			turns: []TurnCounts{
				{Line: 1, AgentToolCalls: 2, CompletionType: "success", ToolCalls: 2, TaskCompleted: true, End: at("0s")},
			},
			rows: []Decision{
				{ID: 1, TS: at("-1m"), TotalTools: 2, CompletionTypeReported: "success", TaskCompleted: true},
				{ID: 2, TS: at("30s"), TotalTools: 2, CompletionTypeReported: "success", TaskCompleted: true},
				{ID: 3, TS: at("1h"), TotalTools: 2, CompletionTypeReported: "success", TaskCompleted: true},
			},
			matched: map[int]int64{1: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := CrossCheck(tt.turns, tt.rows)
			gotMatched := map[int]int64{}
			gotDiffs := map[int][]string{}
			for _, m := range r.Matched {
				gotMatched[m.Turn.Line] = m.Decision.ID
				for _, d := range m.Diffs {
					gotDiffs[m.Turn.Line] = append(gotDiffs[m.Turn.Line], d.Field)
				}
			}
			var gotUnmatched []int
			for _, u := range r.UnmatchedTurns {
				gotUnmatched = append(gotUnmatched, u.Line)
			}
			if tt.matched == nil {
				tt.matched = map[int]int64{}
			}
			if tt.differing == nil {
				tt.differing = map[int][]string{}
			}
			if !reflect.DeepEqual(gotMatched, tt.matched) {
				t.Errorf("CrossCheck matched %v, want %v", gotMatched, tt.matched)
			}
			if !reflect.DeepEqual(gotDiffs, tt.differing) {
				t.Errorf("CrossCheck differing %v, want %v", gotDiffs, tt.differing)
			}
			if !reflect.DeepEqual(gotUnmatched, tt.unmatched) {
				t.Errorf("CrossCheck unmatched %v, want %v", gotUnmatched, tt.unmatched)
			}
			if r.Differing != len(tt.differing) {
				t.Errorf("CrossCheck Differing = %d, want %d", r.Differing, len(tt.differing))
			}
		})
	}
}

func mustDuration(tb testing.TB, s string) time.Duration {
	tb.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}
