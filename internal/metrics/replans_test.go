package metrics

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/queries"
)

// cannedResults is a Source that answers each embedded query file with a
// fixed table: unit tests of what the analyzers do with query results.
type cannedResults map[string]*Table

func (c cannedResults) Query(_ context.Context, q string, _ ...any) (*Table, error) {
	for name, t := range c {
		if queries.MustExpand(name) == q {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no canned result for query %.60q", q)
}

// cannedTable builds a table from one map per row; every row must have the
// same keys as the first, in cols order.
func cannedTable(cols []string, rows ...map[string]any) *Table {
	t := &Table{Columns: cols}
	for _, r := range rows {
		row := make([]any, len(cols))
		for i, c := range cols {
			row[i] = r[c]
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

var replansCols = strings.Fields(`agent agent_version model task_type day week ruleset sessions open_sessions unknown_outcome replanned
	valid_replans first_try_successes successes n_0 s_0 u_0 n_1 s_1 u_1 n_2 s_2 u_2 n_3plus s_3plus u_3plus over_cap_sessions invalid_replans
	trigger_model trigger_depth_limit trigger_tool_failures trigger_no_progress trigger_user stripped_hints
	reported_mismatch with_first_replan median_ms_to_first_replan planless_sessions inferred_sessions inferred_redecisions`)

var comparisonCols = []string{"kind", "value", "no_replan", "several", "no_replan_sessions", "several_sessions"}

func TestReplansWithoutSessions(t *testing.T) {
	src := cannedResults{
		"analyze/replans.sql":            cannedTable(replansCols),
		"analyze/replans_comparison.sql": cannedTable(comparisonCols),
	}
	res, err := Replans(context.Background(), src, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("rows = %d, want 1 empty group", len(res.Rows))
	}
	r := res.Rows[0]
	for name, v := range map[string]*float64{"replan_rate": r.ReplanRate, "avg_replans": r.AvgReplans,
		"first_try_success_rate": r.FirstTrySuccessRate, "success_rate": r.SuccessRate, "over_cap_rate": r.OverCapRate,
		"stripped_hints_per_session": r.StrippedHintsPerSession, "median_ms_to_first_replan": r.MedianMSToFirstReplan,
		"inferred_rate": r.InferredRate, "avg_inferred": r.AvgInferred} {
		if v != nil {
			t.Fatalf("%s = %v, want nil", name, *v)
		}
	}
	if r.SuccessRateCI != nil || len(r.SuccessByReplans) != 4 || r.SuccessByReplans[3].SuccessRate != nil {
		t.Fatalf("row = %+v, want nil intervals and four empty buckets", r)
	}
	cmp, err := CompareReplans(context.Background(), src, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 0 || cmp.Features == nil {
		t.Fatalf("notes = %v, features = %v; want none and an empty list", res.Notes, cmp.Features)
	}

	res, err = Replans(context.Background(), src, Filter{By: []string{"agent"}})
	if err != nil || len(res.Rows) != 0 || res.Rows == nil {
		t.Fatalf("grouped: rows = %#v, %v; want an empty list", res.Rows, err)
	}
}

func TestReplansRates(t *testing.T) {
	agent := "coder"
	row := map[string]any{"agent": agent, "sessions": int64(10), "open_sessions": int64(2), "replanned": int64(4),
		"valid_replans": big.NewInt(7), "first_try_successes": int64(5), "successes": int64(7),
		"n_0": int64(6), "s_0": int64(6), "n_1": int64(2), "s_1": int64(1), "n_2": int64(1), "s_2": int64(0), "n_3plus": int64(1), "s_3plus": int64(0),
		"over_cap_sessions": int64(1), "invalid_replans": int64(2), "trigger_model": int64(5), "trigger_tool_failures": int32(4),
		"trigger_depth_limit": int64(0), "trigger_no_progress": int64(0), "trigger_user": int64(0),
		"stripped_hints": int64(3), "reported_mismatch": int64(1), "with_first_replan": int64(5), "median_ms_to_first_replan": 1500.0,
		"planless_sessions": int64(4), "inferred_sessions": int64(3), "inferred_redecisions": big.NewInt(5)}
	src := cannedResults{
		"analyze/replans.sql":            cannedTable(replansCols, row),
		"analyze/replans_comparison.sql": cannedTable(comparisonCols),
	}
	res, err := Replans(context.Background(), src, Filter{By: []string{"agent"}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	checks := []struct {
		name  string
		got   *float64
		want  float64
		ci    *Interval
		k, n  int64
		hasCI bool
	}{
		{"replan_rate", r.ReplanRate, 0.4, r.ReplanRateCI, 4, 10, true},
		{"avg_replans", r.AvgReplans, 0.7, nil, 0, 0, false},
		{"first_try_success_rate", r.FirstTrySuccessRate, 0.5, r.FirstTrySuccessRateCI, 5, 10, true},
		{"success_rate", r.SuccessRate, 0.7, r.SuccessRateCI, 7, 10, true},
		{"over_cap_rate", r.OverCapRate, 0.1, r.OverCapRateCI, 1, 10, true},
		{"stripped_hints_per_session", r.StrippedHintsPerSession, 0.3, nil, 0, 0, false},
		{"success after 1 replan", r.SuccessByReplans[1].SuccessRate, 0.5, r.SuccessByReplans[1].SuccessRateCI, 1, 2, true},
		{"inferred_rate", r.InferredRate, 0.75, r.InferredRateCI, 3, 4, true},
		{"avg_inferred", r.AvgInferred, 1.25, nil, 0, 0, false},
	}
	for _, c := range checks {
		if c.got == nil || math.Abs(*c.got-c.want) > 1e-12 {
			t.Fatalf("%s = %v, want %v", c.name, c.got, c.want)
		}
		if c.hasCI && *c.ci != *Wilson(c.k, c.n, Z95) {
			t.Fatalf("%s interval = %+v, want Wilson(%d, %d)", c.name, c.ci, c.k, c.n)
		}
	}
	if r.Agent.Value() == nil || *r.Agent.Value() != agent || r.Model.Value() != nil {
		t.Fatalf("group = %+v, want agent coder only", r.Group)
	}
	if r.Triggers != (Triggers{Model: 5, ToolFailures: 4}) || r.MedianMSToFirstReplan == nil || *r.MedianMSToFirstReplan != 1500 {
		t.Fatalf("triggers = %+v, median = %v", r.Triggers, r.MedianMSToFirstReplan)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "in 1 ended session(s)") || !strings.Contains(notes, "2 session(s) never ended") {
		t.Fatalf("notes = %q, want the mismatch and the open sessions", notes)
	}
}

func TestReplanComparisonOrder(t *testing.T) {
	coding, docs, grep := "coding", "docs", "grep"
	src := cannedResults{
		"analyze/replans.sql": cannedTable(replansCols),
		"analyze/replans_comparison.sql": cannedTable(comparisonCols,
			map[string]any{"kind": "hint", "value": grep, "no_replan": int64(1), "several": int64(1), "no_replan_sessions": int64(10), "several_sessions": int64(4)},
			map[string]any{"kind": "task_type", "value": nil, "no_replan": int64(2), "several": int64(0), "no_replan_sessions": int64(10), "several_sessions": int64(4)},
			map[string]any{"kind": "task_type", "value": coding, "no_replan": int64(3), "several": int64(4), "no_replan_sessions": int64(10), "several_sessions": int64(4)},
			map[string]any{"kind": "task_type", "value": docs, "no_replan": int64(5), "several": int64(0), "no_replan_sessions": int64(10), "several_sessions": int64(4)},
		),
	}
	c, err := CompareReplans(context.Background(), src, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if c.NoReplanSessions != 10 || c.SeveralSessions != 4 || c.SeveralMinReplans != 2 {
		t.Fatalf("comparison = %+v", c)
	}
	var order []string
	for _, f := range c.Features {
		v := "null"
		if f.Value != nil {
			v = *f.Value
		}
		order = append(order, fmt.Sprintf("%s=%s:%.2f", f.Kind, v, *f.Difference))
	}
	// coding 1 − 0.3 = 0.7; docs 0 − 0.5; null 0 − 0.2; grep 0.25 − 0.1
	want := "[task_type=coding:0.70 task_type=docs:-0.50 task_type=null:-0.20 hint=grep:0.15]"
	if got := fmt.Sprint(order); got != want {
		t.Fatalf("features = %s, want %s (largest |difference| first)", got, want)
	}
	if ci := c.Features[0].DifferenceCI; *ci != *NewcombeDiff(4, 4, 3, 10, Z95) {
		t.Fatalf("coding interval = %+v, want Newcombe(4/4 − 3/10)", ci)
	}
}

func TestReplanComparisonOneArmEmpty(t *testing.T) {
	src := cannedResults{
		"analyze/replans.sql": cannedTable(replansCols),
		"analyze/replans_comparison.sql": cannedTable(comparisonCols,
			map[string]any{"kind": "task_type", "value": nil, "no_replan": int64(3), "several": int64(0), "no_replan_sessions": int64(3), "several_sessions": int64(0)}),
	}
	c, err := CompareReplans(context.Background(), src, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	f := c.Features[0]
	if f.NoReplanShare == nil || *f.NoReplanShare != 1 || f.SeveralShare != nil || f.Difference != nil || f.DifferenceCI != nil {
		t.Fatalf("feature = %+v, want share 1 against undefined", f)
	}
}

func TestResultRow(t *testing.T) {
	huge := new(big.Int).Lsh(big.NewInt(1), 70)
	tbl := cannedTable([]string{"i32", "big", "huge", "null", "text", "list", "float", "u64", "hugelist", "ints"},
		map[string]any{"i32": int32(7), "big": big.NewInt(9), "huge": huge, "null": nil, "text": "x", "list": []any{"b", nil, "a"}, "float": 2.5,
			"u64": uint64(math.MaxUint64), "hugelist": []any{int64(1), huge}, "ints": []any{int64(1), nil, big.NewInt(3)}})
	r := &row{t: tbl, cells: tbl.Rows[0]}
	if r.int("i32") != 7 || r.int("big") != 9 || r.int("null") != 0 || r.str("null") != nil || r.float("null") != nil ||
		*r.str("text") != "x" || fmt.Sprint(r.strs("list")) != "[b a]" || len(r.strs("null")) != 0 || *r.float("float") != 2.5 ||
		fmt.Sprint(r.ints("ints")) != "[1 0 3]" || r.ints("null") != nil || r.err != nil {
		t.Fatalf("reads differ; err = %v", r.err)
	}
	for _, tt := range []struct {
		name string
		read func(r *row)
		want string
	}{
		{"missing column", func(r *row) { r.int("nope") }, `no column "nope"`},
		{"text as integer", func(r *row) { r.int("text") }, `column "text": got string`},
		{"integer out of range", func(r *row) { r.int("huge") }, "int64 range"},
		{"integer as list", func(r *row) { r.strs("i32") }, "a list of text"},
		{"unsigned integer out of range", func(r *row) { r.int("u64") }, "int64 range"},
		{"list element out of range", func(r *row) { r.ints("hugelist") }, "int64 range"},
		{"text as group", func(r *row) { r.strs("list"); r.group(true) }, `no column "agent"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &row{t: tbl, cells: tbl.Rows[0]}
			tt.read(r)
			if r.err == nil || !strings.Contains(r.err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", r.err, tt.want)
			}
		})
	}
	// eachRow reports the row and the first problem.
	err := eachRow(tbl, func(r *row) error { r.int("text"); r.int("nope"); return nil })
	if err == nil || !strings.Contains(err.Error(), "row 1") || !strings.Contains(err.Error(), `"text"`) {
		t.Fatalf("eachRow = %v, want row 1 and the first problem", err)
	}
}

func TestReplansRejectsBadFilter(t *testing.T) {
	if _, err := Replans(context.Background(), cannedResults{}, Filter{By: []string{"colour"}}); err == nil {
		t.Fatal("Replans with -by colour succeeded, want an error")
	}
}
