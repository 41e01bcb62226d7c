package foreign_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

func TestEventID(t *testing.T) {
	long := strings.Repeat("a", 129)
	tests := []struct {
		name, in string
		same     bool
	}{
		{"fits", "8c35adc1/toolu_01/plan", true},
		{"128 characters", long[:128], true},
		{"too long", long, false},
		{"space", "a b", false},
		{"non-ASCII", "tâche", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := foreign.EventID(tt.in)
			if (got == tt.in) != tt.same {
				t.Errorf("EventID(%q) = %q, want it kept: %v", tt.in, got, tt.same)
			}
			if got != foreign.EventID(tt.in) || len(got) > 128 || strings.ContainsAny(got, " \t") {
				t.Errorf("EventID(%q) = %q: not a stable valid id", tt.in, got)
			}
		})
	}
}

type sink struct{ evs []*events.Event }

func (s *sink) Send(_ context.Context, e *events.Event) error { s.evs = append(s.evs, e); return nil }

// TestSession: ids carry the caller's key and suffix, seqs take the
// caller's when they increase, and the counts of unreadable plan calls.
func TestSession(t *testing.T) {
	reg, err := plandialect.New(plandialect.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	sess := foreign.New(s, "a/b", strings.Repeat("x", 200), reg)
	if len(sess.ID()) > 128 {
		t.Fatalf("session id %q too long", sess.ID())
	}
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	steps := []struct {
		seq  int64
		call foreign.Call
	}{
		{100, foreign.Call{Tool: "write_todos", OK: true, Args: []byte(`{"todos":[{"content":"A","status":"completed"},{"content":"B","status":"pending"}]}`)}},
		{50, foreign.Call{Tool: "grep", OK: false, Error: "no match"}},
		{0, foreign.Call{Tool: "write_todos", OK: true}},
		{0, foreign.Call{Tool: "write_todos", OK: true, Args: []byte(`{"todos":3}`)}},
		{0, foreign.Call{Tool: "write_todos", OK: false, Args: []byte(`{"todos":[]}`)}},
	}
	for i, st := range steps {
		if err := sess.Tool(ctx, foreign.At{ID: "k" + string(rune('0'+i)), Time: at, Seq: st.seq}, st.call); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.End(ctx, foreign.At{ID: "end", Time: at}, ""); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range s.evs {
		got = append(got, e.ID+"#"+strconv.FormatInt(e.Seq, 10)+" "+string(e.Type))
	}
	want := []string{
		"k0#100 agent.tool.called", "k0/plan#101 agent.plan.created", "k0/done/1#102 agent.task.completed",
		"k1#103 agent.tool.called", "k2#104 agent.tool.called", "k3#105 agent.tool.called", "k4#106 agent.tool.called",
		"end#107 agent.session.ended",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	q := sess.Quality()
	if q != (foreign.Quality{PlanCallsWithoutArguments: 1, PlanCallsUnreadable: 1, PlanCallsFailed: 1}) || len(q.Notes()) != 3 {
		t.Errorf("quality %+v, notes %q", q, q.Notes())
	}
	if o := sess.Outcome(); o != events.OutcomeUnknown {
		t.Errorf("outcome %s, want unknown (one of two tasks completed: no evidence of how it went)", o)
	}
}

// TestSessionPlanFiles: file tool calls on a plan file are plan operations
// (control calls); a patch of code and plan is a real call too; failed,
// argument-less and unreadable file calls and edits of unknown content are
// counted, never guessed; after an unread file call the content is unknown.
func TestSessionPlanFiles(t *testing.T) {
	reg, err := plandialect.New(plandialect.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	files, err := foreign.NewFiles(plandialect.DefaultFilesConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	sess := foreign.New(s, "a/b", "s1", reg).WithFiles(files, "/w")
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	calls := []foreign.Call{
		{Tool: "Edit", OK: true, Args: []byte(`{"file_path":"task_plan.md","old_string":"a","new_string":"b"}`)},                                                                                                 // k0 unknown prior
		{Tool: "Write", OK: true, Args: []byte(`{"file_path":"/w/task_plan.md","content":"- [ ] A\n- [ ] B\n"}`)},                                                                                                // k1 created
		{Tool: "Edit", OK: false, Args: []byte(`{"file_path":"task_plan.md","old_string":"- [ ] A","new_string":"- [x] A"}`)},                                                                                    // k2 failed
		{Tool: "Edit", OK: true, Args: []byte(`{"file_path":"task_plan.md","old_string":"- [ ] A","new_string":"- [x] A"}`)},                                                                                     // k3 progressed
		{Tool: "Bash", OK: true, Args: []byte(`{"command":"ls"}`)},                                                                                                                                               // k4 work on task 2
		{Tool: "apply_patch", OK: true, Args: []byte("{\"input\":\"*** Begin Patch\\n*** Update File: main.go\\n@@\\n-a\\n+b\\n*** Update File: task_plan.md\\n@@\\n - [x] A\\n+- [ ] C\\n*** End Patch\\n\"}")}, // k5 replanned + real call
		{Tool: "Edit", OK: true}, // k6 no arguments: contents forgotten
		{Tool: "Edit", OK: true, Args: []byte(`{"file_path":"task_plan.md","old_string":"- [ ] B","new_string":"- [x] B"}`)}, // k7 unknown prior
		{Tool: "Write", OK: true, Args: []byte(`{"file_path":3}`)},                                                           // k8 unreadable
	}
	for i, c := range calls {
		if err := sess.Tool(ctx, foreign.At{ID: "k" + strconv.Itoa(i), Time: at}, c); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	var got []string
	for _, e := range s.evs {
		line := e.ID + " " + string(e.Type)
		if e.Type == events.ToolCalled {
			p, err := e.Payload()
			if err != nil {
				t.Fatal(err)
			}
			d := p.(*events.ToolCalledData)
			line += " control=" + strconv.FormatBool(d.Control)
			if d.TaskID != nil {
				line += " task=" + strconv.FormatInt(*d.TaskID, 10)
			}
		}
		got = append(got, line)
	}
	want := []string{
		"k0 agent.tool.called control=true",
		"k1/plan agent.plan.created", "k1 agent.tool.called control=true",
		"k2 agent.tool.called control=true",
		"k3/done/1 agent.task.completed", "k3 agent.tool.called control=true",
		"k4 agent.tool.called control=false task=2",
		"k5/plan agent.plan.updated", // C added before B, the first pending task now
		"k5 agent.tool.called control=false task=3",
		"k6 agent.tool.called control=false task=3",
		"k7 agent.tool.called control=true",
		"k8 agent.tool.called control=false task=3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	q := sess.Quality()
	if q != (foreign.Quality{PlanFileUnknownPrior: 2, PlanFileCallsFailed: 1, FileCallsUnread: 1, FileCallsUnreadable: 1}) || len(q.Notes()) != 4 {
		t.Errorf("quality %+v, notes %q", q, q.Notes())
	}
}

// TestSessionTwoPlanSources: a plan file is the session's plan until a
// plan-tool call lists a task; that call is compared with the plan in force
// (here one replan: a task added), and from then on plan-file calls are
// ordinary calls, counted in PlanFileSuperseded, so that the mirror of a
// change made with the tool is never a second replan.
func TestSessionTwoPlanSources(t *testing.T) {
	reg, err := plandialect.New(plandialect.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	files, err := foreign.NewFiles(plandialect.DefaultFilesConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	sess := foreign.New(s, "a/b", "s2", reg).WithFiles(files, "/w")
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	calls := []foreign.Call{
		{Tool: "Write", OK: true, Args: []byte(`{"file_path":"task_plan.md","content":"- [ ] A\n- [ ] B\n"}`)},                                                                    // k0 created by the file
		{Tool: "Edit", OK: true, Args: []byte(`{"file_path":"task_plan.md","old_string":"- [ ] A","new_string":"- [x] A"}`)},                                                      // k1 progressed
		{Tool: "TodoWrite", OK: true, Args: []byte(`{"todos":[{"content":"A","status":"completed"},{"content":"B","status":"in_progress"},{"content":"C","status":"pending"}]}`)}, // k2 the tool takes over: C added
		{Tool: "Edit", OK: true, Args: []byte(`{"file_path":"task_plan.md","old_string":"- [ ] B\n","new_string":"- [ ] B\n- [ ] C\n- [ ] D\n"}`)},                                // k3 an ordinary call
		{Tool: "Write", OK: true, Args: []byte(`{"file_path":"/w/task_plan.md","content":"- [x] A\n- [ ] E\n"}`)},                                                                 // k4 an ordinary call
		{Tool: "Bash", OK: true, Args: []byte(`{"command":"ls"}`)},                                                                                                                // k5 work on B
		{Tool: "TodoWrite", OK: true, Args: []byte(`{"todos":[{"content":"A","status":"completed"},{"content":"B","status":"completed"},{"content":"C","status":"pending"}]}`)},   // k6 progressed
	}
	for i, c := range calls {
		if err := sess.Tool(ctx, foreign.At{ID: "k" + strconv.Itoa(i), Time: at}, c); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if err := sess.End(ctx, foreign.At{ID: "end", Time: at}, ""); err != nil {
		t.Fatal(err)
	}
	var got []string
	var replans int64
	for _, e := range s.evs {
		line := e.ID + " " + string(e.Type)
		p, err := e.Payload()
		if err != nil {
			t.Fatal(err)
		}
		switch d := p.(type) {
		case *events.ToolCalledData:
			line += " control=" + strconv.FormatBool(d.Control)
			if d.TaskID != nil {
				line += " task=" + strconv.FormatInt(*d.TaskID, 10)
			}
		case *events.SessionEndedData:
			replans = d.Replans
		}
		got = append(got, line)
	}
	want := []string{
		"k0/plan agent.plan.created", "k0 agent.tool.called control=true",
		"k1/done/1 agent.task.completed", "k1 agent.tool.called control=true",
		"k2 agent.tool.called control=true", "k2/plan agent.plan.updated",
		"k3 agent.tool.called control=false task=2",
		"k4 agent.tool.called control=false task=2",
		"k5 agent.tool.called control=false task=2",
		"k6 agent.tool.called control=true", "k6/done/2 agent.task.completed",
		"end agent.session.ended",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if replans != 1 {
		t.Errorf("replans = %d, want 1 (the tool's takeover; the file's mirror of it is not a second)", replans)
	}
	q := sess.Quality()
	if q != (foreign.Quality{PlanFileSuperseded: 2}) || len(q.Notes()) != 1 {
		t.Errorf("quality %+v, notes %q", q, q.Notes())
	}
}

// TestSessionEmptyToolPlan: a plan-tool call without a task does not make
// the plan tool the session's plan source: a plan file written after it is
// read, its tasks a replan of the (empty) plan in force.
func TestSessionEmptyToolPlan(t *testing.T) {
	reg, err := plandialect.New(plandialect.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	files, err := foreign.NewFiles(plandialect.DefaultFilesConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	sess := foreign.New(s, "a/b", "s3", reg).WithFiles(files, "/w")
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for i, c := range []foreign.Call{
		{Tool: "TodoWrite", OK: true, Args: []byte(`{"todos":[]}`)},
		{Tool: "Write", OK: true, Args: []byte(`{"file_path":"todo.md","content":"- [ ] A\n"}`)},
	} {
		if err := sess.Tool(ctx, foreign.At{ID: "k" + strconv.Itoa(i), Time: at}, c); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	var got []string
	for _, e := range s.evs {
		got = append(got, e.ID+" "+string(e.Type))
	}
	want := []string{"k0 agent.tool.called", "k0/plan agent.plan.created", "k1/plan agent.plan.updated", "k1 agent.tool.called"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if q := sess.Quality(); q.PlanFileSuperseded != 0 {
		t.Errorf("quality %+v: nothing superseded", q)
	}
}

// TestSessionRequests: a burst of whole-list plan calls is classified as
// its last (a rename undone by the next call is nothing), and a fresh list
// after every task was completed ends the request with outcome success and
// begins the next one, <id>/2, whose totals start from zero.
func TestSessionRequests(t *testing.T) {
	reg, err := plandialect.New(plandialect.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	sess := foreign.New(s, "a/b", "s4", reg)
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	todo := func(items ...string) foreign.Call {
		var b strings.Builder
		for i, it := range items {
			if i > 0 {
				b.WriteString(",")
			}
			st, text, _ := strings.Cut(it, " ")
			fmt.Fprintf(&b, `{"content":%q,"status":%q}`, text, map[string]string{"x": "completed", "~": "in_progress", ".": "pending"}[st])
		}
		return foreign.Call{Tool: "TodoWrite", OK: true, Args: []byte(`{"todos":[` + b.String() + `]}`)}
	}
	bash := foreign.Call{Tool: "Bash", OK: true, Args: []byte(`{"command":"ls"}`)}
	if err := sess.Start(ctx, foreign.At{ID: "start", Time: at}, events.SessionStartedData{Goal: "g", Agent: "a", AgentVersion: "1", Model: "m", Tools: []string{}}); err != nil {
		t.Fatal(err)
	}
	calls := []foreign.Call{
		todo("~ Read the code", ". Fix it"), // k0 the plan
		bash,                                // k1
		todo("x Read the code", "~ Fix the bug in the parser"), // k2 a rename…
		todo("x Read the code", "~ Fix it"),                    // k3 …undone: progress only
		bash,                                                   // k4
		todo("x Read the code", "x Fix it"),                    // k5 every task completed
		todo("~ Write the docs"),                               // k6 the next request's plan
		bash,                                                   // k7
		todo("x Write the docs", ". Ship"),                     // k8 a replan of request 2
		bash,                                                   // k9
	}
	for i, c := range calls {
		sess.Iterate()
		if err := sess.Tool(ctx, foreign.At{ID: "k" + strconv.Itoa(i), Time: at.Add(time.Duration(i) * time.Second)}, c); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if err := sess.End(ctx, foreign.At{ID: "end", Time: at.Add(20 * time.Second)}, ""); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range s.evs {
		line := e.Subject + " " + e.ID + " " + string(e.Type)
		p, err := e.Payload()
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := p.(*events.SessionEndedData); ok {
			line += fmt.Sprintf(" %s replans=%d calls=%d iterations=%d ms=%d", d.Outcome, d.Replans, d.ToolCalls, d.Iterations, d.DurationMS)
		}
		got = append(got, line)
	}
	want := []string{
		"s4 start agent.session.started",
		"s4 k0 agent.tool.called", "s4 k0/plan agent.plan.created",
		"s4 k1 agent.tool.called",
		"s4 k2 agent.tool.called", "s4 k3 agent.tool.called", "s4 k3/done/1 agent.task.completed",
		"s4 k4 agent.tool.called",
		"s4 k5 agent.tool.called", "s4 k5/done/2 agent.task.completed", "s4 k6 agent.tool.called",
		// k7's iteration was counted before the call that ended the burst
		"s4 k6/end agent.session.ended success replans=0 calls=7 iterations=8 ms=6000",
		"s4/2 k6/start agent.session.started", "s4/2 k6/plan agent.plan.created",
		"s4/2 k7 agent.tool.called",
		"s4/2 k8 agent.tool.called", "s4/2 k8/plan agent.plan.updated", "s4/2 k8/done/3 agent.task.completed",
		"s4/2 k9 agent.tool.called",
		"s4/2 end agent.session.ended unknown replans=1 calls=3 iterations=3 ms=14000",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if sess.Requests() != 2 || sess.ID() != "s4/2" {
		t.Errorf("requests %d, id %q; want 2, s4/2", sess.Requests(), sess.ID())
	}
}
