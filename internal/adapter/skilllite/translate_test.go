package skilllite

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/adapter/adaptertest"
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
			name: "turn without replan, timestamps give durations",
			file: "no_replan.jsonl",
			want: []string{
				`started goal="Summarize README.md into NOTES.md" agent=skilllite model=qwen2.5-coder-32b tools=complete_task,update_task_plan`,
				`plan.created model tasks=[1 2]`,
				`tool read_file task=1 hint=read_file ok ms=250`,
				`tool complete_task task=1 hint=read_file ok control ms=10`,
				`task.completed 1 success calls=2 summary="README read"`,
				`tool write_file task=2 hint=write_file ok ms=50`,
				`task.completed 2 success calls=1`,
				`ended success replans=0 calls=3 failed=0 iterations=3 ms=9500`,
			},
			stats: Counts{Lines: 13, Events: 8, Sessions: 1, Ignored: 2},
		},
		{
			name: "two replans with reasons from update_task_plan",
			file: "two_replans.jsonl",
			want: []string{
				`started goal="Find the cause of the flaky TestUpload and fix it" agent=skilllite model=unknown tools=complete_task,update_task_plan`,
				`plan.created model tasks=[1 2 3]`,
				`tool run_command task=1 hint=run_command ok`,
				`tool complete_task task=1 hint=run_command ok control`,
				`task.completed 1 success calls=2`,
				`tool read_file task=2 hint=read_file ok`,
				`plan.updated #1 model reason="The race is in the retry helper, not in the handler" tasks=[1* 2 3] kept=[1] dropped=[2 3] over_cap=false`,
				`tool update_task_plan task=- hint=- ok control`,
				// Task 2 is a new task now (SkillLite renumbered): its
				// tally starts afresh.
				`tool read_file task=2 hint=read_file ok`,
				`tool complete_task task=2 hint=read_file ok control`,
				`task.completed 2 success calls=2`,
				`plan.updated #2 model reason="Run the test again after the fix" tasks=[1* 2* 3 4] kept=[1 2 3] dropped=[] over_cap=false`,
				`tool update_task_plan task=- hint=- ok control`,
				`tool write_file task=3 hint=write_file ok`,
				`tool complete_task task=3 hint=write_file ok control`,
				`task.completed 3 success calls=2 summary="mutex added"`,
				`tool run_command task=4 hint=run_command ok`,
				`task.completed 4 success calls=1`,
				`ended success replans=2 calls=10 failed=0 iterations=10 ms=28000`,
			},
			stats: Counts{Lines: 29, Events: 19, Sessions: 1},
		},
		{
			name: "two turns sharing a session_key are two sessions",
			file: "shared_session_key.jsonl",
			want: []string{
				`started goal="Read config.yaml" agent=skilllite model=unknown tools=complete_task,update_task_plan`,
				`plan.created model tasks=[1]`,
				`tool read_file task=1 hint=read_file ok`,
				`tool complete_task task=1 hint=read_file ok control`,
				`task.completed 1 success calls=2`,
				`ended success replans=0 calls=2 failed=0 iterations=2 ms=7000`,
				`started goal="Which port does it use?" agent=skilllite model=unknown tools=complete_task,update_task_plan,read_file`,
				`plan.created empty tasks=[]`,
				`ended success replans=0 calls=0 failed=0 iterations=0 ms=3000`,
			},
			stats: Counts{Lines: 12, Events: 9, Sessions: 2, Ignored: 1},
		},
		{
			name: "tool errors, field variants and a rejected replan",
			file: "tool_errors.jsonl",
			want: []string{
				`started goal="Upgrade the project to Go 1.26 and fix the build" agent=skilllite model=unknown tools=complete_task,update_task_plan`,
				`plan.created model tasks=[1 2]`,
				`tool write_file task=1 hint=write_file ok`,
				`tool complete_task task=1 hint=write_file ok control`,
				`task.completed 1 success calls=2 reported=success`,
				`tool run_command task=2 hint=run_command failed error="exit status 1: undefined: constraints.Ordered"`,
				`tool run_command task=2 hint=run_command failed error="exit status 1: undefined: constraints.Ordered"`,
				`plan.updated #1 model reason="Give up on the build" rejected error="Task list cannot be empty" over_cap=false`,
				`tool update_task_plan task=- hint=- failed error="Task list cannot be empty" control`,
				`tool http_request task=2 hint=run_command failed error="timeout after 30s"`,
				`tool complete_task task=2 hint=run_command ok control`,
				`task.completed 2 partial_success calls=4 reported=partial_success summary="builds except x/exp"`,
				`ended partial_success replans=1 calls=7 failed=4 iterations=7 ms=18000`,
			},
			stats: Counts{Lines: 19, Events: 13, Sessions: 1},
		},
		{
			name: "stream cut mid-turn ends the session aborted",
			file: "cut_mid_turn.jsonl",
			want: []string{
				`started goal="Fetch the release notes and summarize them" agent=skilllite model=unknown tools=complete_task,update_task_plan`,
				`plan.created model tasks=[1 2]`,
				`tool http_request task=1 hint=http_request ok`,
				`tool complete_task task=1 hint=http_request failed error="no tool_result before the turn ended" kind=no_result control`,
				`task.completed 1 success calls=2`,
				`ended aborted replans=0 calls=2 failed=1 iterations=2 ms=5000`,
			},
			stats: Counts{Lines: 6, Events: 6, Sessions: 1},
		},
		{
			name: "error event ends the session as failure; an error outside a turn is ignored",
			file: "error_event.jsonl",
			want: []string{
				`started goal="Deploy the service" agent=skilllite model=unknown tools=complete_task,update_task_plan`,
				`plan.created model tasks=[1]`,
				`tool run_command task=1 hint=run_command failed error="no tool_result before the turn ended" kind=no_result`,
				`ended failure replans=0 calls=1 failed=1 iterations=1 ms=3000`,
			},
			stats: Counts{Lines: 5, Events: 4, Sessions: 1, Ignored: 1},
		},
		{
			name: "malformed lines are reported, skipped and counted",
			file: "malformed.jsonl",
			want: []string{
				`started goal="List the files" agent=skilllite model=unknown tools=complete_task,update_task_plan`,
				`plan.created model tasks=[1]`,
				`tool list_directory task=1 hint=list_directory ok`,
				`ended success replans=0 calls=1 failed=0 iterations=1 ms=5000`,
			},
			bad:   []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 19, 21},
			stats: Counts{Lines: 21, Events: 4, Sessions: 1, Malformed: 15},
		},
		{
			name: "unknown events and other requests are ignored",
			file: "unknown_events.jsonl",
			want: []string{
				`started goal="Delete the tmp directory" agent=skilllite model=unknown tools=complete_task,update_task_plan`,
				`plan.created model tasks=[1]`,
				`tool run_command task=1 hint=run_command ok`,
				`task.completed 1 success calls=1`,
				`ended success replans=0 calls=1 failed=0 iterations=1 ms=11000`,
			},
			stats: Counts{Lines: 15, Events: 5, Sessions: 1, Ignored: 9},
		},
		{
			name: "events without request lines: goal from the plan, progress and replans from task_plan alone",
			file: "no_request.jsonl",
			want: []string{
				`started goal="Fetch the weather for Shenzhen" agent=skilllite model=unknown tools=complete_task,update_task_plan`,
				`plan.created model tasks=[1 2]`,
				`tool weather task=1 hint=weather ok`,
				`task.completed 1 success calls=1`,
				`plan.updated #1 model tasks=[1* 2] kept=[1] dropped=[2] over_cap=false`,
				`tool http_request task=2 hint=http_request ok`,
				`ended partial_success replans=1 calls=2 failed=0 iterations=2 ms=7000`,
				`started goal="unknown" agent=skilllite model=unknown tools=complete_task,update_task_plan,weather,http_request`,
				`ended success replans=0 calls=0 failed=0 iterations=0 ms=0`,
			},
			stats: Counts{Lines: 10, Events: 9, Sessions: 2, Ignored: 1},
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
			if res.stats != tt.stats {
				t.Errorf("translate(%s) stats = %+v, want %+v", tt.file, res.stats, tt.stats)
			}
		})
	}
}

