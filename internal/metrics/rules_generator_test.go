package metrics

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/taxonomytest"
)

// The generator writes agent sessions whose statistics are known: each task
// type needs one tool, its tasks are planned with hints in known
// proportions, every call under a hint fails with a known probability, and
// one hint is planted as bad (coding tasks hinted search_web fail 60% of
// their calls, and replans swap them for grep). The analyses must recover
// the truth hgWithin the sampling error, and learn exactly the planted rules.

// hgType is a task type of the generator and the truth about it.
type hgType struct {
	name  string   // its type in the default taxonomy
	descs []string // descriptions the default taxonomy classifies as name
	need  string   // the tool its tasks need
	tools []string // the tools its calls use (need first)
	hints []hgHint
}

// hgHint is one way the planner hints a type's tasks.
type hgHint struct {
	hint string  // "" for no hint
	p    float64 // share of the type's tasks planned with it
	fail float64 // probability that a call under it fails
}

var hgTypes = []hgType{
	{
		name:  "coding",
		descs: []string{"Fix the null pointer bug in the parser", "Refactor the HTTP client", "Implement the retry function", "修复登录接口的错误", "重构支付模块代码"},
		need:  "write_file",
		tools: []string{"write_file", "read_file", "grep", "search_web"},
		hints: []hgHint{{"write_file", 0.6, 0.05}, {"search_web", 0.2, 0.6}, {"read_file", 0.1, 0.07}, {"", 0.1, 0.07}},
	},
	{
		name:  "testing",
		descs: []string{"Run the unit tests", "Add a regression test for the cache", "Check the test coverage", "运行单元测试", "补充测试用例"},
		need:  "run_command",
		tools: []string{"run_command", "write_file", "read_file"},
		hints: []hgHint{{"run_command", 0.7, 0.05}, {"write_file", 0.15, 0.07}, {"", 0.15, 0.07}},
	},
	{
		name:  "search",
		descs: []string{"Search the logs for the error", "Find every caller of Open", "Look up the rate limits", "搜索相关资料", "查找配置项的用法"},
		need:  "grep",
		tools: []string{"grep", "search_web", "read_file"},
		hints: []hgHint{{"grep", 0.65, 0.05}, {"search_web", 0.2, 0.07}, {"", 0.15, 0.07}},
	},
	{
		name:  "docs",
		descs: []string{"Update the README", "Write the changelog entry", "Document the new flags", "更新项目文档", "编写使用教程"},
		need:  "read_file",
		tools: []string{"read_file", "write_file", "grep"},
		hints: []hgHint{{"read_file", 0.65, 0.05}, {"write_file", 0.2, 0.07}, {"", 0.15, 0.07}},
	},
}

const (
	hgFollow     = 0.95 // a hinted call uses the hinted tool
	hgNoHintNeed = 0.7  // an unhinted call uses the type's need tool
	hgStripped   = 0.3  // an unhinted task had a hallucinated hint, stripped
	hgReplace    = 0.8  // a coding task hinted search_web whose first call fails is replaced by one hinted grep
	hgGrepFail   = 0.05 // calls of those grep tasks fail
	hgOpen       = 0.05 // sessions that never end
	hgSessions   = 800
	hgSeed       = 20250702
)

var hgStart = time.Date(2025, 6, 3, 0, 0, 0, 0, time.UTC)

// hgCount is what the generator did for one task type and hint.
type hgCount struct {
	calls, failed, followed, planned, dropped, stripped int64
	fail                                                float64            // the truth: failure probability of its calls
	tools                                               map[string]float64 // the truth: P(tool | a call under it)
}

// hgWorld is the generator's output: the events, and exact counts.
type hgWorld struct {
	jsonl  []byte
	counts map[string]*hgCount // "type/hint" ("type/" for none; "type/magic_x" stripped)
}

func (w *hgWorld) count(typ, hint string) *hgCount {
	k := typ + "/" + hint
	if w.counts[k] == nil {
		w.counts[k] = &hgCount{}
	}
	return w.counts[k]
}

// toolChoice is P(tool | call under hint) for type t.
func (t hgType) toolChoice(hint string) map[string]float64 {
	m := map[string]float64{}
	if hint == "" {
		m[t.need] += hgNoHintNeed
		for _, o := range t.tools[1:] {
			m[o] += (1 - hgNoHintNeed) / float64(len(t.tools)-1)
		}
		return m
	}
	m[hint] += hgFollow
	var others []string
	for _, o := range t.tools {
		if o != hint {
			others = append(others, o)
		}
	}
	for _, o := range others {
		m[o] += (1 - hgFollow) / float64(len(others))
	}
	return m
}

