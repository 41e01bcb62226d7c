package web

import (
	"strings"
	"unicode"
)

// The marks of a task in a plan version against the version before.
const (
	markKept     = "kept"     // in the version before: a completed task the replan kept, or a pending one listed again word for word
	markAdded    = "added"    // new with this version
	markReworded = "reworded" // new with this version in place of a dropped task it shares most words with
)

// diffTask is one task of a plan version as the diff sees it.
type diffTask struct {
	Description string
	New         bool // plan_tasks.is_new: not a completed task the replan kept
}

// diffPlan marks the tasks of a replan's version against the tasks it
// replaced (dropped: the pending tasks of the version before). A task the
// replan kept is kept; a new task is kept when a dropped task has the same
// description (listed again), reworded when it shares at least half of
// its words with a dropped task (the closest, each dropped task used once,
// the best pairs first), and added otherwise. It returns the marks, the
// description each reworded task replaced ("" for the others), and the
// indexes of the dropped tasks no task took the place of: those the
// replan really dropped.
func diffPlan(tasks []diffTask, dropped []string) (marks, was []string, gone []int) {
	marks, was = make([]string, len(tasks)), make([]string, len(tasks))
	used := make([]bool, len(dropped))
	for i, t := range tasks {
		switch {
		case !t.New:
			marks[i] = markKept
		default:
			for j, d := range dropped {
				if !used[j] && normalise(d) == normalise(t.Description) {
					marks[i], used[j] = markKept, true
					break
				}
			}
		}
	}
	// Reworded: the best remaining pairs first.
	for {
		bi, bj, best := -1, -1, 0.5
		for i, t := range tasks {
			if marks[i] != "" {
				continue
			}
			for j, d := range dropped {
				if used[j] {
					continue
				}
				if s := similarity(t.Description, d); s >= best && (bi < 0 || s > best) {
					bi, bj, best = i, j, s
				}
			}
		}
		if bi < 0 {
			break
		}
		marks[bi], was[bi], used[bj] = markReworded, dropped[bj], true
	}
	for i := range marks {
		if marks[i] == "" {
			marks[i] = markAdded
		}
	}
	for j, u := range used {
		if !u {
			gone = append(gone, j)
		}
	}
	return marks, was, gone
}

func normalise(s string) string { return strings.Join(words(s), " ") }

// words are the lower-case words of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// similarity is the Jaccard index of the word sets of a and b.
func similarity(a, b string) float64 {
	wa, wb := map[string]bool{}, map[string]bool{}
	for _, w := range words(a) {
		wa[w] = true
	}
	for _, w := range words(b) {
		wb[w] = true
	}
	if len(wa) == 0 || len(wb) == 0 {
		return 0
	}
	both := 0
	for w := range wa {
		if wb[w] {
			both++
		}
	}
	return float64(both) / float64(len(wa)+len(wb)-both)
}