// Orderings and gaps the fixtures do not show, in a compact notation: each
// input line is an event name and its data, or a request.
func TestTranslateEdgeCases(t *testing.T) {
	const (
		req   = `{"method":"agent_chat","params":{"message":"g"}}`
		plan2 = `{"event":"task_plan","data":{"tasks":[{"id":1,"description":"a","tool_hint":"grep","completed":false},{"id":2,"description":"b","tool_hint":null,"completed":false}]}}`
		plan3 = `{"event":"task_plan","data":{"tasks":[{"id":1,"description":"a","tool_hint":"grep","completed":false},{"id":2,"description":"c","completed":false}]}}`
		plan4 = `{"event":"task_plan","data":{"tasks":[{"id":1,"description":"a","tool_hint":"grep","completed":false},{"id":2,"description":"d","completed":false}]}}`
		utp   = `{"event":"tool_call","data":{"name":"update_task_plan","arguments":"{\"reason\":\"r\"}"}}`
		utpOK = `{"event":"tool_result","data":{"name":"update_task_plan","result":"updated","is_error":false}}`
		done  = `{"event":"done","data":{"task_completed":true}}`
	)
	started := `started goal="g" agent=skilllite model=unknown tools=complete_task,update_task_plan`
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{
			name:  "the result of update_task_plan before its task_plan",
			lines: []string{req, plan2, utp, utpOK, plan3, done},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`plan.updated #1 model reason="r" tasks=[1 2] kept=[1] dropped=[2] over_cap=false`,
				`tool update_task_plan task=- hint=- ok control`,
				`ended success replans=1 calls=1 failed=0 iterations=1 ms=5000`},
		},
		{
			name:  "an accepted update_task_plan no task_plan follows",
			lines: []string{req, plan2, utp, utpOK, `{"event":"tool_call","data":{"name":"grep"}}`, `{"event":"tool_result","data":{"name":"grep","result":"x"}}`, done},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`plan.updated #1 model reason="r" rejected error="the call succeeded but no task_plan followed" over_cap=false`,
				`tool update_task_plan task=- hint=- ok control`,
				`tool grep task=1 hint=grep ok`,
				`ended success replans=1 calls=2 failed=0 iterations=2 ms=6000`},
		},
		{
			name:  "update_task_plan without a result when the turn ends",
			lines: []string{req, plan2, utp, done},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`plan.updated #1 model reason="r" rejected error="no tool_result before the turn ended" over_cap=false`,
				`tool update_task_plan task=- hint=- failed error="no tool_result before the turn ended" kind=no_result control`,
				`ended success replans=1 calls=1 failed=1 iterations=1 ms=3000`},
		},
		{
			name:  "three replans: the third is over the cap",
			lines: []string{req, plan2, utp, plan3, utpOK, utp, plan4, utpOK, utp, plan3, utpOK, done},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`plan.updated #1 model reason="r" tasks=[1 2] kept=[1] dropped=[2] over_cap=false`,
				`tool update_task_plan task=- hint=- ok control`,
				`plan.updated #2 model reason="r" tasks=[1 2] kept=[1] dropped=[2] over_cap=false`,
				`tool update_task_plan task=- hint=- ok control`,
				`plan.updated #3 model reason="r" tasks=[1 2] kept=[1] dropped=[2] over_cap=true`,
				`tool update_task_plan task=- hint=- ok control`,
				`ended success replans=3 calls=3 failed=0 iterations=3 ms=11000`},
		},
		{
			name:  "a request while a turn is open aborts it",
			lines: []string{req, plan2, `{"event":"tool_call","data":{"name":"grep"}}`, req, done},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`tool grep task=1 hint=grep failed error="no tool_result before the turn ended" kind=no_result`,
				`ended aborted replans=0 calls=1 failed=1 iterations=1 ms=3000`,
				`started goal="g" agent=skilllite model=unknown tools=complete_task,update_task_plan,grep`,
				`ended success replans=0 calls=0 failed=0 iterations=0 ms=1000`},
		},
		{
			name: "results paired by id, then by name; a result without its call",
			lines: []string{req, plan2,
				`{"event":"tool_call","data":{"name":"grep","id":"c1"}}`,
				`{"event":"tool_call","data":{"name":"grep","id":"c2","arguments":"not json"}}`,
				`{"event":"tool_result","data":{"name":"grep","id":"c2","result":"boom","is_error":true}}`,
				`{"event":"tool_result","data":{"name":"grep","result":"fine"}}`,
				`{"event":"tool_result","data":{"name":"read_file","result":"orphan"}}`,
				done},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`tool grep task=1 hint=grep failed error="boom"`,
				`tool grep task=1 hint=grep ok`,
				`tool read_file task=1 hint=grep ok`,
				`ended success replans=0 calls=3 failed=1 iterations=2 ms=7000`},
		},
		{
			name: "Unix timestamps in seconds and milliseconds",
			lines: []string{
				`{"ts":1772409600,"method":"agent_chat","params":{"message":"g"}}`,
				`{"ts":1772409600.5,"event":"tool_call","data":{"name":"grep"}}`,
				`{"timestamp":1772409601750,"event":"tool_result","data":{"name":"grep"}}`,
				`{"time":"2026-03-02T00:00:03+00:00","event":"done","data":{}}`},
			want: []string{started,
				`tool grep task=- hint=- ok ms=1250`,
				`ended success replans=0 calls=1 failed=0 iterations=1 ms=3000`},
		},
		{
			name: "complete_task naming a task out of order completes nothing when refused",
			lines: []string{req, plan2,
				`{"event":"tool_call","data":{"name":"complete_task","arguments":{"task_id":2}}}`,
				`{"event":"tool_result","data":{"name":"complete_task","result":"Cannot complete task 2 — current task is 1.","is_error":true}}`,
				`{"event":"task_progress","data":{"task_id":1,"completed":false}}`,
				`{"event":"done","data":{"completion_type":"failed"}}`},
			want: []string{started, `plan.created model tasks=[1 2]`,
				`tool complete_task task=2 hint=- failed error="Cannot complete task 2 — current task is 1." control`,
				`ended failure replans=0 calls=1 failed=1 iterations=1 ms=5000`},
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
	f.Fuzz(func(t *testing.T, input []byte) {
		res := translate(t, input)
		adaptertest.CheckSessions(t, res.events, testConfig.Source)
	})
}
