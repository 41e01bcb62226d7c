package bridge

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/adapter/skilllite"
	"github.com/evosignal/evosignal/internal/workshop/feedbackdbtest"
)

// -feedback: the turns of a recording are paired with the decisions rows
// SkillLite wrote for them, among rows of other runs; a turn without a row
// and a row whose counts differ from ours are reported, on stderr and as
// JSON.
func TestRunFeedbackCrossCheck(t *testing.T) {
	var input []byte
	for _, name := range []string{"no_replan.jsonl", "replans.jsonl", "plain_answer.jsonl", "rejected_replans.jsonl", "suppressed_and_skipped.jsonl"} {
		input = append(input, readFixture(t, name)...)
	}
	in := writeFile(t, "agent-rpc.jsonl", input)
	// The turns (done line: tool calls, failed, replans, completion_type):
	// 15: 4 0 0 success; 55: 12 2 2 partial_success; 58: plain answer;
	// 68: 2 0 0 success; 92: 7 3 3 partial_success (tasks left);
	// 118: 10 3 0 partial_success.
	db := feedbackdbtest.Write(t, []feedbackdbtest.Row{
		{SessionID: "other", TotalTools: 5, CompletionType: "success", Reported: "success", TaskCompleted: true},
		{SessionID: "default", TotalTools: 4, CompletionType: "success", Reported: "success", TaskCompleted: true, Rules: []string{"rule_read_first"}},
		{SessionID: "default", TotalTools: 12, FailedTools: 2, Replans: 2, CompletionType: "partial_success", Reported: "partial_success", TaskCompleted: true},
		// none for the turn at line 68
		{SessionID: "default", TotalTools: 7, FailedTools: 2, Replans: 3, CompletionType: "failure", Reported: "partial_success"},
		{SessionID: "default", TotalTools: 10, FailedTools: 3, CompletionType: "partial_success", Reported: "partial_success", TaskCompleted: true},
		{SessionID: "other", TotalTools: 3, CompletionType: "success", Reported: "success", TaskCompleted: true},
	})
	report := filepath.Join(t.TempDir(), "check.json")
	var out, errOut bytes.Buffer
	args := []string{"-agent", "skilllite", "-source", testSource, "-in", in, "-out", "-", "-feedback", db, "-feedback-report", report}
	if err := run(t.Context(), args, nil, &out, &errOut); err != nil {
		t.Fatalf("run(%q): %v\n%s", args, err, errOut.String())
	}
	for _, want := range []string{
		"bridge: feedback.sqlite: 6 decisions read; 4 of 5 turns with a tool call matched, 1 of them with differing counts, 1 unmatched\n",
		"bridge: feedback.sqlite: turn ending at line 92 (session ",
		") vs decision 4: failed_tools bridge 3 skilllite 2\n",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var r skilllite.FeedbackReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("-feedback-report: %v\n%s", err, b)
	}
	got := map[int]int64{}
	var diffs []skilllite.CountDiff
	for _, m := range r.Matched {
		got[m.Turn.Line] = m.Decision.ID
		if m.Turn.Session == "" {
			t.Errorf("matched turn at line %d has no session id", m.Turn.Line)
		}
		diffs = append(diffs, m.Diffs...)
	}
	if want := map[int]int64{15: 2, 55: 3, 92: 4, 118: 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("report matched %v (turn line → decision id), want %v", got, want)
	}
	if want := []skilllite.CountDiff{{Field: "failed_tools", Bridge: 3.0, SkillLite: 2.0}}; !reflect.DeepEqual(diffs, want) {
		t.Errorf("report diffs %+v, want %+v", diffs, want)
	}
	if len(r.UnmatchedTurns) != 1 || r.UnmatchedTurns[0].Line != 68 {
		t.Errorf("report unmatched turns %+v, want the one ending at line 68", r.UnmatchedTurns)
	}
	if r.Decisions != 6 || r.Turns != 6 || r.Recorded != 5 || r.Differing != 1 {
		t.Errorf("report totals decisions %d turns %d recorded %d differing %d, want 6 6 5 1", r.Decisions, r.Turns, r.Recorded, r.Differing)
	}

	// A feedback.sqlite that is not there stops the run before anything is sent.
	out.Reset()
	args[len(args)-3] = filepath.Join(t.TempDir(), "feedback.sqlite")
	if err := run(t.Context(), args, nil, &out, &errOut); err == nil || out.Len() > 0 {
		t.Errorf("run with a missing -feedback file: err %v, %d bytes out; want an error and nothing out", err, out.Len())
	}
}
