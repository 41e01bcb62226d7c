package metrics

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/evosignal/evosignal/internal/taxonomy"
)

// hintKey names a row of Hints by task type and hint ("" for none).
func hintKey(r HintRow) string {
	k := ""
	if r.TaskType.Value() != nil {
		k = r.TaskType.String() + "/"
	}
	if r.Hint != nil {
		return k + *r.Hint
	}
	return k + "(none)"
}

func hintsByKey(rows []HintRow) map[string]HintRow {
	m := make(map[string]HintRow, len(rows))
	for _, r := range rows {
		m[hintKey(r)] = r
	}
	return m
}

// ptrNear reports whether p is set and within 1e-12 of want.
func ptrNear(p *float64, want float64) bool {
	return p != nil && math.Abs(*p-want) < 1e-12
}

// The edge cases of testdata/analyze/hints_edge.jsonl (explained in its
// README): zero calls, one call, all failures, a hint only dropped, a hint
// only stripped, a session with no end, a task id reused after a replan,
// Chinese descriptions.
func TestHintsEdges(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "hints_edge.jsonl"))
	ctx := context.Background()
	rows, err := Hints(ctx, src, Filter{By: []string{"task_type"}}, taxonomy.Default(), DefaultHintsConfig())
	if err != nil {
		t.Fatal(err)
	}
	got := hintsByKey(rows)
	type want struct {
		calls, failed, planned, dropped, stripped int64
		rate                                      float64 // NaN: null
	}
	nan := math.NaN()
	wants := map[string]want{
		"coding/write_file":    {4, 1, 2, 0, 0, 0.25},    // he-1 three calls (one fails, one deviates), he-4 one (Chinese)
		"testing/run_command":  {3, 2, 2, 1, 0, 2.0 / 3}, // he-1 two failures, he-4 one success; dropped by he-1's replan
		"testing/run_tests":    {1, 0, 1, 0, 0, 0},       // one call: reused id 2 after the replan
		"search/search_web":    {0, 0, 1, 1, 0, nan},     // only planned and dropped
		"filesystem/pdf_magic": {0, 0, 0, 0, 1, nan},     // only stripped (hallucinated)
		"filesystem/(none)":    {0, 0, 1, 0, 0, nan},     // planned once: the replan re-lists it pending, which is not planning it again
		"docs/write_file":      {1, 0, 1, 0, 0, 0},       // he-2 has no end: still counted
		"docs/(none)":          {1, 0, 0, 0, 0, 0},       // a real call with no task
		"security/vault":       {1, 1, 1, 0, 0, 1},       // one call, all failures
	}
	if len(got) != len(wants) {
		t.Errorf("Hints returned %d rows %v, want %d", len(got), hintKeys(got), len(wants))
	}
	for k, w := range wants {
		r, ok := got[k]
		if !ok {
			t.Errorf("no row %s", k)
			continue
		}
		if r.Calls != w.calls || r.Failed != w.failed || r.Planned != w.planned || r.Dropped != w.dropped || r.Stripped != w.stripped {
			t.Errorf("%s: calls %d failed %d planned %d dropped %d stripped %d, want %d %d %d %d %d",
				k, r.Calls, r.Failed, r.Planned, r.Dropped, r.Stripped, w.calls, w.failed, w.planned, w.dropped, w.stripped)
		}
		if math.IsNaN(w.rate) {
			if r.FailureRate != nil || r.FailureCI != nil || r.Lift != nil || r.FollowedRate != nil {
				t.Errorf("%s: zero calls but rates %v %v %v %v, want null", k, r.FailureRate, r.FailureCI, r.Lift, r.FollowedRate)
			}
		} else if !ptrNear(r.FailureRate, w.rate) || r.FailureCI == nil {
			t.Errorf("%s: failure rate %v, want %v with an interval", k, r.FailureRate, w.rate)
		}
	}

	wf := got["coding/write_file"]
	if wf.Followed != 3 || wf.Deviated != 1 || !ptrNear(wf.FollowedRate, 0.75) ||
		!ptrNear(wf.FollowedFailureRate, 1.0/3) || !ptrNear(wf.DeviatedFailureRate, 0) {
		t.Errorf("coding/write_file followed %d (%v, failing %v), deviated %d (failing %v); want 3 (0.75, 1/3), 1 (0)",
			wf.Followed, deref(wf.FollowedRate), deref(wf.FollowedFailureRate), wf.Deviated, deref(wf.DeviatedFailureRate))
	}
	if dr := got["search/search_web"].DropRate; !ptrNear(dr, 1) {
		t.Errorf("search/search_web drop rate %v, want 1", deref(dr))
	}
	if dr := got["filesystem/pdf_magic"].DropRate; dr != nil {
		t.Errorf("filesystem/pdf_magic drop rate %v, want null (never planned)", *dr)
	}
	if r := got["docs/(none)"]; r.FollowedRate != nil || r.Hint != nil {
		t.Errorf("docs/(none): followed rate %v, hint %v; want null, null", r.FollowedRate, r.Hint)
	}
	// All failures against a baseline that never fails: lift undefined, but
	// ranked first.
	v := got["security/vault"]
	if v.OtherCalls != 0 || v.Lift != nil || v.PValue != nil || v.Test != nil {
		t.Errorf("security/vault: other calls %d, lift %v, p %v, test %v; want 0, null, null, null", v.OtherCalls, v.Lift, v.PValue, v.Test)
	}
	if k := hintKey(rows[0]); k != "testing/run_command" {
		t.Errorf("first row %s, want testing/run_command (fails against a baseline that never does)", k)
	}
}

