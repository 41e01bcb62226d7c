package web_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
)

// Agent-written text that would run script if a page let it through.
const (
	xssGoal  = `Fix the importer <script>window.__xss = "goal"</script> see <a href="javascript:window.__xss='link'">here</a>`
	xssTask  = `Run the tests <script>window.__xss = "task"</script><img src=x onerror="window.__xss='img'">`
	xssError = `<img src=x onerror="window.__xss='error'"> javascript:window.__xss='err'`
	xssHint  = `javascript:window.__xss='hint'`
)

// twoReplans publishes one session with two valid replans (and a rejected
// one between them), whose texts hold script, and returns its id. Its
// plan versions against the version before:
//
//	v1  #1 Read the CSV importer, #2 Fix the parser of the CSV importer,
//	    #3 xssTask, #4 Deploy it (hint stripped: unavailable)
//	v2  (tool_failures) #1 kept (done), #2 reworded "Fix the quoting in the
//	    parser of the CSV importer", #3 kept (listed again), #4 added
//	    "Write a regression test for quoting"; dropped: Deploy it
//	v3  (depth_limit, past the soft cap) #1 kept, #2 kept, #3 added "Run
//	    only the importer tests", #4 kept (listed again); dropped: xssTask
func twoReplans(t *testing.T, r *running) string {
	t.Helper()
	ctx := t.Context()
	clock := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	s := agent.NewSession(r.pub, "coder/host-x/worker-1", "").WithClock(func() time.Time {
		clock = clock.Add(700 * time.Millisecond)
		return clock
	})
	hint := func(h string) *string { return &h }
	id := func(n int64) *int64 { return &n }
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	task := func(n int64, d, h string, done bool) agent.Task {
		var hp *string
		if h != "" {
			hp = hint(h)
		}
		return agent.Task{ID: n, Description: d, ToolHint: hp, Completed: done, TaskType: "coding"}
	}
	step(s.Started(ctx, agent.SessionStarted{Goal: xssGoal, Agent: "coder", AgentVersion: "1.0.0", Model: "model-x",
		Tools: []string{"read_file", "write_file", "run_command"}, TaskType: "coding", Ruleset: "rs-0123456789ab",
		Rules: []string{"avoid:coding:deploy"}}))
	v1 := []agent.Task{task(1, "Read the CSV importer", "read_file", false), task(2, "Fix the parser of the CSV importer", "write_file", false),
		task(3, xssTask, "run_command", false), task(4, "Deploy it", "", false)}
	step(s.PlanCreated(ctx, agent.PlanCreated{Tasks: v1, Origin: agent.OriginModel}))
	step(s.HintStripped(ctx, agent.HintStripped{TaskID: 4, ToolHint: "deploy_magic", Phase: agent.PhasePlan, Reason: agent.StripUnavailable}))
	step(s.ToolCalled(ctx, agent.ToolCalled{TaskID: id(1), Tool: "read_file", Hint: hint("read_file"), OK: true, DurationMS: 40}))
	step(s.TaskCompleted(ctx, agent.TaskCompleted{TaskID: 1, Completion: "success", ToolCalls: 1}))
	for range 2 {
		step(s.ToolCalled(ctx, agent.ToolCalled{TaskID: id(2), Tool: "write_file", Hint: hint(xssHint), OK: false, ErrorKind: "tool_error", Error: xssError, DurationMS: 25}))
	}
	step(s.PlanUpdated(ctx, agent.PlanUpdated{Replan: 1, Trigger: "tool_failures", Reason: "the parser edits fail",
		Tasks: []agent.Task{task(1, "Read the CSV importer", "read_file", true), task(2, "Fix the quoting in the parser of the CSV importer", "write_file", false),
			task(3, xssTask, "run_command", false), task(4, "Write a regression test for quoting", "write_file", false)},
		Kept: []int64{1}, Dropped: v1[1:], Valid: true}))
	step(s.ToolCalled(ctx, agent.ToolCalled{TaskID: id(2), Tool: "write_file", Hint: hint("write_file"), OK: true, DurationMS: 30}))
	step(s.TaskCompleted(ctx, agent.TaskCompleted{TaskID: 2, Completion: "success", ToolCalls: 1}))
	for range 3 {
		step(s.ToolCalled(ctx, agent.ToolCalled{TaskID: id(3), Tool: "run_command", Hint: hint("run_command"), OK: false, ErrorKind: "timeout", Error: "tests hung", DurationMS: 900}))
	}
	step(s.DepthLimitReached(ctx, agent.DepthLimit{TaskID: 3, ToolCalls: 3, Limit: 3}))
	step(s.PlanUpdated(ctx, agent.PlanUpdated{Replan: 2, Trigger: "model", Reason: "empty", Tasks: nil, Kept: nil, Dropped: nil,
		Valid: false, Error: "the new plan has no task"}))
	pending := []agent.Task{task(3, xssTask, "run_command", false), task(4, "Write a regression test for quoting", "write_file", false)}
	step(s.PlanUpdated(ctx, agent.PlanUpdated{Replan: 3, Trigger: "depth_limit", Reason: "the tests hang",
		Tasks: []agent.Task{task(1, "Read the CSV importer", "read_file", true), task(2, "Fix the quoting in the parser of the CSV importer", "write_file", true),
			task(3, "Run only the importer tests", "run_command", false), task(4, "Write a regression test for quoting", "write_file", false)},
		Kept: []int64{1, 2}, Dropped: pending, OverCap: true, Valid: true}))
	step(s.ToolCalled(ctx, agent.ToolCalled{TaskID: id(3), Tool: "run_command", Hint: hint("run_command"), OK: true, DurationMS: 1200}))
	step(s.TaskCompleted(ctx, agent.TaskCompleted{TaskID: 3, Completion: "success", ToolCalls: 1}))
	step(s.ToolCalled(ctx, agent.ToolCalled{TaskID: id(4), Tool: "write_file", Hint: hint("write_file"), OK: true, DurationMS: 50}))
	step(s.TaskCompleted(ctx, agent.TaskCompleted{TaskID: 4, Completion: "success", ToolCalls: 1}))
	step(s.Ended(ctx, agent.SessionEnded{Outcome: "success", Replans: 3, ToolCalls: 9, FailedToolCalls: 5, Iterations: 12, DurationMS: 20000}))
	r.wait(t)
	return s.ID()
}

