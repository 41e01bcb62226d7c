package skilllite

import (
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/rpcsim"
)

// sessionFigures are what one bridged session's events add up to.
type sessionFigures struct {
	created, emptyCreated, replans, completed, control, real, endedReplans int64
}

// figures adds up the events of each session, in the order they were sent.
func figures(tb testing.TB, evs []*events.Event) []sessionFigures {
	tb.Helper()
	var out []sessionFigures
	for _, e := range evs {
		p, err := e.Payload()
		if err != nil {
			tb.Fatal(err)
		}
		if e.Type == events.SessionStarted {
			out = append(out, sessionFigures{})
			continue
		}
		f := &out[len(out)-1]
		switch d := p.(type) {
		case *events.PlanCreatedData:
			if len(d.Tasks) == 0 {
				f.emptyCreated++
			} else {
				f.created++
			}
		case *events.PlanUpdatedData:
			if d.Valid {
				f.replans++
			}
		case *events.TaskCompletedData:
			f.completed++
		case *events.ToolCalledData:
			if d.Control {
				f.control++
			} else {
				f.real++
			}
		case *events.SessionEndedData:
			f.endedReplans = d.Replans
		}
	}
	return out
}

// TestSimulatedPlanFiles: seeded SkillLite turns that keep their plan in
// task_plan.md (plangen: written whole, sometimes after an edit of unknown
// prior content, then edited with search_replace and insert_lines: boxes
// ticked, tasks started, added and removed, rewritten) give exactly the
// generator's replans and completions when the plan file is the session's
// plan — in SkillLite's simple loop (no task_plan) and after an empty first
// plan (which the file's plan replaces) — and, when SkillLite's task list
// has tasks too, the list's replans and completions only: the plan-file
// calls are ordinary calls, counted as superseded.
func TestSimulatedPlanFiles(t *testing.T) {
	input, truths := rpcsim.PlanFiles(5, 150)
	res := translate(t, input)
	if len(res.bad) > 0 {
		t.Fatalf("lines %v reported malformed", res.bad)
	}
	got := figures(t, res.events)
	if len(got) != len(truths) {
		t.Fatalf("%d sessions, want %d", len(got), len(truths))
	}
	var unknown, superseded int64
	modes := map[rpcsim.PlanFileMode]int{}
	for i, want := range truths {
		modes[want.Mode]++
		unknown += want.Unknown
		superseded += want.Superseded
		g := got[i]
		w := sessionFigures{created: 1, replans: want.Replans, completed: want.Completed,
			control: want.Control, real: want.Real, endedReplans: want.Replans}
		if g != w {
			t.Errorf("session %d (%s): got %+v, want %+v", i, want.Mode, g, w)
		}
	}
	for _, m := range []rpcsim.PlanFileMode{rpcsim.FileOnly, rpcsim.EmptyList, rpcsim.Both} {
		if modes[m] == 0 {
			t.Errorf("no session in mode %s", m)
		}
	}
	q := res.stats.Quality
	if q.PlanFileUnknownPrior != unknown || q.PlanFileSuperseded != superseded || unknown == 0 || superseded == 0 {
		t.Errorf("quality %+v: want %d edits of unknown prior content, %d superseded plan-file calls (both > 0)", q, unknown, superseded)
	}
	if res.stats.CountMismatches != 0 || res.stats.Skipped != 0 {
		t.Errorf("stats %+v: no count mismatch or skipped call expected", res.stats)
	}
}

