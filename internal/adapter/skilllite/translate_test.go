package skilllite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/rpcsim"
)

func TestTranslateFixtures(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		want  []string
		bad   []int // line numbers reported malformed
		stats Counts
	}{
		{
			name: "a turn without replan, as agent-rpc writes it",
			file: "no_replan.jsonl",
			want: []string{
				`started goal="Read README.md" agent=skilllite model=unknown tools=complete_task,update_task_plan,read_file,write_file`,
				`plan.created model tasks=[1 2]`,
				`tool read_file task=1 hint=file_read ok`,
				`tool complete_task task=1 hint=file_read ok control`,
				`task.completed 1 success calls=2 reported=success summary="README read"`,
				`tool write_file task=2 hint=file_write ok`,
				`tool complete_task task=2 hint=file_write ok control`,
				`task.completed 2 success calls=2 reported=success`,
				`ended success replans=0 calls=4 failed=0 iterations=2 ms=14000`,
			},
			stats: Counts{Lines: 15, Events: 9, Sessions: 1, Ignored: 1},
		},
		{
			name: "replans: kept and dropped as the handler does, a stripped hint, a refused complete_task",
			file: "replans.jsonl",
			want: []string{
				`started goal="Run the flaky test five times" agent=skilllite model=unknown tools=complete_task,update_task_plan,run_command,read_file,grep_files,search_replace`,
				`plan.created model tasks=[1 2 3]`,
				`tool run_command task=1 hint=command ok`,
				`tool complete_task task=1 hint=command ok control`,
				`task.completed 1 success calls=2 reported=success`,
				`tool read_file task=2 hint=file_read failed error="Error: file not found: upload/handler.go\n\nTip: If this approach is wrong or the plan is no longer valid, call update_task_plan with a revised task list, then continue with the new plan."`,
				`plan.updated #1 tool_failures reason="The race is in the retry helper, not in the handler" tasks=[1* 2 3] kept=[1] dropped=[2 3] over_cap=false`,
				`hint.stripped task=2 hint=grep replan unavailable`,
				`tool update_task_plan task=- hint=- ok control`,
				`tool grep_files task=2 hint=- ok`,
				`tool complete_task task=2 hint=- failed error="completion_type=success conflicts with execution signals (failed tools or replans observed). Use completion_type=partial_success or failure." control`,
				`tool complete_task task=2 hint=- ok control`,
				`task.completed 2 success calls=3 reported=partial_success summary="found in upload/retry.go"`,
				`plan.updated #2 model reason="Verify the fix too" tasks=[1* 2* 3 4] kept=[1 2] dropped=[3] over_cap=false`,
				`tool update_task_plan task=- hint=- ok control`,
				`tool search_replace task=3 hint=file_edit ok`,
				`tool complete_task task=3 hint=file_edit ok control`,
				`task.completed 3 success calls=2 reported=partial_success`,
				`tool run_command task=4 hint=command ok`,
				`tool complete_task task=4 hint=command ok control`,
				`task.completed 4 success calls=2 reported=partial_success`,
				`ended partial_success replans=2 calls=12 failed=2 iterations=8 ms=39000`,
			},
			stats: Counts{Lines: 40, Events: 22, Sessions: 1},
		},
		{
			name: "suppressed duplicate results and skipped calls",
			file: "suppressed_and_skipped.jsonl",
			want: []string{
				`started goal="Read the config" agent=skilllite model=unknown tools=complete_task,update_task_plan,read_file,list_directory`,
				`plan.created model tasks=[1 2]`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool complete_task task=1 hint=file_read ok control`,
				`task.completed 1 success calls=3 reported=success`,
				`tool list_directory task=2 hint=file_list ok`,
				`tool read_file task=2 hint=file_list ok`,
				`tool list_directory task=2 hint=file_list failed error="Error: directory not found: missing\n\nTip: If this approach is wrong or the plan is no longer valid, call update_task_plan with a revised task list, then continue with the new plan."`,
				`tool list_directory task=2 hint=file_list failed error="Error: directory not found: missing\n\n⚠️ LOOP DETECTED: Tool 'list_directory' has failed 2 times in a row with the same error. You are stuck in a retry loop. STOP retrying this exact call. Instead: (1) re-read the error message carefully, (2) change the argument format, or (3) skip this step and proceed to the next task."`,
				`tool list_directory task=2 hint=file_list ok`,
				`tool list_directory task=2 hint=file_list failed error="Error: directory not found: missing\n\n⚠️ LOOP DETECTED: Tool 'list_directory' has failed 2 times in a row with the same error. You are stuck in a retry loop. STOP retrying this exact call. Instead: (1) re-read the error message carefully, (2) change the argument format, or (3) skip this step and proceed to the next task."`,
				`tool complete_task task=2 hint=file_list ok control`,
				`task.completed 2 partial_success calls=7 reported=partial_success`,
				`ended partial_success replans=0 calls=10 failed=3 iterations=3 ms=25000`,
			},
			stats: Counts{Lines: 26, Events: 15, Sessions: 1, Skipped: 2, Suppressed: 4},
		},
		{
			name: "rejected replans: validation (not counted) and handler (counted); the soft cap",
			file: "rejected_replans.jsonl",
			want: []string{
				`started goal="Collect the failing tests" agent=skilllite model=unknown tools=complete_task,update_task_plan,run_command`,
				`plan.created model tasks=[1 2]`,
				`plan.updated #1 model reason="start over" rejected error="Missing required field(s): tasks\n\nTip: If this approach is wrong or the plan is no longer valid, call update_task_plan with a revised task list, then continue with the new plan." over_cap=false`,
				`tool update_task_plan task=- hint=- failed error="Missing required field(s): tasks\n\nTip: If this approach is wrong or the plan is no longer valid, call update_task_plan with a revised task list, then continue with the new plan." control`,
				`plan.updated #2 tool_failures reason="nothing to do" rejected error="Task list cannot be empty\n\nTip: If this approach is wrong or the plan is no longer valid, call update_task_plan with a revised task list, then continue with the new plan." over_cap=false`,
				`tool update_task_plan task=- hint=- failed error="Task list cannot be empty\n\nTip: If this approach is wrong or the plan is no longer valid, call update_task_plan with a revised task list, then continue with the new plan." control`,
				`plan.updated #3 tool_failures reason="split the work" tasks=[1 2 3] kept=[] dropped=[1 2] over_cap=false`,
				`tool update_task_plan task=- hint=- ok control`,
				`plan.updated #4 model reason="lexer first" tasks=[1 2 3] kept=[] dropped=[1 2 3] over_cap=true`,
				`tool update_task_plan task=- hint=- ok control`,
				`tool run_command task=1 hint=command ok`,
				`tool complete_task task=1 hint=command failed error="completion_type=success conflicts with execution signals (failed tools or replans observed). Use completion_type=partial_success or failure." control`,
				`tool complete_task task=1 hint=command ok control`,
				`task.completed 1 success calls=3 reported=partial_success`,
				`ended partial_success replans=4 calls=7 failed=3 iterations=5 ms=23000`,
			},
			stats: Counts{Lines: 24, Events: 15, Sessions: 1},
		},
		{
			name: "the depth limit, then a replan it triggered",
			file: "depth_limit.jsonl",
			want: []string{
				`started goal="Find where the timeout is set" agent=skilllite model=unknown tools=complete_task,update_task_plan,read_file`,
				`plan.created model tasks=[1 2]`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`depth_limit task=1 calls=15 limit=15`,
				`plan.updated #1 depth_limit reason="search instead of reading file by file" tasks=[1 2] kept=[] dropped=[1 2] over_cap=false`,
				`hint.stripped task=1 hint=grep replan unavailable`,
				`tool update_task_plan task=- hint=- ok control`,
				`ended partial_success replans=1 calls=16 failed=0 iterations=4 ms=38000`,
			},
			stats: Counts{Lines: 39, Events: 22, Sessions: 1},
		},
		{
			name: "a plain answer is not a session",
			file: "plain_answer.jsonl",
			want: []string{
				`started goal="List the repository" agent=skilllite model=unknown tools=complete_task,update_task_plan,list_directory`,
				`plan.created model tasks=[1]`,
				`tool list_directory task=1 hint=file_list ok`,
				`tool complete_task task=1 hint=file_list ok control`,
				`task.completed 1 success calls=2 reported=success`,
				`ended success replans=0 calls=2 failed=0 iterations=1 ms=7000`,
			},
			stats: Counts{Lines: 13, Events: 6, Sessions: 1, Ignored: 2, PlainAnswers: 1},
		},
		{
			name: "the fallback plan (a recording with the request)",
			file: "fallback_plan.jsonl",
			want: []string{
				`started goal="Tidy the build scripts" agent=skilllite model=unknown tools=complete_task,update_task_plan,list_directory`,
				`plan.created fallback tasks=[1]`,
				`tool list_directory task=1 hint=- ok`,
				`tool complete_task task=1 hint=- ok control`,
				`task.completed 1 success calls=2 reported=success`,
				`ended success replans=0 calls=2 failed=0 iterations=1 ms=8000`,
			},
			stats: Counts{Lines: 9, Events: 6, Sessions: 1},
		},
		{
			name: "an error event ends the turn as failure",
			file: "error_event.jsonl",
			want: []string{
				`started goal="Summarise the changelog" agent=skilllite model=unknown tools=complete_task,update_task_plan,read_file`,
				`plan.created model tasks=[1]`,
				`tool read_file task=1 hint=file_read ok`,
				`ended failure replans=0 calls=1 failed=0 iterations=1 ms=4000`,
			},
			stats: Counts{Lines: 5, Events: 4, Sessions: 1},
		},
		{
			name: "the input ends mid-call",
			file: "cut_mid_turn.jsonl",
			want: []string{
				`started goal="Run the benchmarks" agent=skilllite model=unknown tools=complete_task,update_task_plan,run_command`,
				`plan.created model tasks=[1]`,
				`tool run_command task=1 hint=command failed error="no tool_result before the turn ended" kind=no_result`,
				`ended aborted replans=0 calls=1 failed=1 iterations=1 ms=4000`,
			},
			stats: Counts{Lines: 5, Events: 4, Sessions: 1, Ignored: 2},
		},
		{
			name: "events that are no planning signal are ignored",
			file: "unknown_events.jsonl",
			want: []string{
				`started goal="Preview the site" agent=skilllite model=unknown tools=complete_task,update_task_plan,preview_server`,
				`plan.created model tasks=[1]`,
				`tool preview_server task=1 hint=preview ok`,
				`tool complete_task task=1 hint=preview ok control`,
				`task.completed 1 success calls=2 reported=success`,
				`ended success replans=0 calls=2 failed=0 iterations=1 ms=14000`,
			},
			stats: Counts{Lines: 15, Events: 6, Sessions: 1, Ignored: 7},
		},
		{
			name: "malformed lines are reported and skipped",
			file: "malformed.jsonl",
			want: []string{
				`started goal="List the files" agent=skilllite model=unknown tools=complete_task,update_task_plan,list_directory`,
				`plan.created model tasks=[1]`,
				`tool list_directory task=1 hint=list_directory ok`,
				`ended success replans=0 calls=1 failed=0 iterations=0 ms=5000`,
			},
			bad:   []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 19, 21},
			stats: Counts{Lines: 21, Events: 4, Sessions: 1, Malformed: 15},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := translate(t, readFixture(t, tt.file))
			adaptertest.CheckSessions(t, res.events, testConfig.Source)
			got := renderAll(t, res)
			if !slices.Equal(got, tt.want) {
				t.Errorf("translate(%s) =\n\t%s\nwant\n\t%s", tt.file, strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
			if !slices.Equal(res.bad, tt.bad) {
				t.Errorf("translate(%s) reported lines %v as malformed, want %v", tt.file, res.bad, tt.bad)
			}
			if st := planStats(res); st != tt.stats {
				t.Errorf("translate(%s) stats (model calls apart) = %+v, want %+v", tt.file, st, tt.stats)
			}
		})
	}
}

