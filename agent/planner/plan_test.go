package planner

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    []agent.Task
		wantErr string
	}{
		{
			name: "model plan",
			raw:  `[{"id":1,"description":"Read utils.py","tool_hint":"read_file","completed":false},{"id":2,"description":"Split it","tool_hint":null,"completed":false}]`,
			want: []agent.Task{task(1, "Read utils.py", "read_file"), task(2, "Split it", "")},
		},
		{
			name: "json code fence, ids and flags ignored",
			raw:  "```json\n[{\"id\":7,\"description\":\"a\",\"tool_hint\":\"grep\",\"completed\":true},{\"description\":\"b\"}]\n```",
			want: []agent.Task{task(1, "a", "grep"), task(2, "b", "")},
		},
		{
			name: "bare code fence",
			raw:  "```\n[{\"description\":\"a\"}]\n```",
			want: []agent.Task{task(1, "a", "")},
		},
		{
			name: "task type kept, blank hint null, hint trimmed",
			raw:  `[{"description":"a","tool_hint":"","task_type":"edit"},{"description":"b","tool_hint":" grep "}]`,
			want: []agent.Task{typed(task(1, "a", ""), "edit"), task(2, "b", "grep")},
		},
		{name: "empty plan", raw: " [] ", want: []agent.Task{}},
		{name: "empty plan in a fence", raw: "```json\n[]\n```", want: []agent.Task{}},
		{name: "prose", raw: "I will first read the file.", wantErr: `parse plan: expected a JSON array of tasks, got "I will first read the file."`},
		{name: "nothing", raw: "  ", wantErr: "parse plan: expected a JSON array of tasks, got nothing"},
		{name: "object", raw: `{"tasks":[]}`, wantErr: `parse plan: expected a JSON array of tasks, got "{\"tasks\":[]}"`},
		{name: "null", raw: `null`, wantErr: `parse plan: expected a JSON array of tasks, got "null"`},
		{name: "truncated", raw: `[{"description":"a"`, wantErr: "parse plan: unexpected end of JSON input"},
		{name: "trailing text", raw: `[] and more`, wantErr: "parse plan: invalid character 'a' after top-level value"},
		{name: "element not an object", raw: `["read the file"]`, wantErr: "parse plan: json: cannot unmarshal string into Go value of type planner.modelTask"},
		{name: "hint not a string", raw: `[{"description":"a","tool_hint":3}]`, wantErr: "parse plan: json: cannot unmarshal number into Go struct field modelTask.tool_hint of type string"},
		{name: "no description", raw: `[{"description":"a"},{"tool_hint":"grep"}]`, wantErr: "parse plan: task 2 has no description"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.raw)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Parse(%q) = %v, %v, want error %q", tt.raw, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) error = %v", tt.raw, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q) = %s, want %s", tt.raw, tasksJSON(t, got), tasksJSON(t, tt.want))
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`[{"id":1,"description":"Read utils.py","tool_hint":"read_file","completed":false}]`)
	f.Add("```json\n[]\n```")
	f.Add(`[{"description":"a","tool_hint":"","task_type":"edit"}]`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, raw string) {
		tasks, err := Parse(raw)
		if err != nil {
			return
		}
		for i, task := range tasks {
			if task.ID != int64(i+1) || task.Completed || task.ToolHint != nil && strings.TrimSpace(*task.ToolHint) == "" {
				t.Fatalf("Parse(%q) task %d = %+v", raw, i, task)
			}
		}
		// Whatever parses makes a valid plan event.
		if _, err := events.New(testSource, testSession, 2, events.PlanCreated, newClock().now(), agent.PlanCreated{Tasks: tasks, Origin: events.OriginModel}); err != nil {
			t.Fatalf("Parse(%q) gives a plan the contract rejects: %v", raw, err)
		}
	})
}

