package plandialect

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Test plans are written in a checklist shorthand; a malformed line panics.

// todos builds a snapshot plan without ids from lines "[ ] text" (pending),
// "[~] text" (in progress) and "[x] text" (completed).
func todos(lines ...string) Plan {
	p := Plan{Tasks: []Task{}}
	for _, l := range lines {
		p.Tasks = append(p.Tasks, box(l))
	}
	return p
}

// withIDs builds a snapshot plan with ids from lines "3 [ ] text" or
// "3 [x] text @hint".
func withIDs(lines ...string) Plan {
	p := Plan{Tasks: []Task{}, HasIDs: true}
	for _, l := range lines {
		id, rest, _ := strings.Cut(l, " ")
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			panic(fmt.Sprintf("withIDs(%q): %v", l, err))
		}
		t := box(rest)
		t.ID = n
		p.Tasks = append(p.Tasks, t)
	}
	return p
}

// revision builds a SkillLite update_task_plan revision listing descs
// (each "text" or "text @hint").
func revision(reason string, descs ...string) Plan {
	p := Plan{Reason: reason, Revision: true}
	for i, d := range descs {
		d, hint, _ := strings.Cut(d, " @")
		p.Tasks = append(p.Tasks, Task{ID: int64(i + 1), Description: d, Hint: hint, Status: Pending})
	}
	return p
}

func box(l string) Task {
	if len(l) < 4 || l[0] != '[' || l[2] != ']' || l[3] != ' ' {
		panic(fmt.Sprintf("task %q: want \"[ ] text\"", l))
	}
	st := map[byte]Status{' ': Pending, '~': InProgress, 'x': Completed}[l[1]]
	d, hint, _ := strings.Cut(l[4:], " @")
	return Task{Description: d, Hint: hint, Status: st}
}

// summary writes r compactly: kind, "#n" for an ordinal, "!cap" over the
// cap, the tasks as id+mark+":"+description (+"@"+hint), then each non-empty
// id list, e.g. "replanned #1 tasks=1x:A,2:B kept=1 added=2".
func summary(r Result) string {
	var b strings.Builder
	b.WriteString(r.Kind.String())
	if r.Replan > 0 {
		fmt.Fprintf(&b, " #%d", r.Replan)
	}
	if r.OverCap {
		b.WriteString("!cap")
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, " reason=%q", r.Reason)
	}
	b.WriteString(" tasks=" + taskList(r.Tasks))
	ids := func(name string, v []int64) {
		if len(v) == 0 {
			return
		}
		s := make([]string, len(v))
		for i, id := range v {
			s[i] = strconv.FormatInt(id, 10)
		}
		b.WriteString(" " + name + "=" + strings.Join(s, ","))
	}
	taskIDs := func(ts []Task) []int64 {
		var out []int64
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	ids("kept", r.Kept)
	ids("dropped", taskIDs(r.Dropped))
	ids("removed", taskIDs(r.Removed))
	ids("added", r.Added)
	ids("reworded", r.Reworded)
	ids("completed", r.Completed)
	ids("reopened", r.Reopened)
	ids("rehinted", r.Rehinted)
	return b.String()
}

func taskList(ts []Task) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		mark := map[Status]string{Pending: "", InProgress: "~", Completed: "x"}[t.Status]
		s[i] = fmt.Sprintf("%d%s:%s", t.ID, mark, t.Description)
		if t.Hint != "" {
			s[i] += "@" + t.Hint
		}
	}
	return strings.Join(s, ",")
}

func newTracker(tb testing.TB, cfg Config) *Tracker {
	tb.Helper()
	r, err := New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return r.NewTracker()
}