// TestPlanFileTakeover: a plan file is the session's plan after SkillLite's
// empty first plan (which it replaces); the update_task_plan that gives
// SkillLite's list its tasks takes over, as one replan, and later plan-file
// calls are ordinary calls, never a second replan; a declined write and a
// failed edit change nothing.
func TestPlanFileTakeover(t *testing.T) {
	lines := []string{
		`{"data":{"tasks":[]},"event":"task_plan"}`,
		`{"data":{"total_tokens":10},"event":"llm_usage"}`,
		`{"data":{"arguments":"{\"content\":\"# Plan\\n- [ ] Read the client\\n- [ ] Add retries\\n\",\"path\":\"task_plan.md\"}","name":"write_file","tool_call_id":"c1"},"event":"tool_call"}`,
		`{"data":{"is_error":false,"name":"write_file","result":"Successfully wrote 47 bytes to task_plan.md","tool_call_id":"c1"},"event":"tool_result"}`,
		`{"data":{"arguments":"{\"new_string\":\"- [x] Read the client\",\"old_string\":\"- [ ] Read the client\",\"path\":\"task_plan.md\"}","name":"search_replace","tool_call_id":"c2"},"event":"tool_call"}`,
		`{"data":{"is_error":false,"name":"search_replace","result":"Successfully replaced 1 occurrence(s) in task_plan.md","tool_call_id":"c2"},"event":"tool_result"}`,
		`{"data":{"arguments":"{\"content\":\"- [ ] Write a test\",\"line\":3,\"path\":\"task_plan.md\"}","name":"insert_lines","tool_call_id":"c3"},"event":"tool_call"}`,
		`{"data":{"is_error":false,"name":"insert_lines","result":"User cancelled: edit to key path not confirmed","tool_call_id":"c3"},"event":"tool_result"}`,
		`{"data":{"arguments":"{\"new_string\":\"x\",\"old_string\":\"missing\",\"path\":\"task_plan.md\"}","name":"search_replace","tool_call_id":"c4"},"event":"tool_call"}`,
		`{"data":{"is_error":true,"name":"search_replace","result":"old_string not found in file","tool_call_id":"c4"},"event":"tool_result"}`,
		`{"data":{"arguments":"{\"command\":\"go test ./...\"}","name":"run_command","tool_call_id":"c5"},"event":"tool_call"}`,
		`{"data":{"is_error":false,"name":"run_command","result":"ok","tool_call_id":"c5"},"event":"tool_result"}`,
		`{"data":{"total_tokens":10},"event":"llm_usage"}`,
		`{"data":{"arguments":"{\"reason\":\"the client has retries already\",\"tasks\":[{\"description\":\"Add a test for the retries\",\"id\":1,\"tool_hint\":\"file_edit\"},{\"description\":\"Run the tests\",\"id\":2,\"tool_hint\":\"command\"}]}","name":"update_task_plan","tool_call_id":"c6"},"event":"tool_call"}`,
		`{"data":{"tasks":[{"completed":false,"description":"Add a test for the retries","id":1,"tool_hint":"file_edit"},{"completed":false,"description":"Run the tests","id":2,"tool_hint":"command"}]},"event":"task_plan"}`,
		`{"data":{"is_error":false,"name":"update_task_plan","result":"Task plan updated (2 tasks). Continue with the new plan.\nReason: the client has retries already","tool_call_id":"c6"},"event":"tool_result"}`,
		`{"data":{"total_tokens":10},"event":"llm_usage"}`,
		`{"data":{"arguments":"{\"content\":\"# Plan\\n- [x] Read the client\\n- [ ] Add a test for the retries\\n- [ ] Run the tests\\n\",\"path\":\"task_plan.md\"}","name":"write_file","tool_call_id":"c7"},"event":"tool_call"}`,
		`{"data":{"is_error":false,"name":"write_file","result":"Successfully wrote 81 bytes to task_plan.md","tool_call_id":"c7"},"event":"tool_result"}`,
		`{"data":{"arguments":"{\"completion_type\":\"partial_success\",\"task_id\":1}","name":"complete_task","tool_call_id":"c8"},"event":"tool_call"}`,
		`{"data":{"completed":true,"task_id":1,"tasks":[{"completed":true,"description":"Add a test for the retries","id":1,"tool_hint":"file_edit"},{"completed":false,"description":"Run the tests","id":2,"tool_hint":"command"}]},"event":"task_progress"}`,
		`{"data":{"is_error":false,"name":"complete_task","result":"{\"success\": true}","tool_call_id":"c8"},"event":"tool_result"}`,
		`{"data":{"completion_type":"partial_success","response":"done","task_completed":false,"tool_calls":8},"event":"done"}`,
	}
	res := translate(t, []byte(strings.Join(lines, "\n")+"\n"))
	want := []string{
		`started goal="unknown" agent=skilllite model=unknown tools=complete_task,update_task_plan,write_file,search_replace,insert_lines,run_command`,
		`plan.created model tasks=[1 2]`,
		`tool write_file task=- hint=- ok control`,
		`tool search_replace task=- hint=- ok control`,
		`task.completed 1 success calls=0`,
		`tool insert_lines task=- hint=- ok control`,
		`tool search_replace task=- hint=- failed error="old_string not found in file" control`,
		`tool run_command task=2 hint=- ok`,
		`plan.updated #1 tool_failures reason="the client has retries already" tasks=[1 2] kept=[] dropped=[2] over_cap=false`,
		`tool update_task_plan task=- hint=- ok control`,
		`tool write_file task=1 hint=file_edit ok`,
		`tool complete_task task=1 hint=file_edit ok control`,
		`task.completed 1 success calls=2 reported=partial_success`,
		`ended partial_success replans=1 calls=8 failed=1 iterations=3 ms=22000`,
	}
	if got := renderAll(t, res); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	q := res.stats.Quality
	if q.PlanFileCallsFailed != 2 || q.PlanFileSuperseded != 1 || len(q.Notes()) != 2 {
		t.Errorf("quality %+v, notes %q: want 2 failed plan-file calls (declined, failed), 1 superseded", q, q.Notes())
	}
}

