package plandialect

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestParseStep reads the incremental dialects' arguments and results as
// Claude Code 2.1.332 sends them (testdata/realcli/claude-code).
func TestParseStep(t *testing.T) {
	tests := []struct {
		name, dialect, args, result string
		want                        string // the Step, or the error
	}{
		{name: "create", dialect: ClaudeCodeTaskCreate,
			args:   `{"subject":"Write notes.txt","description":"Write a greeting into notes.txt","activeForm":"Writing notes.txt"}`,
			result: `{"task":{"id":"1","subject":"Write notes.txt","description":"Write a greeting into notes.txt"}}`,
			want:   `{Op:1 ID:1 Subject:Write notes.txt Status: Delete:false}`},
		{name: "create with metadata", dialect: ClaudeCodeTaskCreate,
			args: `{"subject":"Run tests","description":"go test","metadata":{"k":1}}`, result: `{"task":{"id":"12"}}`,
			want: `{Op:1 ID:12 Subject:Run tests Status: Delete:false}`},
		{name: "create without result", dialect: ClaudeCodeTaskCreate,
			args: `{"subject":"Run tests","description":"go test"}`,
			want: `claude-code-task-create result plan arguments: not valid JSON`},
		{name: "create result without task", dialect: ClaudeCodeTaskCreate,
			args: `{"subject":"Run tests","description":"go test"}`, result: `{}`,
			want: `claude-code-task-create result plan arguments: /task: missing: the created task's id is not known`},
		{name: "create without description", dialect: ClaudeCodeTaskCreate,
			args: `{"subject":"Run tests"}`, result: `{"task":{"id":"1"}}`,
			want: `claude-code-task-create plan arguments: /description: missing`},
		{name: "create with a non-numeric id", dialect: ClaudeCodeTaskCreate,
			args: `{"subject":"Run tests","description":"x"}`, result: `{"task":{"id":"a1"}}`,
			want: `claude-code-task-create result plan arguments: /task/id: task id "a1" is not a positive integer`},
		{name: "status", dialect: ClaudeCodeTaskUpdate, args: `{"taskId":"1","status":"in_progress"}`,
			want: `{Op:2 ID:1 Subject: Status:in_progress Delete:false}`},
		{name: "subject", dialect: ClaudeCodeTaskUpdate, args: `{"taskId":"3","subject":"Count the files, config included"}`,
			want: `{Op:2 ID:3 Subject:Count the files, config included Status: Delete:false}`},
		{name: "deleted", dialect: ClaudeCodeTaskUpdate, args: `{"taskId":"2","status":"deleted"}`,
			want: `{Op:2 ID:2 Subject: Status: Delete:true}`},
		{name: "dependencies and owner ignored", dialect: ClaudeCodeTaskUpdate,
			args: `{"taskId":"2","addBlockedBy":["1"],"addBlocks":["3"],"owner":"me","activeForm":"x","description":"y","metadata":{"a":null}}`,
			want: `{Op:2 ID:2 Subject: Status: Delete:false}`},
		{name: "unknown status", dialect: ClaudeCodeTaskUpdate, args: `{"taskId":"2","status":"done"}`,
			want: `claude-code-task-update plan arguments: /status: unknown status "done"`},
		{name: "no taskId", dialect: ClaudeCodeTaskUpdate, args: `{"status":"completed"}`,
			want: `claude-code-task-update plan arguments: /taskId: missing`},
		{name: "control reads nothing", dialect: Control, args: `{"query":"select:TaskCreate"}`,
			want: `{Op:0 ID:0 Subject: Status: Delete:false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res []byte
			if tt.result != "" {
				res = []byte(tt.result)
			}
			s, err := builtinSteps[tt.dialect].ParseStep([]byte(tt.args), res)
			got := fmt.Sprintf("%+v", s)
			if err != nil {
				if !errors.Is(err, ErrArguments) {
					t.Fatalf("ParseStep(%s, %s) error %v does not match ErrArguments", tt.args, tt.result, err)
				}
				got = err.Error()
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Fatalf("ParseStep(%s, %s) = %s, want %s", tt.args, tt.result, got, tt.want)
			}
		})
	}
}

// TestStepTracker runs the rules of docs/plan-dialects.md, "Incremental
// task tools": a script of steps — "+N subject" creates task N, "N>" starts
// it, "Nx" completes it, "N-" deletes it, "N=subject" renames it — and "|"
// for a real tool call (a Flush); each Flush's result is rendered.
func TestStepTracker(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string // per Flush that had steps
	}{
		{name: "tasks before the first real call are one plan",
			script: "+1 Read +2 Fix +3 Test 1> | 1x |",
			want:   []string{"created [1~ 2 3]", "progressed [1x 2 3] completed=[1]"}},
		{name: "status changes are progress",
			script: "+1 Read +2 Fix 1> | 1x 2> | 2x |",
			want:   []string{"created [1~ 2]", "progressed [1x 2~] completed=[1]", "progressed [1x 2x] completed=[2]"}},
		{name: "a burst of revisions is one replan",
			script: "+1 Read +2 Count the files 1> | +3 Create config 2=Count the files, config included |",
			want:   []string{"created [1~ 2]", "replanned #1 [1~ 2 3] added=[3] reworded=[2]"}},
		{name: "completions ride along a replan",
			script: "+1 Read +2 Fix | 1x +3 Docs |",
			want:   []string{"created [1 2]", "replanned #1 [1x 2 3] added=[3] kept=[1] completed=[1]"}},
		{name: "deleting a pending task is a revision",
			script: "+1 Read +2 Fix | 2- |",
			want:   []string{"created [1 2]", "replanned #1 [1] dropped=[2]"}},
		{name: "deleting a completed task is not",
			script: "+1 Read +2 Fix 1x | 1- |",
			want:   []string{"created [1x 2] completed=[1]", "progressed [2] removed=[1]"}},
		{name: "a change undone in its burst is nothing",
			script: "+1 Count the files | 1=Count every file on disk 1=Count the files |",
			want:   []string{"created [1]", "unchanged [1]"}},
		{name: "a spelling change is nothing",
			script: "+1 Count the files | 1=count the files. |",
			want:   []string{"created [1]", "unchanged [1]"}},
		{name: "renaming a completed task is nothing",
			script: "+1 Read 1x | 1=Read it all |",
			want:   []string{"created [1x] completed=[1]", "unchanged [1x]"}},
		{name: "two bursts are two replans",
			script: "+1 A | +2 B | +3 C |",
			want:   []string{"created [1]", "replanned #1 [1 2] added=[2]", "replanned #2 [1 2 3] added=[3]"}},
		{name: "a reopened task",
			script: "+1 A 1x | 1> |",
			want:   []string{"created [1x] completed=[1]", "progressed [1~] reopened=[1]"}},
		{name: "a task created when every task was completed begins the next request",
			script: "+1 Read +2 Fix | 1x 2x | +3 Docs |",
			want:   []string{"created [1 2]", "progressed [1x 2x] completed=[1 2]", "began [3] added=[3]"}},
		{name: "the next request's plan counts its own replans and completions only",
			script: "+1 Read 1x | +2 Docs +3 Ship | 2x 1=Read it all | +4 Tag | 3x 1- |",
			want:   []string{"created [1x] completed=[1]", "began [2 3] added=[2 3]", "progressed [2x 3] completed=[2]", "replanned #1 [2x 3 4] added=[4] kept=[2]", "progressed [2x 3x 4] completed=[3]"}},
		{name: "a plan restated after every task was completed is no request",
			script: "+1 A 1x | 1=a |",
			want:   []string{"created [1x] completed=[1]", "unchanged [1x]"}},
		{name: "no steps, no result",
			script: "| | +1 A | |",
			want:   []string{"created [1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			st := NewStepTracker(r.NewTracker())
			var got []string
			for _, burst := range strings.Split(tt.script, "|") {
				for _, s := range parseScript(t, burst) {
					if err := st.Step(s); err != nil {
						t.Fatalf("Step(%+v): %v", s, err)
					}
				}
				if res, ok := st.Flush(); ok {
					got = append(got, renderResult(res))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("%s:\ngot\n  %s\nwant\n  %s", tt.script, strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestStepTrackerRefuses(t *testing.T) {
	r, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	st := NewStepTracker(r.NewTracker())
	if err := st.Step(Step{Op: StepCreate, ID: 1, Subject: "A"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Step{{Op: StepCreate, ID: 1, Subject: "B"}, {Op: StepUpdate, ID: 2, Status: Completed}} {
		if err := st.Step(s); !errors.Is(err, ErrPlan) {
			t.Fatalf("Step(%+v) = %v, want ErrPlan", s, err)
		}
	}
	if res, _ := st.Flush(); len(res.Tasks) != 1 || res.Tasks[0].Description != "A" {
		t.Fatalf("after refused steps the plan is %+v, want [1 A]", res.Tasks)
	}
}

// parseScript reads one burst of TestStepTracker's script.
func parseScript(tb testing.TB, burst string) []Step {
	tb.Helper()
	var out []Step
	f := strings.Fields(burst)
	for i := 0; i < len(f); i++ {
		w := f[i]
		var id int64
		n := strings.IndexFunc(w, func(r rune) bool { return r < '0' || r > '9' })
		switch {
		case w[0] == '+':
			fmt.Sscan(w[1:], &id)
			subj := []string{}
			for i+1 < len(f) && !startsStep(f[i+1]) {
				i++
				subj = append(subj, f[i])
			}
			out = append(out, Step{Op: StepCreate, ID: id, Subject: strings.Join(subj, " ")})
		case n > 0 && w[n] == '=':
			fmt.Sscan(w[:n], &id)
			subj := []string{w[n+1:]}
			for i+1 < len(f) && !startsStep(f[i+1]) {
				i++
				subj = append(subj, f[i])
			}
			out = append(out, Step{Op: StepUpdate, ID: id, Subject: strings.Join(subj, " ")})
		case n > 0:
			fmt.Sscan(w[:n], &id)
			s := Step{Op: StepUpdate, ID: id}
			switch w[n:] {
			case ">":
				s.Status = InProgress
			case "x":
				s.Status = Completed
			case "-":
				s.Delete = true
			default:
				tb.Fatalf("bad step %q", w)
			}
			out = append(out, s)
		default:
			tb.Fatalf("bad step %q", w)
		}
	}
	return out
}

func startsStep(w string) bool {
	if w[0] == '+' {
		return true
	}
	n := strings.IndexFunc(w, func(r rune) bool { return r < '0' || r > '9' })
	return n > 0 && strings.ContainsRune(">x-=", rune(w[n]))
}

func renderResult(r Result) string {
	var b strings.Builder
	b.WriteString(r.Kind.String())
	if r.Replan > 0 {
		fmt.Fprintf(&b, " #%d", r.Replan)
	}
	var ts []string
	for _, t := range r.Tasks {
		mark := map[Status]string{Pending: "", InProgress: "~", Completed: "x"}[t.Status]
		ts = append(ts, fmt.Sprintf("%d%s", t.ID, mark))
	}
	fmt.Fprintf(&b, " [%s]", strings.Join(ts, " "))
	ids := func(name string, v []int64) {
		if len(v) > 0 && !(r.Kind == Created && name == "added") { // Created: every task
			fmt.Fprintf(&b, " %s=%v", name, v)
		}
	}
	tasks := func(name string, v []Task) {
		var n []int64
		for _, t := range v {
			n = append(n, t.ID)
		}
		ids(name, n)
	}
	ids("added", r.Added)
	tasks("dropped", r.Dropped)
	tasks("removed", r.Removed)
	ids("reworded", r.Reworded)
	ids("kept", r.Kept)
	ids("completed", r.Completed)
	ids("reopened", r.Reopened)
	return b.String()
}
