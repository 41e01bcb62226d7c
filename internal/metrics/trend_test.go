package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

var trendCols = strings.Fields(`period agent agent_version model task_type day week ruleset sessions open_sessions unknown_outcome
	successes first_try_successes replanned valid_replans real_tool_calls failed_real_tool_calls stripped_hints hallucinated_hints
	rulesets no_ruleset_sessions planless_sessions inferred_sessions`)

func trendRow(period string, agent any, sessions int64) map[string]any {
	return map[string]any{"period": period, "agent": agent, "sessions": sessions, "successes": sessions,
		"real_tool_calls": 2 * sessions, "failed_real_tool_calls": sessions, "rulesets": []any{"rs-1"}}
}

func TestTrendFillsGaps(t *testing.T) {
	tests := []struct {
		name  string
		every string
		rows  []map[string]any
		want  string
	}{
		{"days", EveryDay,
			[]map[string]any{trendRow("2025-06-02", nil, 2), trendRow("2025-06-05", nil, 1)},
			"[2025-06-02/-:2 2025-06-03/-:0 2025-06-04/-:0 2025-06-05/-:1]"},
		{"weeks", EveryWeek,
			[]map[string]any{trendRow("2025-06-02", nil, 2), trendRow("2025-06-23", nil, 1)},
			"[2025-06-02/-:2 2025-06-09/-:0 2025-06-16/-:0 2025-06-23/-:1]"},
		{"each group its own span", EveryDay,
			[]map[string]any{trendRow("2025-06-01", "a", 1), trendRow("2025-06-03", "a", 1),
				trendRow("2025-06-03", "b", 4), trendRow("2025-06-04", nil, 5), trendRow("2025-06-06", "b", 1)},
			"[2025-06-01/a:1 2025-06-02/a:0 2025-06-03/a:1 2025-06-03/b:4 2025-06-04/b:0 2025-06-04/-:5 2025-06-05/b:0 2025-06-06/b:1]"},
		{"one period", EveryDay, []map[string]any{trendRow("2025-06-02", nil, 2)}, "[2025-06-02/-:2]"},
		{"none", EveryWeek, nil, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := cannedResults{"analyze/trend.sql": cannedTable(trendCols, tt.rows...)}
			rows, err := Trend(context.Background(), src, Filter{}, tt.every)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				g := "-"
				if r.Agent.Value() != nil {
					g = r.Agent.String()
				}
				got = append(got, fmt.Sprintf("%s/%s:%d", r.Period, g, r.Sessions))
				if r.Sessions == 0 && (r.SuccessRate != nil || r.ToolFailureRate != nil || r.Rulesets == nil || len(r.Rulesets) != 0) {
					t.Fatalf("filled row %+v, want null rates and no rule sets", r)
				}
			}
			if s := fmt.Sprint(got); s != tt.want && !(tt.want == "[]" && len(got) == 0) {
				t.Fatalf("rows = %s, want %s", s, tt.want)
			}
			if rows == nil {
				t.Fatal("rows = nil, want an empty list")
			}
		})
	}
}

func TestTrendRates(t *testing.T) {
	row := trendRow("2025-06-02", nil, 4)
	row["first_try_successes"], row["replanned"], row["valid_replans"], row["stripped_hints"], row["hallucinated_hints"] = int64(1), int64(2), int64(6), int64(2), int64(1)
	row["planless_sessions"], row["inferred_sessions"] = int64(2), int64(1)
	src := cannedResults{"analyze/trend.sql": cannedTable(trendCols, row)}
	rows, err := Trend(context.Background(), src, Filter{}, EveryDay)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	got := fmt.Sprint(*r.SuccessRate, *r.FirstTrySuccessRate, *r.ReplanRate, *r.AvgReplans, *r.ToolFailureRate, *r.StrippedHintsPerSession, *r.HallucinatedHintsPerSession, r.Rulesets)
	if want := "1 0.25 0.5 1.5 0.5 0.5 0.25 [rs-1]"; got != want {
		t.Fatalf("rates = %s, want %s", got, want)
	}
	if *r.FirstTrySuccessRateCI != *Wilson(1, 4, Z95) {
		t.Fatalf("first-try interval = %+v, want Wilson(1, 4)", r.FirstTrySuccessRateCI)
	}
	if r.InferredRate == nil || *r.InferredRate != 0.5 || *r.InferredRateCI != *Wilson(1, 2, Z95) {
		t.Fatalf("inferred rate = %v %+v, want 0.5 and Wilson(1, 2)", r.InferredRate, r.InferredRateCI)
	}
}

func TestTrendRejects(t *testing.T) {
	src := cannedResults{"analyze/trend.sql": cannedTable(trendCols, trendRow("June", nil, 1))}
	if _, err := Trend(context.Background(), src, Filter{}, "month"); err == nil {
		t.Fatal("Trend every month succeeded, want an error")
	}
	if _, err := Trend(context.Background(), src, Filter{}, EveryDay); err == nil || !strings.Contains(err.Error(), "June") {
		t.Fatalf("Trend with period June = %v, want an error naming it", err)
	}
}
