package plandialect

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func FuzzSkillLite(f *testing.F)  { fuzzDialect(f, SkillLite) }
func FuzzClaudeCode(f *testing.F) { fuzzDialect(f, ClaudeCode) }
func FuzzCodex(f *testing.F)      { fuzzDialect(f, Codex) }
func FuzzDeepAgents(f *testing.F) { fuzzDialect(f, DeepAgents) }

// fuzzDialect feeds pairs of arguments to one dialect: each parses or fails
// with an *ArgsError; a parsed plan re-encoded in the dialect's format
// parses to the same plan; and two parsed plans applied in turn to a tracker
// give a consistent Result. Seeds: the examples under testdata/<dialect>/,
// in pairs, and a few malformed arguments.
func fuzzDialect(f *testing.F, name string) {
	d := builtin[name]
	files, _ := filepath.Glob(filepath.Join("testdata", name, "*.json"))
	if len(files) == 0 {
		f.Fatalf("no seeds under testdata/%s", name)
	}
	var seeds [][]byte
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	seeds = append(seeds, []byte(`{}`), []byte(`[`), []byte(`{"todos":[{"content":1}]}`), []byte(`{"tasks":[{"id":-1,"description":""}]}`))
	for _, a := range seeds {
		for _, b := range seeds {
			f.Add(a, b)
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		pa, errA := parseChecked(t, d, a)
		pb, errB := parseChecked(t, d, b)
		if errA != nil || errB != nil {
			return
		}
		tr := newTracker(t, DefaultConfig())
		ra, err := tr.Apply(pa)
		if err != nil {
			t.Fatalf("Apply(first %s): %v", a, err)
		}
		if ra.Kind != Created || len(ra.Added) != len(pa.Tasks) {
			t.Fatalf("first plan: %s, want created with every task added", summary(ra))
		}
		checkIDs(t, ra)
		rb, err := tr.Apply(pb)
		if err != nil {
			t.Fatalf("Apply(second %s): %v", b, err)
		}
		checkIDs(t, rb)
		checkConsistent(t, ra.Tasks, rb, pb.Revision)
		if pb.Revision {
			return
		}
		again, err := tr.Apply(pb)
		if err != nil || again.Kind != Unchanged {
			t.Fatalf("the same call again: %s, %v, want unchanged", summary(again), err)
		}
	})
}

// parseChecked parses b, checking the error's type and, on success, that the
// plan round-trips through the dialect's format.
func parseChecked(t *testing.T, d Dialect, b []byte) (Plan, error) {
	p, err := d.Parse(b)
	if err != nil {
		var ae *ArgsError
		if !errors.As(err, &ae) || !errors.Is(err, ErrArguments) {
			t.Fatalf("Parse(%q) error %v (%T), want an *ArgsError", b, err, err)
		}
		return Plan{}, err
	}
	if !json.Valid(b) {
		t.Fatalf("Parse(%q) accepted invalid JSON", b)
	}
	for _, task := range p.Tasks {
		if !task.Status.Valid() {
			t.Fatalf("Parse(%q): status %q", b, task.Status)
		}
	}
	back, err := d.Parse(encode(t, d.Name(), p))
	if err != nil {
		t.Fatalf("Parse(encode(Parse(%q))): %v", b, err)
	}
	if got, want := plan(back), plan(p); got != want {
		t.Fatalf("round trip of %q:\n  %s\nwant\n  %s", b, got, want)
	}
	return p, nil
}

// encode writes p in dialect name's own format.
func encode(t *testing.T, name string, p Plan) []byte {
	var v any
	switch name {
	case SkillLite:
		tasks := make([]map[string]any, len(p.Tasks))
		for i, task := range p.Tasks {
			tasks[i] = map[string]any{"id": task.ID, "description": task.Description, "completed": task.Done()}
			if task.Hint != "" {
				tasks[i]["tool_hint"] = task.Hint
			}
		}
		v = map[string]any{"tasks": tasks, "reason": p.Reason}
	case Codex:
		steps := make([]map[string]any, len(p.Tasks))
		for i, task := range p.Tasks {
			steps[i] = map[string]any{"step": task.Description, "status": task.Status}
		}
		v = map[string]any{"plan": steps, "explanation": p.Reason}
	default:
		todos := make([]map[string]any, len(p.Tasks))
		for i, task := range p.Tasks {
			todos[i] = map[string]any{"content": task.Description, "status": task.Status}
		}
		v = map[string]any{"todos": todos}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkIDs fails unless every task of r has an id ≥ 1, unique.
func checkIDs(t *testing.T, r Result) {
	t.Helper()
	seen := map[int64]bool{}
	for _, task := range r.Tasks {
		if task.ID < 1 || seen[task.ID] {
			t.Fatalf("%s: id %d below 1 or repeated", summary(r), task.ID)
		}
		seen[task.ID] = true
	}
}

// checkConsistent fails unless r, the result of a call after the plan prev,
// agrees with itself: a replan exactly when the set changed, every completed
// and kept id a completed task of the new plan, every dropped or removed
// task one of prev.
func checkConsistent(t *testing.T, prev []Task, r Result, revision bool) {
	t.Helper()
	changed := len(r.Added)+len(r.Dropped)+len(r.Reworded) > 0
	if (r.Kind == Replanned) != (changed || revision) {
		t.Fatalf("%s: kind disagrees with added/dropped/reworded", summary(r))
	}
	done := map[int64]bool{}
	for _, task := range r.Tasks {
		done[task.ID] = task.Done()
	}
	for _, id := range slices.Concat(r.Completed, r.Kept) {
		if !done[id] {
			t.Fatalf("%s: %d completed or kept but not a completed task", summary(r), id)
		}
	}
	for _, gone := range slices.Concat(r.Dropped, r.Removed) {
		if !slices.Contains(prev, gone) {
			t.Fatalf("%s: dropped or removed %v was not in the plan before", summary(r), gone)
		}
	}
}