type planMarks struct {
	Title   string     `json:"title"`
	Tasks   [][]string `json:"tasks"` // [mark, description]
	Dropped []string   `json:"dropped"`
	Strips  []string   `json:"strips"`
}

const plansJS = `[...document.querySelectorAll("#plans article.plan")].map(p => ({
  title: p.querySelector("h3").textContent.trim(),
  tasks: [...p.querySelectorAll("ol > li.task")].map(li => [li.dataset.mark, li.querySelector(".desc").textContent]),
  dropped: [...p.querySelectorAll("ul > li.task.dropped .desc")].map(d => d.textContent),
  strips: [...p.querySelectorAll("[data-stripped]")].map(s => s.dataset.stripped),
}))`

// TestSessionPlansSideBySide: a session with two valid replans shows three
// plan versions side by side with the right marks (kept, added, reworded,
// dropped, stripped hint), the rejected replan and the soft cap among the
// replans, its calls under their tasks, and its raw events with their SQL.
// Its texts hold script and javascript: links (TestSessionEscapes checks
// they run nothing).
func TestSessionPlansSideBySide(t *testing.T) {
	r := startPipeline(t)
	r.publish(t, 3)
	sid := twoReplans(t, r)
	b := newBrowser(t)
	b.open(t, r.base+"/sessions?q="+url.QueryEscape(sid[:13]))
	href := eval[string](t, b, `(document.querySelector("#session-list a[href^='/sessions/']") || {}).href || ""`)
	if !strings.HasSuffix(href, "/sessions/"+sid) {
		t.Fatalf("the list searched for %s links %q, want the session's page", sid[:13], href)
	}
	shot(t, b, "sessions.png")
	b.open(t, href)

	plans := eval[[]planMarks](t, b, plansJS)
	want := []planMarks{
		{Title: "v1 · created", Tasks: [][]string{{"", "Read the CSV importer"}, {"", "Fix the parser of the CSV importer"}, {"", xssTask}, {"", "Deploy it"}},
			Strips: []string{"deploy_magic"}},
		{Title: "v2 · replan 1", Tasks: [][]string{{"kept", "Read the CSV importer"}, {"reworded", "Fix the quoting in the parser of the CSV importer"},
			{"kept", xssTask}, {"added", "Write a regression test for quoting"}}, Dropped: []string{"Deploy it"}},
		{Title: "v3 · replan 3", Tasks: [][]string{{"kept", "Read the CSV importer"}, {"kept", "Fix the quoting in the parser of the CSV importer"},
			{"added", "Run only the importer tests"}, {"kept", "Write a regression test for quoting"}}, Dropped: []string{xssTask}},
	}
	if len(plans) != len(want) {
		t.Fatalf("%d plan versions, want %d: %+v", len(plans), len(want), plans)
	}
	for i, w := range want {
		g := plans[i]
		if g.Title != w.Title || !slices.EqualFunc(g.Tasks, w.Tasks, slices.Equal) || !slices.Equal(g.Dropped, w.Dropped) || !slices.Equal(g.Strips, w.Strips) {
			t.Errorf("plan version %d =\n%+v\nwant\n%+v", i+1, g, w)
		}
	}
	if was := eval[string](t, b, `document.querySelector("#plan-v2 li[data-mark=reworded] .was").textContent`); was != "was: Fix the parser of the CSV importer" {
		t.Errorf("the reworded task says %q, want what it was", was)
	}
	// Side by side: the three versions on one row.
	if tops := eval[[]float64](t, b, `[...document.querySelectorAll("#plans article.plan")].map(p => p.getBoundingClientRect().top)`); len(tops) != 3 || tops[0] != tops[1] || tops[1] != tops[2] {
		t.Errorf("plan versions at tops %v, want side by side", tops)
	}
	text := eval[string](t, b, `document.querySelector("#replans").innerText`)
	for _, w := range []string{"tool_failures", "rejected", "the new plan has no task", "depth_limit", "reached", "task #3"} {
		if !strings.Contains(text, w) {
			t.Errorf("the replans section lacks %q:\n%s", w, text)
		}
	}
	calls := eval[string](t, b, `document.querySelector("#timeline").innerText`)
	for _, w := range []string{"v1 · task #2: Fix the parser of the CSV importer", "v2 · task #3: " + xssTask, "depth limit reached after 3 calls (limit 3)", "timeout", "900 ms"} {
		if !strings.Contains(calls, w) {
			t.Errorf("the tool calls section lacks %q:\n%s", w, calls)
		}
	}
	if n := eval[int](t, b, `document.querySelectorAll("svg.timeline rect.call").length`); n != 9 {
		t.Errorf("the timeline draws %d calls, want 9", n)
	}
	if arm := eval[string](t, b, `document.querySelector("#rules").innerText`); !strings.Contains(arm, "rs-0123456789ab") || !strings.Contains(arm, "avoid:coding:deploy") {
		t.Errorf("the rules section lacks the rule set and its rule:\n%s", arm)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#events tbody tr").length`); n != 21 {
		t.Errorf("%d raw events, want 21", n)
	}
	if sql := eval[string](t, b, `document.querySelector("#events pre.sql").textContent`); !strings.Contains(sql, "FROM events") {
		t.Errorf("the raw events' SQL is %q", sql)
	}
	shot(t, b, "session.png")
	b.open(t, r.base+"/analyze/hints?window=7d&until="+synthUntil+"&sort=calls&desc=1")
	if n := eval[int](t, b, `document.querySelectorAll("table.analyzer tbody tr").length`); n == 0 {
		t.Error("the hints table is empty")
	}
	if s := eval[string](t, b, `(document.querySelector("th[aria-sort]") || {}).textContent || ""`); !strings.HasPrefix(s, "calls") {
		t.Errorf("sorted by calls, the heading marked sorted is %q", s)
	}
	shot(t, b, "hints.png")
	for _, m := range b.problems(r.base) {
		t.Error(m)
	}
}

