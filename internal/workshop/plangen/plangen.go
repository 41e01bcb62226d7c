// Package plangen generates seeded agent sessions that keep their plan in a
// Markdown file — written whole, then edited: boxes ticked, tasks started,
// added and removed, notes changed, the file rewritten — as the file tool
// calls of one agent style, with the truth they imply: the kind of every
// plan-file result, the replans and the completions. Adapters wrap the calls
// in their envelope (Claude Code hook events, OTel tool spans) and check
// that what they emit is exactly that truth; plandialect's tests run them
// through a FileTracker.
package plangen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Style is the file tools a generated agent uses.
type Style int

// Styles.
const (
	// ClaudeCode: Write, Edit and MultiEdit on /home/u/app/task_plan.md,
	// Bash and Read as ordinary tools.
	ClaudeCode Style = iota
	// SkillLite: write_file, search_replace and insert_lines on
	// task_plan.md, run_command and read_file as ordinary tools.
	SkillLite
	// Codex: apply_patch on todo.md, shell as an ordinary tool.
	Codex
)

func (s Style) String() string {
	return [...]string{"claude-code", "skilllite", "codex"}[s]
}

// Call is one generated tool call.
type Call struct {
	Tool string
	Args json.RawMessage
	// Expect is what each plan-file result of the call is, in order:
	// "created", "replanned", "progressed", "unchanged", "began" (a task
	// added when every task was completed: the next request), or "unknown" (an
	// edit of the plan file with unknown prior content). Empty for an
	// ordinary call, which is not a plan-file operation.
	Expect []string
}

// Truth is what a generated session's plan did.
type Truth struct {
	Created int // 1 once the plan has a task
	Replans int
	// Began counts the tasks added when every task was completed: each
	// begins the agent's next request (plandialect.Began), not a replan.
	Began int
	// LastReplans is the number of replans since the last Began.
	LastReplans int
	Completed   int // agent.task.completed events: boxes ticked
	Unknown     int // edits with unknown prior content
}

// Session is one generated session.
type Session struct {
	Style Style
	Path  string // the plan file
	Calls []Call
	Truth Truth
	// RequestReplans holds the replans of each request, in order: the
	// first plan's, then one entry per Truth.Began.
	RequestReplans []int
}

type task struct {
	desc  string
	phase int
	mark  byte // ' ', '~', 'x'
	req   int  // the request that listed it: model.req when it was added
}

type model struct {
	goal     string
	phases   []string
	numbered []bool
	tasks    []task
	notes    string
	req      int // the request in force, from 0
}

// finished reports whether the request in force listed a task and every
// task it listed is ticked.
func (m *model) finished() bool {
	own := 0
	for _, t := range m.tasks {
		if t.req != m.req {
			continue
		}
		own++
		if t.mark != 'x' {
			return false
		}
	}
	return own > 0
}

