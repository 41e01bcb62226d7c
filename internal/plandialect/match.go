package plandialect

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// normalize folds a description to its words: lower case, every run of
// characters that are neither letters nor digits (punctuation, spaces) one
// space, trimmed. "Run the tests." and "run  the tests" normalise alike.
func normalize(s string) string {
	return strings.Join(words(s), " ")
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// stopWords are left out of the similarity of two descriptions: they make
// unrelated short tasks ("fix the login bug", "fix the signup bug") look
// alike.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "as": true, "at": true, "by": true,
	"for": true, "from": true, "in": true, "into": true, "of": true,
	"on": true, "or": true, "the": true, "to": true, "with": true,
}

// tokenSet is the set of a description's normalised words, stop words left
// out.
func tokenSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range words(s) {
		if !stopWords[w] {
			set[w] = true
		}
	}
	return set
}

// similarity is the Dice coefficient of two token sets, 2|A∩B| / (|A|+|B|):
// 1 for the same words, 0 for none in common or an empty set.
func similarity(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	common := 0
	for w := range a {
		if b[w] {
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

// How a task of the new version was matched to one of the plan in force.
const (
	tierNone     = iota // not matched: a new task
	tierID              // same given id, same normalised description
	tierExact           // same description
	tierNorm            // same normalised description
	tierReworded        // similar description (a rewording)
)

// matching pairs the tasks of a new version with those of the plan in force.
type matching struct {
	prevOf []int // per new task, the index of its earlier task, or -1
	tier   []int // per new task, how it was matched
	taken  []bool
}

// match pairs next with prev, tier by tier; each tier sees only the tasks
// the earlier tiers left unpaired:
//
//  1. with given ids (hasIDs): same id and same normalised description;
//  2. without given ids: the same description, exactly;
//  3. without given ids: the same normalised description;
//  4. a similar description: similarity ≥ threshold (with given ids, only
//     between tasks of the same id).
//
// With given ids a task is its id: a description listed again under another
// id is a new task (the agent renumbered it), so that every id a Result
// carries names the task the agent's own list gives it.
//
// In tiers 2 and 3 a new task first takes the earlier task at its own
// position, else the first unpaired earlier task. In tier 4 the most
// similar pairs go first; ties go to a pair at the same position, then to
// the earlier task first in the plan in force, then to the first new task.
func match(prev, next []Task, hasIDs bool, threshold float64) matching {
	m := matching{prevOf: make([]int, len(next)), tier: make([]int, len(next)), taken: make([]bool, len(prev))}
	for j := range m.prevOf {
		m.prevOf[j] = -1
	}
	pair := func(i, j, tier int) {
		m.prevOf[j], m.tier[j], m.taken[i] = i, tier, true
	}
	normPrev := make([]string, len(prev))
	for i, t := range prev {
		normPrev[i] = normalize(t.Description)
	}
	normNext := make([]string, len(next))
	for j, t := range next {
		normNext[j] = normalize(t.Description)
	}

	if hasIDs {
		for j, t := range next {
			for i, p := range prev {
				if !m.taken[i] && p.ID == t.ID && normPrev[i] == normNext[j] {
					pair(i, j, tierID)
					break
				}
			}
		}
	}
	equalTier := func(tier int, eq func(i, j int) bool) {
		for j := range next {
			if m.prevOf[j] < 0 && j < len(prev) && !m.taken[j] && eq(j, j) {
				pair(j, j, tier)
			}
		}
		for j := range next {
			if m.prevOf[j] >= 0 {
				continue
			}
			for i := range prev {
				if !m.taken[i] && eq(i, j) {
					pair(i, j, tier)
					break
				}
			}
		}
	}
	if !hasIDs {
		equalTier(tierExact, func(i, j int) bool { return prev[i].Description == next[j].Description })
		equalTier(tierNorm, func(i, j int) bool { return normPrev[i] == normNext[j] })
	}

	type candidate struct {
		i, j int
		sim  float64
	}
	var cands []candidate
	setPrev := make([]map[string]bool, len(prev))
	for i, t := range prev {
		if !m.taken[i] {
			setPrev[i] = tokenSet(t.Description)
		}
	}
	for j, t := range next {
		if m.prevOf[j] >= 0 {
			continue
		}
		set := tokenSet(t.Description)
		for i := range prev {
			if m.taken[i] || (hasIDs && prev[i].ID != t.ID) {
				continue
			}
			if s := similarity(setPrev[i], set); s >= threshold {
				cands = append(cands, candidate{i, j, s})
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		if sa, sb := a.i == a.j, b.i == b.j; sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.i, b.i); c != 0 {
			return c
		}
		return cmp.Compare(a.j, b.j)
	})
	for _, c := range cands {
		if !m.taken[c.i] && m.prevOf[c.j] < 0 {
			pair(c.i, c.j, tierReworded)
		}
	}
	return m
}