// TestSessionEscapes: the session whose goal, tasks, hints and tool errors
// hold <script>, onerror handlers and javascript: links runs none of it in
// the browser: no script runs, the texts show as text, and no link of the
// page is javascript:. The list and the overview neither.
func TestSessionEscapes(t *testing.T) {
	r := startPipeline(t)
	sid := twoReplans(t, r)
	b := newBrowser(t)
	for _, page := range []string{"/sessions/" + url.PathEscape(sid), "/sessions", "/?window=7d&until=" + synthUntil, "/analyze/hints?window=7d&until=" + synthUntil} {
		b.open(t, r.base+page)
		if v := eval[string](t, b, `String(window.__xss)`); v != "undefined" {
			t.Errorf("%s: agent text ran as script (window.__xss = %s)", page, v)
		}
		scripts := eval[[]string](t, b, `[...document.scripts].map(s => s.src || "inline: " + s.text)`)
		if len(scripts) != 1 || scripts[0] != r.base+"/static/web.js" {
			t.Errorf("%s: scripts %q, want only /static/web.js", page, scripts)
		}
		if js := eval[[]string](t, b, `[...document.querySelectorAll("[href],[src],[action]")].map(e => e.getAttribute("href") || e.getAttribute("src") || e.getAttribute("action")).filter(u => /^\s*javascript:/i.test(u))`); len(js) > 0 {
			t.Errorf("%s: javascript: URLs %q", page, js)
		}
		if n := eval[int](t, b, `document.querySelectorAll("img, [onerror]").length`); n != 0 {
			t.Errorf("%s: %d elements from agent text (img, onerror)", page, n)
		}
	}
	b.open(t, r.base+"/sessions/"+url.PathEscape(sid))
	text := eval[string](t, b, `document.body.innerText`)
	for _, w := range []string{xssGoal, xssTask, `<img src=x onerror="window.__xss='error'">`, xssHint} {
		if !strings.Contains(text, w) {
			t.Errorf("the session page does not show %q as text", w)
		}
	}
	// What looks like a link in the goal is text.
	if n := eval[int](t, b, `document.querySelectorAll("#goal a").length`); n != 0 {
		t.Errorf("the goal became %d links", n)
	}
	for _, m := range b.problems(r.base) {
		t.Error(m)
	}
}