// render writes m as the plan file: a title, one heading per phase with
// its tasks (a bullet or a numbered list), then the notes.
func (m *model) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Task plan: %s\n\n", m.goal)
	for p, name := range m.phases {
		fmt.Fprintf(&b, "## Phase %d: %s\n", p+1, name)
		n := 0
		for _, t := range m.tasks {
			if t.phase != p {
				continue
			}
			n++
			bullet := "-"
			if m.numbered[p] {
				bullet = fmt.Sprintf("%d.", n)
			}
			fmt.Fprintf(&b, "%s [%c] %s\n", bullet, t.mark, t.desc)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Notes: %s\n", m.notes)
	return b.String()
}

// Words of descriptions: three content words each, never a stop word, so
// that two different descriptions share at most two of three words and are
// never taken for a rewording (Dice ≤ 0.67 < 0.7).
var (
	verbs   = []string{"check", "fix", "write", "review", "measure", "rename", "split", "document", "profile", "test"}
	adjs    = []string{"flaky", "slow", "legacy", "shared", "public", "hidden", "nested", "cached", "remote", "local"}
	nouns   = []string{"parser", "lexer", "client", "server", "cache", "router", "schema", "importer", "limiter", "logger"}
	phases_ = []string{"Discovery", "Implementation", "Verification", "Cleanup"}
)

type gen struct {
	rng   *rand.Rand
	used  map[string]bool
	style Style
	s     *Session
}

func (g *gen) desc() string {
	for {
		d := verbs[g.rng.IntN(len(verbs))] + " the " + adjs[g.rng.IntN(len(adjs))] + " " + nouns[g.rng.IntN(len(nouns))]
		if !g.used[d] {
			g.used[d] = true
			return d
		}
	}
}

// Generate returns the session of seed in style.
func Generate(seed uint64, style Style) Session {
	g := &gen{rng: rand.New(rand.NewPCG(seed, uint64(style)+1)), used: map[string]bool{}, style: style}
	s := &Session{Style: style, Path: [...]string{"/home/u/app/task_plan.md", "task_plan.md", "todo.md"}[style]}
	g.s = s
	m := &model{goal: "ship " + g.desc(), notes: "none yet"}
	for p := range 2 + g.rng.IntN(2) {
		m.phases = append(m.phases, phases_[p])
		m.numbered = append(m.numbered, g.rng.IntN(3) == 0)
		for range 1 + g.rng.IntN(3) {
			m.tasks = append(m.tasks, task{desc: g.desc(), phase: p, mark: ' '})
		}
	}
	if g.rng.IntN(4) == 0 {
		// The plan file existed before the session: an edit the tracker
		// cannot apply, then the agent rewrites it whole.
		g.edit(m.render(), strings.Replace(m.render(), "none yet", "stale", 1), []string{"unknown"})
		s.Truth.Unknown++
	}
	g.ordinary()
	g.write("", m.render(), "created")
	s.Truth.Created = 1
	s.RequestReplans = []int{0}
	for range 4 + g.rng.IntN(8) {
		g.step(m)
		if g.rng.IntN(2) == 0 {
			g.ordinary()
		}
	}
	return *s
}

// step changes m in one of several ways and emits the call that does it.
func (g *gen) step(m *model) {
	before := m.render()
	var pending []int
	for i, t := range m.tasks {
		if t.mark != 'x' {
			pending = append(pending, i)
		}
	}
	switch x := g.rng.IntN(10); {
	case x < 3 && len(pending) > 0: // tick a box
		m.tasks[pending[g.rng.IntN(len(pending))]].mark = 'x'
		g.s.Truth.Completed++
		g.edit(before, m.render(), []string{"progressed"})
	case x < 4 && len(pending) > 1 && g.style == ClaudeCode: // tick two, one MultiEdit
		a, b := pending[0], pending[1+g.rng.IntN(len(pending)-1)]
		m.tasks[a].mark = 'x'
		mid := m.render()
		m.tasks[b].mark = 'x'
		g.s.Truth.Completed += 2
		g.multiEdit([][2]string{{before, mid}, {mid, m.render()}}, "progressed")
	case x < 5 && len(pending) > 0 && m.tasks[pending[0]].mark == ' ': // start a task
		m.tasks[pending[0]].mark = '~'
		g.edit(before, m.render(), []string{"progressed"})
	case x < 7: // add a task
		at := g.rng.IntN(len(m.tasks) + 1)
		phase := len(m.phases) - 1
		if at < len(m.tasks) {
			phase = m.tasks[at].phase
		}
		kind := g.added(m, m.finished())
		m.tasks = slices.Insert(m.tasks, at, task{desc: g.desc(), phase: phase, mark: ' ', req: m.req})
		g.edit(before, m.render(), []string{kind})
	case x < 8 && len(pending) > 0: // drop a pending task
		i := pending[g.rng.IntN(len(pending))]
		m.tasks = slices.Delete(m.tasks, i, i+1)
		g.replanned()
		g.edit(before, m.render(), []string{"replanned"})
	case x < 9: // change the notes only
		m.notes = "see " + g.desc()
		g.edit(before, m.render(), []string{"unchanged"})
	default: // rewrite the whole file: tick one and add one
		finished := m.finished()
		if len(pending) > 0 {
			m.tasks[pending[0]].mark = 'x'
			g.s.Truth.Completed++
		}
		kind := g.added(m, finished)
		m.tasks = append(m.tasks, task{desc: g.desc(), phase: len(m.phases) - 1, mark: ' ', req: m.req})
		g.write(before, m.render(), kind)
	}
}

// added counts a task about to be added to m: the next request's plan when
// the request in force was finished before the call, else a replan.
func (g *gen) added(m *model, finished bool) string {
	if finished {
		m.req++
		g.s.Truth.Began++
		g.s.Truth.LastReplans = 0
		g.s.RequestReplans = append(g.s.RequestReplans, 0)
		return "began"
	}
	g.replanned()
	return "replanned"
}

func (g *gen) replanned() {
	g.s.Truth.Replans++
	g.s.Truth.LastReplans++
	g.s.RequestReplans[len(g.s.RequestReplans)-1]++
}

func (g *gen) add(tool string, args map[string]any, expect ...string) {
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("plangen: marshal %s arguments: %v", tool, err)) // maps of strings and numbers always marshal
	}
	g.s.Calls = append(g.s.Calls, Call{Tool: tool, Args: b, Expect: expect})
}

