package plandialect

import (
	"errors"
	"strings"
	"testing"
)

// Descriptions used across the cases.
const (
	R = "Read the parser code"
	F = "Fix the overflow bug"
	T = "Run the unit tests"
	D = "Update the docs"
)

// step is one plan call.
type step struct {
	plan Plan
	want string // summary of the Result
}

func because(reason string, p Plan) Plan { p.Reason = reason; return p }

func TestTracker(t *testing.T) {
	tests := []struct {
		name  string
		cap   int64 // soft cap; 0 is the default 3, -1 no cap
		steps []step
	}{
		{name: "first plan is created", steps: []step{
			{plan: todos("[ ] "+R, "[ ] "+F), want: "created tasks=1:" + R + ",2:" + F + " added=1,2"},
		}},
		{name: "empty first plan, then tasks", steps: []step{
			{plan: todos(), want: "created tasks="},
			{plan: todos("[ ] " + R), want: "replanned #1 tasks=1:" + R + " added=1"},
		}},
		{name: "identical call is unchanged", steps: []step{
			{plan: todos("[ ] "+R, "[ ] "+F), want: "created tasks=1:" + R + ",2:" + F + " added=1,2"},
			{plan: todos("[ ] "+R, "[ ] "+F), want: "unchanged tasks=1:" + R + ",2:" + F},
		}},
		{name: "completing a task is progress", steps: []step{
			{plan: todos("[~] "+R, "[ ] "+F), want: "created tasks=1~:" + R + ",2:" + F + " added=1,2"},
			{plan: todos("[x] "+R, "[~] "+F), want: "progressed tasks=1x:" + R + ",2~:" + F + " completed=1"},
			{plan: todos("[x] "+R, "[x] "+F), want: "progressed tasks=1x:" + R + ",2x:" + F + " completed=2"},
		}},
		{name: "starting a task is progress without completion", steps: []step{
			{plan: todos("[ ] "+R, "[ ] "+F), want: "created tasks=1:" + R + ",2:" + F + " added=1,2"},
			{plan: todos("[~] "+R, "[ ] "+F), want: "progressed tasks=1~:" + R + ",2:" + F},
		}},
		{name: "completed back to pending is progress, reported as reopened", steps: []step{
			{plan: todos("[x] "+R, "[ ] "+F), want: "created tasks=1x:" + R + ",2:" + F + " added=1,2 completed=1"},
			{plan: todos("[ ] "+R, "[ ] "+F), want: "progressed tasks=1:" + R + ",2:" + F + " reopened=1"},
			{plan: todos("[x] "+R, "[ ] "+F), want: "progressed tasks=1x:" + R + ",2:" + F + " completed=1"},
		}},
		{name: "an added task is a replan", steps: []step{
			{plan: todos("[x] "+R, "[ ] "+F), want: "created tasks=1x:" + R + ",2:" + F + " added=1,2 completed=1"},
			{plan: because("tests first", todos("[x] "+R, "[ ] "+T, "[ ] "+F)),
				want: `replanned #1 reason="tests first" tasks=1x:` + R + ",3:" + T + ",2:" + F + " kept=1 added=3"},
		}},
		{name: "a removed pending task is a replan and dropped", steps: []step{
			{plan: todos("[x] "+R, "[ ] "+F, "[ ] "+T), want: "created tasks=1x:" + R + ",2:" + F + ",3:" + T + " added=1,2,3 completed=1"},
			{plan: todos("[x] "+R, "[ ] "+T), want: "replanned #1 tasks=1x:" + R + ",3:" + T + " kept=1 dropped=2"},
		}},
		{name: "a removed completed task is progress (pruned)", steps: []step{
			{plan: todos("[x] "+R, "[ ] "+F), want: "created tasks=1x:" + R + ",2:" + F + " added=1,2 completed=1"},
			{plan: todos("[~] " + F), want: "progressed tasks=2~:" + F + " removed=1"},
			{plan: todos(), want: "replanned #1 tasks= dropped=2"},
		}},
		{name: "a reworded task keeps its id and is a replan", steps: []step{
			{plan: todos("[ ] "+R, "[ ] "+F), want: "created tasks=1:" + R + ",2:" + F + " added=1,2"},
			{plan: todos("[ ] "+R, "[ ] Fix the integer overflow bug"), want: "replanned #1 tasks=1:" + R + ",2:Fix the integer overflow bug reworded=2"},
		}},
		{name: "a reword and a status change in one call", steps: []step{
			{plan: todos("[~] "+R, "[ ] "+F), want: "created tasks=1~:" + R + ",2:" + F + " added=1,2"},
			{plan: todos("[x] Read the parser and lexer code", "[~] "+F),
				want: "replanned #1 tasks=1x:Read the parser and lexer code,2~:" + F + " kept=1 reworded=1 completed=1"},
		}},
		{name: "a different task at the same place is not a reword", steps: []step{
			{plan: todos("[ ] Fix the login bug"), want: "created tasks=1:Fix the login bug added=1"},
			{plan: todos("[ ] Fix the signup bug"), want: "replanned #1 tasks=2:Fix the signup bug dropped=1 added=2"},
		}},
		{name: "a change of case, spaces or punctuation only is unchanged", steps: []step{
			{plan: todos("[ ] "+R, "[ ] "+F), want: "created tasks=1:" + R + ",2:" + F + " added=1,2"},
			{plan: todos("[ ] read the  parser code.", "[ ] "+F), want: "unchanged tasks=1:read the  parser code.,2:" + F},
		}},
		{name: "tasks reordered only is unchanged", steps: []step{
			{plan: todos("[ ] "+R, "[ ] "+F, "[ ] "+T), want: "created tasks=1:" + R + ",2:" + F + ",3:" + T + " added=1,2,3"},
			{plan: todos("[ ] "+T, "[ ] "+R, "[ ] "+F), want: "unchanged tasks=3:" + T + ",1:" + R + ",2:" + F},
		}},
		{name: "two tasks swapped, one completed on the way", steps: []step{
			{plan: todos("[ ] "+R, "[~] "+F), want: "created tasks=1:" + R + ",2~:" + F + " added=1,2"},
			{plan: todos("[x] "+F, "[ ] "+R), want: "progressed tasks=2x:" + F + ",1:" + R + " completed=2"},
		}},
		{name: "duplicates with the same text pair by position", steps: []step{
			{plan: todos("[ ] "+T, "[ ] "+T), want: "created tasks=1:" + T + ",2:" + T + " added=1,2"},
			{plan: todos("[x] "+T, "[ ] "+T), want: "progressed tasks=1x:" + T + ",2:" + T + " completed=1"},
			{plan: todos("[ ] "+T, "[x] "+T), want: "progressed tasks=1:" + T + ",2x:" + T + " completed=2 reopened=1"},
			{plan: todos("[ ] " + T), want: "progressed tasks=1:" + T + " removed=2"},
			{plan: todos("[ ] "+T, "[ ] "+T), want: "replanned #1 tasks=1:" + T + ",3:" + T + " added=3"},
		}},
		{name: "duplicates: the copy at the same place stays", steps: []step{
			{plan: todos("[ ] "+T, "[ ] "+T), want: "created tasks=1:" + T + ",2:" + T + " added=1,2"},
			{plan: todos("[ ] "+D, "[ ] "+T), want: "replanned #1 tasks=3:" + D + ",2:" + T + " dropped=1 added=3"},
		}},
		{name: "the same text beats the same words spelled otherwise", steps: []step{
			{plan: todos("[ ] Run tests", "[x] run tests!"), want: "created tasks=1:Run tests,2x:run tests! added=1,2 completed=2"},
			{plan: todos("[x] run tests!", "[ ] Run tests"), want: "unchanged tasks=2x:run tests!,1:Run tests"},
		}},
		{name: "a task split into two: the closer half keeps the id", steps: []step{
			{plan: todos("[ ] Write tests and docs"), want: "created tasks=1:Write tests and docs added=1"},
			{plan: todos("[ ] Write tests", "[ ] Write docs"), want: "replanned #1 tasks=1:Write tests,2:Write docs added=2 reworded=1"},
		}},
		{name: "two tasks merged: one is reworded, the other dropped", steps: []step{
			{plan: todos("[ ] Write tests", "[ ] Write docs"), want: "created tasks=1:Write tests,2:Write docs added=1,2"},
			{plan: todos("[ ] Write tests and docs"), want: "replanned #1 tasks=1:Write tests and docs dropped=2 reworded=1"},
		}},
		{name: "two tasks merged at the place of the second: it keeps its id", steps: []step{
			{plan: todos("[ ] Write tests", "[ ] Write docs"), want: "created tasks=1:Write tests,2:Write docs added=1,2"},
			{plan: todos("[ ] Set up CI", "[ ] Write tests and docs"), want: "replanned #1 tasks=3:Set up CI,2:Write tests and docs dropped=1 added=3 reworded=2"},
		}},
		{name: "a new task already completed", steps: []step{
			{plan: todos("[ ] " + R), want: "created tasks=1:" + R + " added=1"},
			{plan: todos("[ ] "+R, "[x] "+F), want: "replanned #1 tasks=1:" + R + ",2x:" + F + " added=2 completed=2"},
		}},
		{name: "ids are never reused", steps: []step{
			{plan: todos("[ ] "+R, "[ ] "+F, "[ ] "+T), want: "created tasks=1:" + R + ",2:" + F + ",3:" + T + " added=1,2,3"},
			{plan: todos("[ ] "+R, "[ ] "+F), want: "replanned #1 tasks=1:" + R + ",2:" + F + " dropped=3"},
			{plan: todos("[ ] "+R, "[ ] "+F, "[ ] "+D), want: "replanned #2 tasks=1:" + R + ",2:" + F + ",4:" + D + " added=4"},
		}},
		{name: "over the soft cap from the third replan", steps: []step{
			{plan: todos("[ ] " + R), want: "created tasks=1:" + R + " added=1"},
			{plan: todos("[ ] "+R, "[ ] "+F), want: "replanned #1 tasks=1:" + R + ",2:" + F + " added=2"},
			{plan: todos("[ ] "+R, "[ ] "+F, "[ ] "+T), want: "replanned #2 tasks=1:" + R + ",2:" + F + ",3:" + T + " added=3"},
			{plan: todos("[ ] "+R, "[ ] "+F, "[ ] "+T, "[ ] "+D), want: "replanned #3!cap tasks=1:" + R + ",2:" + F + ",3:" + T + ",4:" + D + " added=4"},
			{plan: todos("[x] "+R, "[ ] "+F, "[ ] "+T, "[ ] "+D), want: "progressed tasks=1x:" + R + ",2:" + F + ",3:" + T + ",4:" + D + " completed=1"},
		}},
		{name: "no cap", cap: -1, steps: []step{
			{plan: todos("[ ] " + R), want: "created tasks=1:" + R + " added=1"},
			{plan: todos("[ ] " + F), want: "replanned #1 tasks=2:" + F + " dropped=1 added=2"},
			{plan: todos("[ ] " + T), want: "replanned #2 tasks=3:" + T + " dropped=2 added=3"},
			{plan: todos("[ ] " + D), want: "replanned #3 tasks=4:" + D + " dropped=3 added=4"},
		}},
		{name: "skilllite: task_plan, progress, update_task_plan renumbers, task_plan with a hint stripped", steps: []step{
			{plan: withIDs("1 [ ] Read config @file_read", "2 [ ] Edit config @file_edit", "3 [ ] Run tests @command"),
				want: "created tasks=1:Read config@file_read,2:Edit config@file_edit,3:Run tests@command added=1,2,3"},
			{plan: withIDs("1 [x] Read config @file_read", "2 [ ] Edit config @file_edit", "3 [ ] Run tests @command"),
				want: "progressed tasks=1x:Read config@file_read,2:Edit config@file_edit,3:Run tests@command completed=1"},
			{plan: revision("tests need a fixture", "Write fixture @file_write", "Run tests @command"),
				want: `replanned #1 reason="tests need a fixture" tasks=1x:Read config@file_read,2:Write fixture@file_write,3:Run tests@command kept=1 dropped=2,3 added=2,3`},
			{plan: withIDs("1 [x] Read config @file_read", "2 [ ] Write fixture", "3 [ ] Run tests @command"),
				want: "unchanged tasks=1x:Read config@file_read,2:Write fixture,3:Run tests@command rehinted=2"},
			{plan: withIDs("1 [x] Read config @file_read", "2 [x] Write fixture", "3 [ ] Run tests @command"),
				want: "progressed tasks=1x:Read config@file_read,2x:Write fixture,3:Run tests@command completed=2"},
		}},
		{name: "skilllite: a revision restating a completed task lists it again, pending", steps: []step{
			{plan: withIDs("1 [x] Read config", "2 [ ] Edit config"), want: "created tasks=1x:Read config,2:Edit config added=1,2 completed=1"},
			{plan: revision("", "Read config", "Edit config"), want: "replanned #1 tasks=1x:Read config,2:Read config,3:Edit config kept=1 dropped=2 added=2,3"},
		}},
		{name: "skilllite: every revision is a replan, even one listing the same tasks", steps: []step{
			{plan: withIDs("1 [ ] Read config", "2 [ ] Edit config"), want: "created tasks=1:Read config,2:Edit config added=1,2"},
			{plan: revision("", "Read config", "Edit config"), want: "replanned #1 tasks=1:Read config,2:Edit config dropped=1,2 added=1,2"},
		}},
		{name: "skilllite: a revision as the first call creates the plan", steps: []step{
			{plan: revision("why", "Read config", "Edit config"), want: "created tasks=1:Read config,2:Edit config added=1,2"},
		}},
		{name: "given ids: a task listed again under another id is dropped and added", steps: []step{
			{plan: withIDs("1 [x] Read config", "2 [ ] Edit config"), want: "created tasks=1x:Read config,2:Edit config added=1,2 completed=1"},
			{plan: withIDs("1 [x] Read config", "3 [ ] Edit config"), want: "replanned #1 tasks=1x:Read config,3:Edit config kept=1 dropped=2 added=3"},
		}},
		{name: "given ids: a reword under the same id", steps: []step{
			{plan: withIDs("1 [ ] " + F), want: "created tasks=1:" + F + " added=1"},
			{plan: withIDs("1 [ ] Fix the integer overflow bug"), want: "replanned #1 tasks=1:Fix the integer overflow bug reworded=1"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			switch tt.cap {
			case -1:
				cfg.SoftCap = 0
			case 0:
			default:
				cfg.SoftCap = tt.cap
			}
			tr := newTracker(t, cfg)
			for i, s := range tt.steps {
				r, err := tr.Apply(s.plan)
				if err != nil {
					t.Fatalf("step %d: Apply: %v", i, err)
				}
				if got := summary(r); got != s.want {
					t.Fatalf("step %d: Apply(%s) =\n  %s\nwant\n  %s", i, taskList(s.plan.Tasks), got, s.want)
				}
				if got, want := taskList(tr.Plan()), taskList(r.Tasks); got != want {
					t.Fatalf("step %d: Plan() = %s, want the result's tasks %s", i, got, want)
				}
			}
		})
	}
}

func TestTrackerCurrent(t *testing.T) {
	tests := []struct {
		name   string
		plan   *Plan // nil: no plan yet
		want   string
		wantOK bool
	}{
		{name: "no plan", want: "", wantOK: false},
		{name: "first pending", plan: ptr(todos("[x] "+R, "[ ] "+F, "[ ] "+T)), want: "2:" + F, wantOK: true},
		{name: "in progress before an earlier pending", plan: ptr(todos("[ ] "+R, "[~] "+F, "[~] "+T)), want: "2~:" + F, wantOK: true},
		{name: "all completed", plan: ptr(todos("[x] "+R, "[x] "+F)), want: "", wantOK: false},
		{name: "hint of a dialect with hints", plan: ptr(withIDs("4 [x] Read config @file_read", "7 [ ] Run tests @command")), want: "7:Run tests@command", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTracker(t, DefaultConfig())
			if tt.plan != nil {
				if _, err := tr.Apply(*tt.plan); err != nil {
					t.Fatalf("Apply: %v", err)
				}
			}
			task, ok := tr.Current()
			got := ""
			if ok {
				got = taskList([]Task{task})
			}
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("Current() = %q, %v, want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestTrackerRefusesPlan(t *testing.T) {
	tests := []struct {
		name string
		plan Plan
	}{
		{name: "repeated given id", plan: withIDs("1 [ ] A", "1 [ ] B")},
		{name: "given id 0", plan: withIDs("0 [ ] A")},
		{name: "bad status", plan: Plan{Tasks: []Task{{Description: "A", Status: "done"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTracker(t, DefaultConfig())
			if _, err := tr.Apply(tt.plan); !errors.Is(err, ErrPlan) {
				t.Fatalf("Apply(%s) error = %v, want ErrPlan", taskList(tt.plan.Tasks), err)
			}
			r, err := tr.Apply(todos("[ ] " + R))
			if err != nil || r.Kind != Created {
				t.Fatalf("Apply after a refused plan = %v, %v, want created (the tracker unchanged)", r.Kind, err)
			}
		})
	}
}

// TestRequests: with Config.Requests, a whole list that adds a task when
// every task of the plan in force is completed begins the next request
// (docs/plan-dialects.md, "Requests"), whether the list restates the
// finished tasks (Codex, deep agents) or Claude Code pruned them first.
func TestRequests(t *testing.T) {
	tests := []struct {
		name  string
		calls []Plan
		want  []string
	}{
		{name: "a fresh list after every task was completed",
			calls: []Plan{todos("[~] Read", "[ ] Fix"), todos("[x] Read", "[x] Fix"), todos("[~] Write the docs")},
			want: []string{"created tasks=1~:Read,2:Fix added=1,2", "progressed tasks=1x:Read,2x:Fix completed=1,2",
				"began tasks=3~:Write the docs added=3"}},
		{name: "the finished tasks restated with the new ones",
			calls: []Plan{todos("[x] Read", "[x] Fix"), todos("[x] Read", "[x] Fix", "[ ] Docs"), todos("[x] Read", "[x] Fix", "[x] Docs"),
				todos("[x] Read", "[x] Fix", "[x] Docs", "[ ] Ship")},
			want: []string{"created tasks=1x:Read,2x:Fix added=1,2 completed=1,2", "began tasks=3:Docs added=3",
				"progressed tasks=3x:Docs completed=3", "began tasks=4:Ship added=4"}},
		{name: "pruned when done, then a new list",
			calls: []Plan{todos("[~] Read"), todos("[x] Read"), todos(), todos("[ ] Fix", "[ ] Test"), todos("[x] Fix", "[ ] Test", "[ ] Docs")},
			want: []string{"created tasks=1~:Read added=1", "progressed tasks=1x:Read completed=1", "progressed tasks= removed=1",
				"began tasks=2:Fix,3:Test added=2,3", "replanned #1 tasks=2x:Fix,3:Test,4:Docs kept=2 added=4 completed=2"}},
		{name: "a task added while one is pending is a replan",
			calls: []Plan{todos("[x] Read", "[ ] Fix"), todos("[x] Read", "[ ] Fix", "[ ] Test")},
			want:  []string{"created tasks=1x:Read,2:Fix added=1,2 completed=1", "replanned #1 tasks=1x:Read,2:Fix,3:Test kept=1 added=3"}},
		{name: "a finished list emptied by dropping is no finish",
			calls: []Plan{todos("[ ] Read"), todos(), todos("[ ] Fix")},
			want:  []string{"created tasks=1:Read added=1", "replanned #1 tasks= dropped=1", "replanned #2 tasks=2:Fix added=2"}},
		{name: "a finished task listed again as pending is the new request's",
			calls: []Plan{todos("[x] Test"), todos("[ ] Test", "[ ] Fix")},
			want:  []string{"created tasks=1x:Test added=1 completed=1", "began tasks=1:Test,2:Fix added=1,2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			tr := r.NewTracker()
			var got []string
			for _, p := range tt.calls {
				res, err := tr.Apply(p)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, summary(res))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
	t.Run("off for SkillLite's configuration", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Requests = false
		r, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr := r.NewTracker()
		for _, p := range []Plan{todos("[x] Read"), todos("[x] Read", "[ ] Fix")} {
			if _, err := tr.Apply(p); err != nil {
				t.Fatal(err)
			}
		}
		if tr.Replans() != 1 {
			t.Fatalf("replans %d, want 1: without Requests a fresh task after all completed is a replan", tr.Replans())
		}
	})
}