// Without grouping, each hint is compared with every other call; the
// numbers of testdata/analyze/README.md.
func TestHintsOverall(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "hints_edge.jsonl"))
	rows, err := Hints(context.Background(), src, Filter{}, taxonomy.Default(), HintsConfig{MinCalls: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := hintsByKey(rows)
	wf := got["write_file"]
	// 5 calls, 1 failed; the other 6 calls have 3 failures.
	if wf.Calls != 5 || wf.Failed != 1 || wf.OtherCalls != 6 || wf.OtherFailed != 3 || !ptrNear(wf.Lift, 0.4) || !wf.Supported {
		t.Errorf("write_file: %+v", wf)
	}
	// Fisher's exact test of [[1 4] [3 3]]: p = 0.5455 (R: fisher.test).
	if wf.PValue == nil || math.Abs(*wf.PValue-0.5454545) > 1e-6 || *wf.Test != TestFisher {
		t.Errorf("write_file p = %v (%v), want 0.5454545 (fisher_exact)", deref(wf.PValue), wf.Test)
	}
	// Supported rows (calls ≥ 3) first, worst lift first.
	var order []string
	for _, r := range rows[:2] {
		order = append(order, hintKey(r))
	}
	if !reflect.DeepEqual(order, []string{"run_command", "write_file"}) {
		t.Errorf("first rows %v, want [run_command write_file]", order)
	}
	if rows[2].Supported {
		t.Errorf("row 3 (%s) supported, want only two supported rows", hintKey(rows[2]))
	}
}

// Events arriving out of order, in small batches, give the same rows.
func TestHintsOutOfOrder(t *testing.T) {
	ctx := context.Background()
	b := analyzeFixture(t, "hints_edge.jsonl")
	f := Filter{By: []string{"task_type"}}
	want, err := Hints(ctx, ingestedDB(t, nil, b), f, taxonomy.Default(), DefaultHintsConfig())
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(3) {
		got, err := Hints(ctx, ingestedDB(t, rand.New(rand.NewPCG(seed, 7)), b), f, taxonomy.Default(), DefaultHintsConfig())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: shuffled rows differ:\n%+v\nwant\n%+v", seed, got, want)
		}
	}
}

// No session selected: no rows, no error.
func TestHintsEmpty(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "hints_edge.jsonl"))
	rows, err := Hints(context.Background(), src, Filter{Agent: "nobody"}, taxonomy.Default(), DefaultHintsConfig())
	if err != nil || len(rows) != 0 {
		t.Fatalf("Hints(agent nobody) = %v, %v; want no rows", rows, err)
	}
}

func hintKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