// ordinary emits a tool call that is not a plan-file operation.
func (g *gen) ordinary() {
	switch g.style {
	case ClaudeCode:
		if g.rng.IntN(2) == 0 {
			g.add("Bash", map[string]any{"command": "go test ./..."})
		} else {
			g.add("Write", map[string]any{"file_path": "/home/u/app/main.go", "content": "- [ ] not a plan\n"})
		}
	case SkillLite:
		g.add("run_command", map[string]any{"command": "cargo test"})
	case Codex:
		g.add("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: src/main.rs\n@@\n-a\n+b\n*** End Patch\n"})
	}
}

// write emits a whole-file write of after (before is the content it
// replaces, for a patch).
func (g *gen) write(before, after, expect string) {
	switch g.style {
	case ClaudeCode:
		g.add("Write", map[string]any{"file_path": g.s.Path, "content": after}, expect)
	case SkillLite:
		g.add("write_file", map[string]any{"path": g.s.Path, "content": after}, expect)
	case Codex:
		if before == "" {
			g.add("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: " + g.s.Path + "\n" + prefixed("+", after) + "*** End Patch\n"}, expect)
			return
		}
		g.add("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: " + g.s.Path + "\n@@\n" + prefixed("-", before) + prefixed("+", after) + "*** End Patch\n"}, expect)
	}
}

// edit emits the smallest edit that turns before into after.
func (g *gen) edit(before, after string, expect []string) {
	old, repl, at := lineDiff(before, after)
	switch g.style {
	case ClaudeCode:
		g.add("Edit", map[string]any{"file_path": g.s.Path, "old_string": old, "new_string": repl}, expect...)
	case SkillLite:
		if old == "" || (g.rng.IntN(2) == 0 && strings.HasPrefix(repl, old) && len(repl) > len(old)) {
			// an insertion: insert_lines after the context line
			inserted := strings.TrimPrefix(repl, old)
			g.add("insert_lines", map[string]any{"path": g.s.Path, "line": at + strings.Count(old, "\n"), "content": strings.TrimSuffix(inserted, "\n")}, expect...)
			return
		}
		g.add("search_replace", map[string]any{"path": g.s.Path, "old_string": old, "new_string": repl}, expect...)
	case Codex:
		g.add("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: " + g.s.Path + "\n@@\n" + prefixed("-", old) + prefixed("+", repl) + "*** End Patch\n"}, expect...)
	}
}

// multiEdit emits one call applying several edits in order (Claude Code).
func (g *gen) multiEdit(steps [][2]string, expect string) {
	var edits []map[string]any
	for _, s := range steps {
		old, repl, _ := lineDiff(s[0], s[1])
		edits = append(edits, map[string]any{"old_string": old, "new_string": repl})
	}
	g.add("MultiEdit", map[string]any{"file_path": g.s.Path, "edits": edits}, expect)
}

// lineDiff returns the lines that differ between before and after, with
// one unchanged line of context before them (after them at the start of
// the file), as old and new text; at is the 0-based line where old starts.
// Lines of a generated plan are unique, so old occurs once in before.
func lineDiff(before, after string) (old, repl string, at int) {
	a, b := lines(before), lines(after)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	from, toA, toB := p, len(a)-s, len(b)-s
	if from > 0 {
		from--
	} else if s > 0 {
		toA, toB = toA+1, toB+1
	}
	return join(a[from:toA]), join(b[from:toB]), from
}

func lines(s string) []string { return strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n") }

func join(ls []string) string {
	s := strings.Join(ls, "")
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// prefixed prefixes every line of text with p (patch lines).
func prefixed(p, text string) string {
	if text == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		b.WriteString(p + l + "\n")
	}
	return b.String()
}