func hgPick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func hgPickTool(r *rand.Rand, m map[string]float64) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	u := r.Float64()
	for _, k := range names {
		if u -= m[k]; u < 0 {
			return k
		}
	}
	return names[len(names)-1]
}

// hgTask is a task of a generated plan.
type hgTask struct {
	typ      hgType
	desc     string
	hint     string
	ownType  bool
	stripped string
}

func (g hgTask) wire(id int64, completed bool) agent.Task {
	t := agent.Task{ID: id, Description: g.desc, Completed: completed}
	if g.hint != "" {
		h := g.hint
		t.ToolHint = &h
	}
	if g.ownType {
		t.TaskType = g.typ.name
	}
	return t
}

// hgGenerate builds the world from the fixed seed.
func hgGenerate() (*hgWorld, error) {
	return hgGenerateWorld(rand.New(rand.NewPCG(hgSeed, 1)))
}

func hgGenerateWorld(r *rand.Rand) (*hgWorld, error) {
	w := &hgWorld{counts: map[string]*hgCount{}}
	for _, t := range hgTypes {
		for _, h := range t.hints {
			c := w.count(t.name, h.hint)
			c.fail, c.tools = h.fail, t.toolChoice(h.hint)
		}
		if t.name == "coding" {
			c := w.count(t.name, "grep")
			c.fail, c.tools = hgGrepFail, t.toolChoice("grep")
		}
	}
	var buf bytes.Buffer
	sink := agent.NewJSONLWriter(&buf)
	ctx := context.Background()
	for i := range hgSessions {
		at := hgStart.Add(time.Duration(r.Int64N(int64(28 * 24 * time.Hour))))
		clock := func() time.Time { at = at.Add(time.Second); return at }
		s := agent.NewSession(sink, "skilllite/gen-host", fmt.Sprintf("gen-%04d", i)).WithClock(clock)
		if err := hgSession(ctx, r, s, w); err != nil {
			return nil, err
		}
	}
	if err := sink.Flush(); err != nil {
		return nil, err
	}
	w.jsonl = buf.Bytes()
	return w, nil
}

// hgSession writes one session: a plan of 2 to 4 tasks, 1 to 3 calls per
// task, a replan when a coding task hinted search_web fails, completions,
// and (mostly) an end.
func hgSession(ctx context.Context, r *rand.Rand, s *agent.Session, w *hgWorld) error {
	var sessionType *hgType
	if r.Float64() < 0.2 {
		t := hgPick(r, hgTypes)
		sessionType = &t
	}
	start := agent.SessionStarted{Goal: "generated", Agent: "skilllite", AgentVersion: "1.0", Model: "gen-model",
		Tools: []string{"read_file", "write_file", "run_command", "grep", "search_web", "complete_task", "update_task_plan"}}
	if sessionType != nil {
		start.TaskType = sessionType.name
	}
	if err := s.Started(ctx, start); err != nil {
		return err
	}
	tasks := make([]hgTask, 2+r.IntN(3))
	for i := range tasks {
		t := hgPick(r, hgTypes)
		if sessionType != nil {
			t = *sessionType
		}
		g := hgTask{typ: t, desc: hgPick(r, t.descs), ownType: sessionType == nil && r.Float64() < 0.2}
		u := r.Float64()
		for _, h := range t.hints {
			if u -= h.p; u < 0 {
				g.hint = h.hint
				break
			}
		}
		if g.hint == "" && r.Float64() < hgStripped {
			g.stripped = "magic_" + t.name
		}
		tasks[i] = g
	}
	plan := make([]agent.Task, len(tasks))
	for i, g := range tasks {
		plan[i] = g.wire(int64(i+1), false)
		w.count(g.typ.name, g.hint).planned++
	}
	if err := s.PlanCreated(ctx, agent.PlanCreated{Tasks: plan, Origin: events.OriginModel}); err != nil {
		return err
	}
	for i, g := range tasks {
		if g.stripped != "" {
			w.count(g.typ.name, g.stripped).stripped++
			if err := s.HintStripped(ctx, agent.HintStripped{TaskID: int64(i + 1), ToolHint: g.stripped, Phase: events.PhasePlan, Reason: events.StripUnavailable}); err != nil {
				return err
			}
		}
	}
	replans := int64(0)
	for i := 0; i < len(tasks); i++ {
		g, id := tasks[i], int64(i+1)
		hint := g.hint
		fail := 0.0
		for _, h := range g.typ.hints {
			if h.hint == hint {
				fail = h.fail
			}
		}
		if hint == "grep" && g.typ.name == "coding" {
			fail = hgGrepFail
		}
		n := 1 + r.IntN(3)
		lastOK, replaced := false, false
		for k := range n {
			c := w.count(g.typ.name, hint)
			tool := hgPickTool(r, g.typ.toolChoice(hint))
			ok := r.Float64() >= fail
			c.calls++
			if !ok {
				c.failed++
			}
			if tool == hint {
				c.followed++
			}
			lastOK = ok
			d := agent.ToolCalled{TaskID: &id, Tool: tool, Hint: hgOptional(hint), OK: ok, DurationMS: 10}
			if !ok {
				d.ErrorKind, d.Error = "exit_status", "exit status 1"
			}
			if err := s.ToolCalled(ctx, d); err != nil {
				return err
			}
			if k == 0 && !ok && g.typ.name == "coding" && hint == "search_web" && r.Float64() < hgReplace {
				replans++
				if err := hgReplan(ctx, s, w, tasks, i, replans); err != nil {
					return err
				}
				replaced = true
				break
			}
		}
		if replaced {
			i-- // execute the new task, under the same id
			continue
		}
		if err := s.ToolCalled(ctx, agent.ToolCalled{TaskID: &id, Tool: "complete_task", Hint: hgOptional(hint), OK: true, DurationMS: 3, Control: true}); err != nil {
			return err
		}
		completion := events.CompletionSuccess
		if !lastOK {
			completion = events.CompletionFailure
		}
		if err := s.TaskCompleted(ctx, agent.TaskCompleted{TaskID: id, Completion: completion, ToolCalls: int64(n + 1)}); err != nil {
			return err
		}
	}
	if r.Float64() < hgOpen {
		return nil
	}
	return s.Ended(ctx, agent.SessionEnded{Outcome: events.OutcomeSuccess, Replans: replans})
}

