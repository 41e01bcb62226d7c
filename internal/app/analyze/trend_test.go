package analyze

import (
	"database/sql"
	"io"
	"strings"
	"testing"
	"time"
)

func TestTrendGolden(t *testing.T) {
	days := buildEventsDB(t, nil, fixture("trend_days.jsonl"))
	valid := buildEventsDB(t, nil, validSessions(t)...)
	inferred := buildEventsDB(t, nil, fixture("inferred.jsonl"))
	tests := []struct {
		name, golden string
		args         []string
	}{
		{"per day", "trend_days.golden.json", []string{"-db", days}},
		{"plan-less sessions, inferred re-decisions", "trend_inferred.golden.json", []string{"-db", inferred}},
		{"per week", "trend_weeks.golden.json", []string{"-db", days, "-every", "week"}},
		{"per day and rule set", "trend_days_by_ruleset.golden.json", []string{"-db", days, "-by", "ruleset"}},
		{"sample sessions", "trend_valid.golden.json", []string{"-db", valid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, tt.golden, runForJSON(t, append([]string{"trend"}, tt.args...)...))
		})
	}
}

func TestTrendEdges(t *testing.T) {
	days := buildEventsDB(t, nil, fixture("trend_days.jsonl"))
	empty := buildEventsDB(t, nil)

	t.Run("zero sessions", func(t *testing.T) {
		out := decodeJSON(t, runForJSON(t, "trend", "-db", empty))
		if rows := rowsOf(t, out); len(rows) != 0 {
			t.Fatalf("rows = %v, want none", rows)
		}
	})

	t.Run("gap and open session", func(t *testing.T) {
		rows := rowsOf(t, decodeJSON(t, runForJSON(t, "trend", "-db", days)))
		var periods []string
		for _, r := range rows {
			periods = append(periods, r["period"].(string))
		}
		want := []string{"2025-06-02", "2025-06-03", "2025-06-04", "2025-06-05", "2025-06-06", "2025-06-07", "2025-06-08", "2025-06-09"}
		if len(periods) != len(want) {
			t.Fatalf("periods = %v, want %v", periods, want)
		}
		for i := range want {
			if periods[i] != want[i] {
				t.Fatalf("periods = %v, want %v", periods, want)
			}
		}
		gap := rows[2] // 2025-06-04: no session
		if gap["sessions"] != 0.0 || gap["success_rate"] != nil || gap["tool_failure_rate"] != nil || len(gap["rulesets"].([]any)) != 0 {
			t.Fatalf("empty day = %v, want 0 sessions, null rates, no rule sets", gap)
		}
		thu := rows[3] // 2025-06-05: two ended with rs-2, one open with rs-1
		if thu["sessions"] != 2.0 || thu["open_sessions"] != 1.0 || thu["first_try_success_rate"] != 1.0 {
			t.Fatalf("2025-06-05 = %v, want 2 ended first-try successes and 1 open", thu)
		}
		if rs := thu["rulesets"].([]any); len(rs) != 2 || rs[0] != "rs-1" || rs[1] != "rs-2" {
			t.Fatalf("2025-06-05 rulesets = %v, want [rs-1 rs-2]", rs)
		}
	})

	t.Run("all failures and a session seen only in the middle", func(t *testing.T) {
		edge := buildEventsDB(t, nil, fixture("replans_edge.jsonl"))
		rows := rowsOf(t, decodeJSON(t, runForJSON(t, "trend", "-db", edge)))
		if len(rows) != 1 {
			t.Fatalf("rows = %v, want one day", rows)
		}
		r := rows[0]
		if r["sessions"] != 3.0 || r["open_sessions"] != 1.0 || r["success_rate"] != 0.0 || r["first_try_success_rate"] != 0.0 ||
			r["tool_failure_rate"] != 1.0 || r["no_ruleset_sessions"] != 4.0 {
			t.Fatalf("row = %v, want 3 ended failures whose real calls all failed, and 1 open session", r)
		}
	})

	t.Run("window", func(t *testing.T) {
		rows := rowsOf(t, decodeJSON(t, runForJSON(t, "trend", "-db", days, "-since", "2025-06-03", "-until", "2025-06-04")))
		if len(rows) != 1 || rows[0]["period"] != "2025-06-03" || rows[0]["sessions"] != 3.0 {
			t.Fatalf("rows = %v, want 2025-06-03 only, 3 sessions", rows)
		}
	})
}

func TestTrendShape(t *testing.T) {
	days := buildEventsDB(t, nil, fixture("trend_days.jsonl"))
	checkShape(t, "trend.shape.txt",
		runForJSON(t, "trend", "-db", days),
		runForJSON(t, "trend", "-db", days, "-every", "week", "-by", "agent,agent_version,model,task_type,day,week,ruleset"),
		runForJSON(t, "trend", "-db", days, "-agent", "coder", "-model", "gpt-4.1-mini", "-task-type", "none", "-since", "2025-06-01", "-until", "2025-07-01"),
	)
}

func TestTrendUsage(t *testing.T) {
	if err := run(t.Context(), []string{"trend", "-every", "month"}, io.Discard, io.Discard); err != errUsage {
		t.Fatalf("trend -every month = %v, want errUsage", err)
	}
}

// TestTrendImpossibleTimes: a database may hold session starts outside years
// 0001-9999 UTC (stored before the decoder refused them). Trend leaves those
// sessions out with a data-quality note, per day and per week, instead of
// failing on a period like "0002-12-31 (BC)".
func TestTrendImpossibleTimes(t *testing.T) {
	days := buildEventsDB(t, nil, fixture("trend_days.jsonl"))
	db, err := sql.Open("duckdb", days)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE session_facts_stored SET started_at = started_at - INTERVAL '2026 years' WHERE session = 't-0602-a'`,
		`UPDATE session_facts_stored SET started_at = started_at + INTERVAL '7975 years' WHERE session = 't-0603-a'`,
	} {
		if res, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s: %d rows, want 1", q, n)
		}
	}
	db.Close()
	for _, every := range []string{"day", "week"} {
		t.Run(every, func(t *testing.T) {
			out := decodeJSON(t, runForJSON(t, "trend", "-db", days, "-every", every, "-by", every))
			for _, r := range rowsOf(t, out) {
				if _, err := time.Parse(time.DateOnly, r["period"].(string)); err != nil {
					t.Errorf("period %q: %v", r["period"], err)
				}
				if g, _ := r[every].(string); g != r["period"] {
					t.Errorf("%s = %q, want the period %q", every, g, r["period"])
				}
			}
			notes, _ := out["notes"].([]any)
			if len(notes) != 1 || !strings.Contains(notes[0].(string), "2 sessions left out") {
				t.Errorf("notes = %v, want one saying 2 sessions were left out", notes)
			}
		})
	}
}