func TestNewPlan(t *testing.T) {
	const goal = "Turn notes.pdf into TODO.md"
	rules := ruleset.RuleSet{Version: "v3", Rules: []ruleset.Rule{{ID: "p-1", Kind: ruleset.KindPrefer, TaskType: "docs", ToolHint: "read_file"}}}
	_, parseErr := Parse("Sure! Here is my plan")
	tests := []struct {
		name     string
		cfg      Config
		taskType string
		raw      string
		want     []agent.Task
		events   func(tb testing.TB, tasks []agent.Task) []string
	}{
		{
			name: "model plan",
			cfg:  toolsConfig(),
			raw:  `[{"description":"Read notes","tool_hint":"read_file"},{"description":"Write TODO.md","tool_hint":"write_file"}]`,
			want: []agent.Task{task(1, "Read notes", "read_file"), task(2, "Write TODO.md", "write_file")},
			events: func(tb testing.TB, tasks []agent.Task) []string {
				return []string{ev(tb, events.PlanCreated, agent.PlanCreated{Tasks: tasks, Origin: events.OriginModel})}
			},
		},
		{
			name: "hallucinated hints: plan.created shows them null, then one hint.stripped each",
			cfg:  toolsConfig(),
			raw:  `[{"description":"Extract","tool_hint":"pdf_to_text"},{"description":"Find items","tool_hint":"nlp_extract"},{"description":"Write","tool_hint":"write_file"}]`,
			want: []agent.Task{task(1, "Extract", ""), task(2, "Find items", ""), task(3, "Write", "write_file")},
			events: func(tb testing.TB, tasks []agent.Task) []string {
				return []string{
					ev(tb, events.PlanCreated, agent.PlanCreated{Tasks: tasks, Origin: events.OriginModel}),
					ev(tb, events.HintStripped, agent.HintStripped{TaskID: 1, ToolHint: "pdf_to_text", Phase: events.PhasePlan, Reason: events.StripUnavailable}),
					ev(tb, events.HintStripped, agent.HintStripped{TaskID: 2, ToolHint: "nlp_extract", Phase: events.PhasePlan, Reason: events.StripUnavailable}),
				}
			},
		},
		{
			name: "unparsable: one task from the goal, parse error kept",
			cfg:  toolsConfig(),
			raw:  "Sure! Here is my plan",
			want: []agent.Task{task(1, goal, "")},
			events: func(tb testing.TB, tasks []agent.Task) []string {
				return []string{ev(tb, events.PlanCreated, agent.PlanCreated{Tasks: tasks, Origin: events.OriginFallback, ParseError: parseErr.Error()})}
			},
		},
		{
			name:     "fallback task is sanitised too: a prefer rule for the session's type",
			cfg:      Config{Tools: testTools, Rules: rules},
			taskType: "docs",
			raw:      "[{",
			want:     []agent.Task{task(1, goal, "read_file")},
			events: func(tb testing.TB, tasks []agent.Task) []string {
				return []string{ev(tb, events.PlanCreated, agent.PlanCreated{Tasks: tasks, Origin: events.OriginFallback, ParseError: "parse plan: unexpected end of JSON input"})}
			},
		},
		{
			name: "empty plan",
			cfg:  toolsConfig(),
			raw:  "[]",
			want: []agent.Task{},
			events: func(tb testing.TB, tasks []agent.Task) []string {
				return []string{ev(tb, events.PlanCreated, agent.PlanCreated{Origin: events.OriginEmpty})}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.cfg)
			mustNil(t, "Start()", f.p.Start(t.Context(), StartInfo{Goal: goal, TaskType: tt.taskType}))
			f.sink.take()
			res, err := f.p.NewPlan(t.Context(), goal, tt.raw)
			if err != nil {
				t.Fatalf("NewPlan() error = %v", err)
			}
			if !res.Accepted || res.Message != "" || !reflect.DeepEqual(res.Tasks, tt.want) {
				t.Errorf("NewPlan() = %+v, want accepted, no message, tasks %s", res, tasksJSON(t, tt.want))
			}
			if got := f.p.Tasks(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Tasks() = %s, want %s", tasksJSON(t, got), tasksJSON(t, tt.want))
			}
			checkEvents(t, f.sink.take(), tt.events(t, tt.want))
		})
	}
}

func TestNewPlanFromTasks(t *testing.T) {
	tests := []struct {
		name   string
		in     []agent.Task
		want   []agent.Task
		origin events.Origin
	}{
		{
			name:   "renumbered from 1, nothing completed",
			in:     []agent.Task{done(task(9, "a", "grep")), task(3, "b", "")},
			want:   []agent.Task{task(1, "a", "grep"), task(2, "b", "")},
			origin: events.OriginModel,
		},
		{name: "no tasks", in: nil, want: nil, origin: events.OriginEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, toolsConfig())
			mustNil(t, "Start()", f.p.Start(t.Context(), StartInfo{}))
			f.sink.take()
			in := cloneTasks(tt.in)
			res, err := f.p.NewPlanFromTasks(t.Context(), in)
			if err != nil {
				t.Fatalf("NewPlanFromTasks() error = %v", err)
			}
			if !reflect.DeepEqual(res.Tasks, tt.want) {
				t.Errorf("NewPlanFromTasks() tasks = %s, want %s", tasksJSON(t, res.Tasks), tasksJSON(t, tt.want))
			}
			if !reflect.DeepEqual(in, tt.in) {
				t.Errorf("NewPlanFromTasks() changed its input to %s", tasksJSON(t, in))
			}
			checkEvents(t, f.sink.take(), []string{ev(t, events.PlanCreated, agent.PlanCreated{Tasks: tt.want, Origin: tt.origin})})
		})
	}
}

func TestSinkFailure(t *testing.T) {
	f := newFixture(t, toolsConfig())
	mustNil(t, "Start()", f.p.Start(t.Context(), StartInfo{}))
	f.sink.fail = errSink
	res, err := f.p.NewPlan(t.Context(), "goal", `[{"description":"a","tool_hint":"nope"}]`)
	if !errors.Is(err, errSink) {
		t.Fatalf("NewPlan() error = %v, want %v", err, errSink)
	}
	// Both events were attempted, and the step happened.
	if got := strings.Count(err.Error(), errSink.Error()); got != 2 {
		t.Errorf("NewPlan() error = %q, want both lost events reported", err)
	}
	want := []agent.Task{task(1, "a", "")}
	if !reflect.DeepEqual(res.Tasks, want) || !reflect.DeepEqual(f.p.Tasks(), want) {
		t.Errorf("after a sink failure: result %s, Tasks() %s, want %s", tasksJSON(t, res.Tasks), tasksJSON(t, f.p.Tasks()), tasksJSON(t, want))
	}
}