// hgReplan drops pending coding task i (hinted search_web) and adds the
// same task hinted grep under its id; the completed tasks before it are
// kept, the pending ones after it re-listed (new again: a replan keeps only
// completed tasks).
func hgReplan(ctx context.Context, s *agent.Session, w *hgWorld, tasks []hgTask, i int, replan int64) error {
	dropped := tasks[i].wire(int64(i+1), false)
	w.count("coding", "search_web").dropped++
	tasks[i].hint = "grep"
	list := make([]agent.Task, 0, len(tasks))
	var kept []int64
	for j := range tasks {
		list = append(list, tasks[j].wire(int64(j+1), j < i))
		if j < i {
			kept = append(kept, int64(j+1))
		}
	}
	w.count("coding", "grep").planned++ // the re-listed pending tasks did not enter the plan again
	err := s.PlanUpdated(ctx, agent.PlanUpdated{Replan: replan, Trigger: events.TriggerToolFailures, Tasks: list, Kept: kept,
		Dropped: []agent.Task{dropped}, OverCap: replan >= 3, Valid: true})
	if err != nil {
		return err
	}
	return s.ToolCalled(ctx, agent.ToolCalled{Tool: "update_task_plan", OK: true, DurationMS: 3, Control: true})
}

func hgOptional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// hgWithin reports whether got is hgWithin 4 standard errors of want.
func hgWithin(got, want, sd float64) bool { return math.Abs(got-want) <= 4*sd+1e-12 }

func TestHintGeneratorDescriptions(t *testing.T) {
	classify := taxonomytest.Classifier(taxonomy.Default())
	for _, ty := range hgTypes {
		for _, d := range ty.descs {
			if got := classify(d); got != ty.name {
				t.Errorf("classify(%q) = %s, want %s", d, got, ty.name)
			}
		}
	}
}

// TestHintGenerator loads the generated world once and checks what each
// analysis recovers from it.
func TestHintGenerator(t *testing.T) {
	w, err := hgGenerate()
	if err != nil {
		t.Fatalf("hgGenerate: %v", err)
	}
	src := ingestedDB(t, nil, w.jsonl)
	t.Run("hints", func(t *testing.T) { checkGeneratedHints(t, w, src) })
	t.Run("mappings", func(t *testing.T) { checkGeneratedMappings(t, w, src) })
	t.Run("rules", func(t *testing.T) { checkGeneratedRules(t, src) })
}

