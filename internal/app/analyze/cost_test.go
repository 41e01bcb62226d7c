package analyze

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCostAndStuckHandCounted runs analyze cost and analyze stuck on the
// v1.3 sample session (testdata/events/valid/coder_model_calls.jsonl) and
// checks them against counts made by hand from the file: nine model calls,
// a replan at seq 14, the same failing write_file call twice.
func TestCostAndStuckHandCounted(t *testing.T) {
	db := buildEventsDB(t, nil, "../../../testdata/events/valid/coder_model_calls.jsonl")
	rows := func(args ...string) []map[string]any {
		return rowsOf(t, decodeJSON(t, runForJSON(t, append(args, "-db", db)...)))
	}
	check := func(what string, row map[string]any, want map[string]any) {
		t.Helper()
		for k, w := range want {
			if got := fmt.Sprint(row[k]); got != fmt.Sprint(w) {
				t.Errorf("%s %s = %s, want %v", what, k, got, w)
			}
		}
	}

	out := rows("cost")
	if len(out) != 1 {
		t.Fatalf("cost: %d rows, want 1 (one session, a success after a replan)", len(out))
	}
	check("cost", out[0], map[string]any{"outcome_class": "success_after_replans", "sessions": 1, "model_calls_sessions": 1,
		"model_calls": 9, "tokens": 29960 + 787, "input_tokens": 29960, "output_tokens": 787, "cached_input_tokens": 25344,
		"real_tool_calls": 4, "duration_ms": 35633, "model_calls_mean": 9, "model_calls_mean_ci": "<nil>"})

	seg := rows("cost", "-view", "segments")
	if len(seg) != 2 {
		t.Fatalf("segments: %d rows, want before and after the one replan", len(seg))
	}
	// Before seq 14: model calls 2, 4, 6, 9, 11, 13; real calls 5, 10, 12
	// (two failed); 08:12:40.511 to the replan at 08:13:07.396.
	check("before", seg[0], map[string]any{"segment": "before_first_replan", "sessions": 1, "segments": 1, "model_calls": 6,
		"input_tokens": 1850 + 2140 + 3310 + 3402 + 3530 + 3688, "output_tokens": 212 + 31 + 18 + 95 + 95 + 240,
		"cached_input_tokens": 0 + 1792 + 2048 + 3200 + 3328 + 3456, "real_tool_calls": 3, "failed_real_tool_calls": 2, "duration_ms": 26885})
	// After: model calls 16, 18, 21; real call 17; to the end at 08:13:16.144.
	check("after", seg[1], map[string]any{"segment": "after_last_replan", "sessions": 1, "model_calls": 3,
		"input_tokens": 3930 + 4010 + 4100, "output_tokens": 22 + 14 + 60, "cached_input_tokens": 3712 + 3840 + 3968,
		"real_tool_calls": 1, "failed_real_tool_calls": 0, "duration_ms": 8748})

	af := rows("cost", "-view", "after-failure")
	if len(af) != 2 {
		t.Fatalf("after-failure: %d rows, want the two failed write_file calls", len(af))
	}
	// seq 10 is retried (seq 12); seq 12 is followed by the replan. Both
	// recover at seq 17 (run_command, 08:13:09.802).
	check("replan", af[0], map[string]any{"hint": "write_file", "next_step": "replan", "failures": 1, "recovered": 1,
		"model_calls": 2, "tokens": 3688 + 240 + 3930 + 22, "real_tool_calls": 1, "duration_ms": 7166, "successes": 1})
	check("retry", af[1], map[string]any{"hint": "write_file", "next_step": "retry", "failures": 1, "recovered": 1,
		"model_calls": 3, "tokens": 3530 + 95 + 3688 + 240 + 3930 + 22, "real_tool_calls": 2, "duration_ms": 10099})

	st := rows("stuck")
	want := map[string]map[string]any{
		"loop":           {"stuck_sessions": 1, "occurrences": 1, "top_detail": "write_file (hint write_file)", "recovered": 1},
		"churn":          {"stuck_sessions": 0, "occurrences": 0},
		"depth_limit":    {"stuck_sessions": 0},
		"soft_cap":       {"stuck_sessions": 0},
		"pending_at_end": {"stuck_sessions": 0}, // task 3 was closed at seq 20
	}
	if len(st) != len(want) {
		t.Fatalf("stuck: %d rows, want %d", len(st), len(want))
	}
	for _, r := range st {
		check(fmt.Sprint(r["state"]), r, want[fmt.Sprint(r["state"])])
	}
	ex := rows("stuck", "-view", "examples")
	if len(ex) != 1 {
		t.Fatalf("examples: %d rows, want the one loop", len(ex))
	}
	check("example", ex[0], map[string]any{"state": "loop", "session": "ci-50117-lint", "seq": 12, "occurrences": 1, "recovered": true})
	tr := rows("stuck", "-view", "triggers")
	if len(tr) != 1 {
		t.Fatalf("triggers: %d rows, want 1", len(tr))
	}
	check("trigger", tr[0], map[string]any{"visible_trigger": "failed_hinted_call", "replans": 1, "sessions": 1, "successes": 1})
}

func TestCostAndStuckFlags(t *testing.T) {
	for _, args := range [][]string{
		{"cost", "-view", "tokens"},
		{"stuck", "-view", "loops"},
		{"stuck", "-examples", "0"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append(args, "-db", "none.duckdb"), &stdout, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), args[1]) {
			t.Errorf("analyze %s = %v, stderr %q; want a usage error naming %s", strings.Join(args, " "), err, stderr.String(), args[1])
		}
	}
}