// Orderings and gaps the fixtures do not show, in a compact notation: each
// input line is an event in SkillLite's format (see line.go), or, marked,
// a variant of recorders.
func TestTranslateEdgeCases(t *testing.T) {
	const (
		plan2    = `{"data":{"tasks":[{"completed":false,"description":"a","id":1,"tool_hint":"file_read"},{"completed":false,"description":"b","id":2}]},"event":"task_plan"}`
		plan3    = `{"data":{"tasks":[{"completed":false,"description":"c","id":1,"tool_hint":"command"}]},"event":"task_plan"}`
		utp      = `{"data":{"arguments":"{\"reason\":\"r\",\"tasks\":[{\"description\":\"c\",\"id\":1,\"tool_hint\":\"command\"}]}","name":"update_task_plan","tool_call_id":"u1"},"event":"tool_call"}`
		utpOK    = `{"data":{"is_error":false,"name":"update_task_plan","result":"Task plan updated (1 tasks). Continue with the new plan.\nReason: r","tool_call_id":"u1"},"event":"tool_result"}`
		usage    = `{"data":{"completion_tokens":1,"prompt_tokens":1,"total_tokens":2},"event":"llm_usage"}`
		done     = `{"data":{"completion_type":"success","response":"ok","task_completed":true,"task_id":"t","tool_calls":1},"event":"done"}`
		read     = `{"data":{"arguments":"{\"path\":\"a\"}","name":"read_file","tool_call_id":"r1"},"event":"tool_call"}`
		readOK   = `{"data":{"is_error":false,"name":"read_file","result":"A","tool_call_id":"r1"},"event":"tool_result"}`
		refuse   = `{"data":{"arguments":"{\"completion_type\":\"success\",\"task_id\":1}","name":"complete_task","tool_call_id":"c1"},"event":"tool_call"}`
		refused  = `{"data":{"is_error":true,"name":"complete_task","result":"completion_type=success conflicts with execution signals (failed tools or replans observed). Use completion_type=partial_success or failure.","tool_call_id":"c1"},"event":"tool_result"}`
		complete = `{"data":{"arguments":"{\"completion_type\":\"partial_success\",\"task_id\":2}","name":"complete_task","tool_call_id":"c2"},"event":"tool_call"}`
	)
	started := `started goal="a" agent=skilllite model=unknown tools=complete_task,update_task_plan`
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{
			name:  "update_task_plan whose result was suppressed: accepted, since its task_plan came",
			lines: []string{plan2, usage, utp, plan3, usage, done},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`plan.updated #1 model reason="r" tasks=[1] kept=[] dropped=[1 2] over_cap=false`,
				`tool update_task_plan task=- hint=- ok control`,
				`ended success replans=1 calls=1 failed=0 iterations=2 ms=5000`},
		},
		{
			name:  "complete_task whose result was suppressed: failed, since no task_progress came",
			lines: []string{plan2, usage, refuse, refused, read, readOK, usage, refuse, done},
			want: []string{started + ",read_file", `plan.created model tasks=[1 2]`,
				`tool complete_task task=1 hint=file_read failed error="completion_type=success conflicts with execution signals (failed tools or replans observed). Use completion_type=partial_success or failure." control`,
				`tool read_file task=1 hint=file_read ok`,
				`tool complete_task task=1 hint=file_read failed error="completion_type=success conflicts with execution signals (failed tools or replans observed). Use completion_type=partial_success or failure." control`,
				`ended success replans=0 calls=3 failed=2 iterations=2 ms=8000`},
		},
		{
			name:  "update_task_plan when the input ends: no result",
			lines: []string{plan2, usage, utp},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`plan.updated #1 model reason="r" rejected error="no tool_result before the turn ended" over_cap=false`,
				`tool update_task_plan task=- hint=- failed error="no tool_result before the turn ended" kind=no_result control`,
				`ended aborted replans=1 calls=1 failed=1 iterations=1 ms=2000`},
		},
		{
			name:  "complete_task naming a later task: refused by SkillLite, attributed to the task it names",
			lines: []string{plan2, usage, complete, `{"data":{"is_error":true,"name":"complete_task","result":"Cannot complete task 2 — current task is 1. Complete tasks in order.","tool_call_id":"c2"},"event":"tool_result"}`, done},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`tool complete_task task=2 hint=- failed error="Cannot complete task 2 — current task is 1. Complete tasks in order." control`,
				`ended success replans=0 calls=1 failed=1 iterations=1 ms=4000`},
		},
		{
			name: "variant: a request while a turn is open aborts it; a turn with neither task nor call is a plain answer",
			lines: []string{`{"method":"agent_chat","params":{"message":"g"}}`, plan2, read,
				`{"method":"agent_chat","params":{"message":"h"}}`, `{"data":{"tasks":[]},"event":"task_plan"}`, done},
			want: []string{`started goal="g" agent=skilllite model=unknown tools=complete_task,update_task_plan,read_file`,
				`plan.created model tasks=[1 2]`,
				`tool read_file task=1 hint=file_read failed error="no tool_result before the turn ended" kind=no_result`,
				`ended aborted replans=0 calls=1 failed=1 iterations=0 ms=3000`},
		},
		{
			name: "variant: results paired by id, then by name; a result without its call",
			lines: []string{plan2,
				`{"event":"tool_call","data":{"name":"grep_files","id":"c1"}}`,
				`{"event":"tool_result","data":{"name":"grep_files","tool_call_id":"c1","result":"boom","is_error":true}}`,
				`{"event":"tool_call","data":{"name":"grep_files","arguments":{"pattern":"x"}}}`,
				`{"event":"tool_result","data":{"name":"grep_files","result":"fine"}}`,
				`{"event":"tool_result","data":{"name":"read_file","result":"orphan"}}`,
				done},
			want: []string{started + ",grep_files,read_file", `plan.created model tasks=[1 2]`,
				`tool grep_files task=1 hint=file_read failed error="boom"`,
				`tool grep_files task=1 hint=file_read ok`,
				`tool read_file task=1 hint=file_read ok`,
				`ended success replans=0 calls=3 failed=1 iterations=0 ms=6000`},
		},
		{
			name: "variant: Unix timestamps in seconds and milliseconds",
			lines: []string{
				`{"ts":1772409600,"event":"task_plan","data":{"tasks":[{"id":1,"description":"a"}]}}`,
				`{"ts":1772409600.5,"event":"tool_call","data":{"name":"read_file"}}`,
				`{"timestamp":1772409601750,"event":"tool_result","data":{"name":"read_file"}}`,
				`{"time":"2026-03-02T00:00:03+00:00","event":"done","data":{"completion_type":"success"}}`},
			want: []string{`started goal="a" agent=skilllite model=unknown tools=complete_task,update_task_plan,read_file`,
				`plan.created model tasks=[1]`,
				`tool read_file task=1 hint=- ok ms=1250`,
				`ended success replans=0 calls=1 failed=0 iterations=0 ms=3000`},
		},
		{
			name:  "variant: a task_plan outside update_task_plan is a replan without a call, or progress",
			lines: []string{plan2, `{"data":{"tasks":[{"completed":true,"description":"a","id":1,"tool_hint":"file_read"},{"completed":false,"description":"b","id":2}]},"event":"task_plan"}`, plan3, done},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`task.completed 1 success calls=0`,
				`plan.updated #1 model tasks=[1] kept=[] dropped=[2] over_cap=false`,
				`ended success replans=1 calls=0 failed=0 iterations=0 ms=3000`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := translate(t, []byte(strings.Join(tt.lines, "\n")))
			adaptertest.CheckSessions(t, res.events, testConfig.Source)
			if len(res.bad) > 0 {
				t.Fatalf("lines %v reported malformed", res.bad)
			}
			if got := renderAll(t, res); !slices.Equal(got, tt.want) {
				t.Errorf("translate =\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

// TestSameInputSameIDs: bridging the same input twice gives the same
// session and event ids; another turn gets others.
func TestSameInputSameIDs(t *testing.T) {
	ids := func(input []byte) []string {
		var out []string
		for _, e := range translate(t, input).events {
			out = append(out, e.Subject+" "+e.ID)
		}
		return out
	}
	a, b := readFixture(t, "replans.jsonl"), readFixture(t, "no_replan.jsonl")
	first, again := ids(a), ids(a)
	if len(first) == 0 || !slices.Equal(first, again) {
		t.Fatalf("ids differ between two translations of the same input:\n%v\n%v", first, again)
	}
	both := ids(append(slices.Clone(a), b...))
	if !slices.Equal(both[:len(first)], first) {
		t.Errorf("a turn's ids depend on what follows it")
	}
	if other := ids(b); slices.Contains(first, other[0]) || strings.Fields(other[0])[0] == strings.Fields(first[0])[0] {
		t.Errorf("two turns share ids: %s", other[0])
	}
}

// TestToolCallID: agent.tool.called carries SkillLite's tool_call_id as an
// extension attribute, for joins with its transcripts.
func TestToolCallID(t *testing.T) {
	var got []any
	for _, e := range translate(t, readFixture(t, "no_replan.jsonl")).events {
		if e.Type == events.ToolCalled {
			got = append(got, e.Extensions[ToolCallIDExtension])
		}
	}
	if want := []any{"call_01", "call_02", "call_03", "call_04"}; !slices.Equal(got, want) {
		t.Errorf("tool_call ids %v, want %v", got, want)
	}
}

// FuzzTranslate: whatever the input, the translator does not panic, every
// event it emits passes the contract, and the sessions are well formed.
func FuzzTranslate(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(fixtures, "*.jsonl"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		// Each line alone too, so that the fuzzer recombines lines.
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line)
		}
	}
	// Turns that keep a plan file, in each mode (rpcsim.PlanFiles).
	pf, _ := rpcsim.PlanFiles(1, 3)
	f.Add(pf)
	f.Fuzz(func(t *testing.T, input []byte) {
		res := translate(t, input)
		adaptertest.CheckSessions(t, res.events, testConfig.Source)
	})
}

// TestModelCalls: every llm_usage line of a turn that is a session is one
// agent.model.called, in order, with the line's tokens, for the task in
// progress; agent.session.ended's usage is their sum. The truth is read
// from the fixtures' own llm_usage lines.
func TestModelCalls(t *testing.T) {
	for _, file := range []string{"no_replan.jsonl", "replans.jsonl", "rejected_replans.jsonl", "depth_limit.jsonl", "suppressed_and_skipped.jsonl"} {
		t.Run(file, func(t *testing.T) {
			in := readFixture(t, file)
			var want []string
			var in64, out64 int64
			for line := range bytes.Lines(in) {
				var l struct {
					Event string `json:"event"`
					Data  struct {
						Prompt     int64 `json:"prompt_tokens"`
						Completion int64 `json:"completion_tokens"`
					} `json:"data"`
				}
				if json.Unmarshal(line, &l) == nil && l.Event == "llm_usage" {
					want = append(want, fmt.Sprintf("%d/%d", l.Data.Prompt, l.Data.Completion))
					in64, out64 = in64+l.Data.Prompt, out64+l.Data.Completion
				}
			}
			res := translate(t, in)
			var got []string
			var ended *events.SessionEndedData
			for _, e := range res.events {
				p, err := e.Payload()
				if err != nil {
					t.Fatal(err)
				}
				switch d := p.(type) {
				case *events.ModelCalledData:
					if d.InputTokens == nil || d.OutputTokens == nil || d.CachedInputTokens != nil {
						t.Fatalf("model call %s: tokens %+v, want input and output, no cached count", e.ID, d)
					}
					if d.TaskID == nil {
						t.Errorf("model call %s without a task: every fixture's llm_usage comes after its plan", e.ID)
					}
					got = append(got, fmt.Sprintf("%d/%d", *d.InputTokens, *d.OutputTokens))
				case *events.SessionEndedData:
					ended = d
				}
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("model calls %q, want the llm_usage lines' %q", got, want)
			}
			u := ended.Usage
			if u == nil || u.ModelCalls != int64(len(want)) || u.InputTokens == nil || *u.InputTokens != in64 ||
				u.OutputTokens == nil || *u.OutputTokens != out64 || u.CachedInputTokens != nil || ended.Iterations != int64(len(want)) {
				t.Errorf("session usage %+v (iterations %d), want %d calls, %d/%d tokens", u, ended.Iterations, len(want), in64, out64)
			}
		})
	}
}

// TestImpossibleUsage: an llm_usage line with a negative or fractional
// count is malformed (reported with its reason), and its tokens are not
// summed; the turn goes on.
func TestImpossibleUsage(t *testing.T) {
	in := readFixture(t, "no_replan.jsonl")
	var out []byte
	bad := 0
	for line := range bytes.Lines(in) {
		if bad < 2 && bytes.Contains(line, []byte(`"llm_usage"`)) {
			if bad == 0 {
				line = []byte(`{"data":{"completion_tokens":150,"prompt_tokens":-5},"event":"llm_usage"}` + "\n")
			} else {
				line = []byte(`{"data":{"completion_tokens":1.5,"prompt_tokens":2},"event":"llm_usage"}` + "\n")
			}
			bad++
		}
		out = append(out, line...)
	}
	res := translate(t, out)
	if len(res.bad) != 2 || res.stats.Malformed != 2 {
		t.Errorf("malformed lines %v (%d), want the two llm_usage lines", res.bad, res.stats.Malformed)
	}
	if res.models != 0 || res.stats.Sessions != 1 {
		t.Errorf("%d model calls in %d sessions, want none in 1", res.models, res.stats.Sessions)
	}
	var le *LineError
	tr := NewTranslator(testConfig, agent.NewJSONLWriter(io.Discard), testClock())
	err := tr.Line(context.Background(), 1, []byte(`{"data":{"prompt_tokens":-5},"event":"llm_usage"}`))
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "prompt_tokens") {
		t.Errorf("error %v, want a line error naming prompt_tokens", err)
	}
}