// Hints recovers the generator's exact counts, and its failure and follow
// probabilities hgWithin 4 standard errors.
func checkGeneratedHints(t *testing.T, w *hgWorld, src Source) {
	rows, err := Hints(context.Background(), src, Filter{By: []string{"task_type"}}, taxonomy.Default(), DefaultHintsConfig())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		k := r.TaskType.String() + "/"
		if r.Hint != nil {
			k += *r.Hint
		}
		seen[k] = true
		c, ok := w.counts[k]
		if !ok {
			t.Errorf("row %s: the generator made no such hint", k)
			continue
		}
		if r.Calls != c.calls || r.Failed != c.failed || r.Planned != c.planned || r.Dropped != c.dropped || r.Stripped != c.stripped ||
			(r.Hint != nil && r.Followed != c.followed) {
			t.Errorf("%s: calls %d failed %d followed %d planned %d dropped %d stripped %d; generated %+v",
				k, r.Calls, r.Failed, r.Followed, r.Planned, r.Dropped, r.Stripped, *c)
		}
		if c.calls < 100 {
			continue
		}
		n := float64(r.Calls)
		if !hgWithin(*r.FailureRate, c.fail, math.Sqrt(c.fail*(1-c.fail)/n)) {
			t.Errorf("%s: failure rate %.4f over %d calls, truth %.4f", k, *r.FailureRate, r.Calls, c.fail)
		}
		if r.FailureCI.Lo > c.fail+0.02 || r.FailureCI.Hi < c.fail-0.02 {
			t.Errorf("%s: interval %+v far from the truth %.4f", k, *r.FailureCI, c.fail)
		}
		if r.Hint != nil && !hgWithin(*r.FollowedRate, hgFollow, math.Sqrt(hgFollow*(1-hgFollow)/n)) {
			t.Errorf("%s: followed rate %.4f, truth %.2f", k, *r.FollowedRate, hgFollow)
		}
	}
	for k, c := range w.counts {
		if !seen[k] && (c.calls > 0 || c.planned > 0 || c.stripped > 0) {
			t.Errorf("no row for generated %s %+v", k, *c)
		}
	}
	// The planted bad hint is the worst supported row, with a tiny p-value.
	if k := rows[0].TaskType.String() + "/" + *rows[0].Hint; k != "coding/search_web" || *rows[0].PValue > 1e-10 {
		t.Errorf("worst row %s (p %v), want coding/search_web with p < 1e-10", k, deref(rows[0].PValue))
	}
}

// Mappings finds each type's needed tool on top, with the expected share
// (given the calls under each hint) hgWithin 4 standard errors, and stable.
func checkGeneratedMappings(t *testing.T, w *hgWorld, src Source) {
	res, err := Mappings(context.Background(), src, Filter{}, taxonomy.Default(), DefaultMappingsConfig())
	if err != nil {
		t.Fatal(err)
	}
	got := mappingsByType(res.Rows)
	for _, ty := range hgTypes {
		r, ok := got[ty.name]
		if !ok {
			t.Errorf("no mapping for %s", ty.name)
			continue
		}
		if *r.TopTool != ty.need || !r.Stable {
			t.Errorf("%s: top tool %s (stable %v), want %s, stable", ty.name, *r.TopTool, r.Stable, ty.need)
		}
		// E[calls of tool] = Σ_hint calls(hint) P(tool | hint), a sum of
		// independent Bernoulli trials.
		var n, mean, variance float64
		for k, c := range w.counts {
			if len(k) <= len(ty.name) || k[:len(ty.name)+1] != ty.name+"/" || c.calls == 0 {
				continue
			}
			q := c.tools[ty.need]
			n += float64(c.calls)
			mean += float64(c.calls) * q
			variance += float64(c.calls) * q * (1 - q)
		}
		if float64(r.Calls) != n {
			t.Errorf("%s: %d calls, generated %v", ty.name, r.Calls, n)
		}
		if !hgWithin(*r.TopShare, mean/n, math.Sqrt(variance)/n) {
			t.Errorf("%s: share of %s %.4f, expected %.4f ± %.4f", ty.name, ty.need, *r.TopShare, mean/n, math.Sqrt(variance)/n)
		}
	}
}

// At the default thresholds the rules are exactly the planted ones: avoid
// search_web for coding (instead grep), replace it with grep, and prefer
// each type's needed tool.
func checkGeneratedRules(t *testing.T, src Source) {
	rs, err := LearnRules(context.Background(), src, Filter{}, taxonomy.Default(), DefaultRulesConfig(), rulesNow)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"avoid:coding:search_web",
		"replace:coding:search_web:grep",
		"prefer:coding:write_file",
		"prefer:docs:read_file",
		"prefer:search:grep",
		"prefer:testing:run_command",
	}
	if got := ruleIDs(rs); !slices.Equal(got, want) {
		for _, r := range rs.Rules {
			t.Logf("%s support %d confidence %.3f evidence %+v", r.ID, r.Support, r.Confidence, r.Evidence)
		}
		t.Fatalf("rules %v, want %v", got, want)
	}
	if rs.Rules[0].Instead != "grep" {
		t.Errorf("avoid instead %q, want grep", rs.Rules[0].Instead)
	}
	checkRuleSetSchema(t, rs)
}