// TestPlanFileListWithoutTask: in SkillLite's simple loop the plan file is
// the session's plan; a task_plan without a task (a recorder's) does not
// take it over, and complete_task, which SkillLite refuses with no task of
// its own, completes none of the file's tasks.
func TestPlanFileListWithoutTask(t *testing.T) {
	lines := []string{
		`{"data":{"total_tokens":10},"event":"llm_usage"}`,
		`{"data":{"arguments":"{\"content\":\"- [ ] Read the client\\n- [ ] Add retries\\n\",\"path\":\"todo.md\"}","name":"write_file","tool_call_id":"c1"},"event":"tool_call"}`,
		`{"data":{"is_error":false,"name":"write_file","result":"Successfully wrote 39 bytes to todo.md","tool_call_id":"c1"},"event":"tool_result"}`,
		`{"data":{"tasks":[]},"event":"task_plan"}`,
		`{"data":{"arguments":"{\"completion_type\":\"success\",\"task_id\":1}","name":"complete_task","tool_call_id":"c2"},"event":"tool_call"}`,
		`{"data":{"is_error":true,"name":"complete_task","result":"All tasks are already completed.","tool_call_id":"c2"},"event":"tool_result"}`,
		`{"data":{"total_tokens":10},"event":"llm_usage"}`,
		`{"data":{"arguments":"{\"file_path\":\"todo.md\",\"new_string\":\"- [x] Read the client\",\"old_string\":\"- [ ] Read the client\"}","name":"search_replace","tool_call_id":"c3"},"event":"tool_call"}`,
		`{"data":{"is_error":false,"name":"search_replace","result":"Successfully replaced 1 occurrence(s) in todo.md","tool_call_id":"c3"},"event":"tool_result"}`,
		`{"data":{"completion_type":"success","response":"done","task_completed":false,"tool_calls":3},"event":"done"}`,
	}
	res := translate(t, []byte(strings.Join(lines, "\n")+"\n"))
	want := []string{
		`started goal="unknown" agent=skilllite model=unknown tools=complete_task,update_task_plan,write_file,search_replace`,
		`plan.created model tasks=[1 2]`,
		`tool write_file task=- hint=- ok control`,
		`tool complete_task task=- hint=- failed error="All tasks are already completed." control`,
		`tool search_replace task=- hint=- ok control`,
		`task.completed 1 success calls=0`,
		`ended success replans=0 calls=3 failed=1 iterations=2 ms=9000`,
	}
	if got := renderAll(t, res); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.stats.Ignored != 1 {
		t.Errorf("ignored %d lines, want 1 (the task_plan without a task)", res.stats.Ignored)
	}
}
