package skilllite

import (
	"cmp"
	"slices"
	"time"
)

// TurnCounts are the figures of one bridged turn that ended with a done
// line, for the cross-check with SkillLite's feedback.sqlite. A Translator
// hands them to Config.OnTurn.
type TurnCounts struct {
	Line       int    `json:"line"`              // the done line, from 1
	Session    string `json:"session,omitempty"` // our session id; "" for a plain answer
	SessionKey string `json:"session_key,omitempty"`
	// AgentToolCalls is done.tool_calls, SkillLite's own count
	// (feedback.total_tools, skilllite-agent/src/rpc.rs:683-689); -1 when
	// the line has none.
	AgentToolCalls int64  `json:"agent_tool_calls"`
	CompletionType string `json:"completion_type,omitempty"` // done.completion_type as sent
	// Ours: executed calls, failed ones, update_task_plan calls that reached
	// SkillLite's handler (its replan count), and whether every task of a
	// non-empty plan completed (its planner.all_completed).
	ToolCalls     int64 `json:"tool_calls"`
	Failed        int64 `json:"failed_tool_calls"`
	Replans       int64 `json:"replans"`
	TaskCompleted bool  `json:"task_completed"`
	// End is the time of the turn's last line with a real time (a
	// transcript's); zero when no line had one.
	End time.Time `json:"end,omitzero"`
}

// agentCount is the turn's tool-call count as SkillLite counts it: its own
// when the done line gives it, else ours.
func (tc TurnCounts) agentCount() int64 {
	if tc.AgentToolCalls >= 0 {
		return tc.AgentToolCalls
	}
	return tc.ToolCalls
}

// Decision is a row of SkillLite's decisions table
// (skilllite-evolution/src/feedback.rs:119-135), written once per turn with
// at least one tool call (skilllite-agent/src/chat_session.rs:417-421), with
// the rule ids of its decision_rules rows.
type Decision struct {
	ID                     int64     `json:"id"`
	TS                     time.Time `json:"ts"` // datetime('now'): UTC, whole seconds
	SessionID              string    `json:"session_id,omitempty"`
	TotalTools             int64     `json:"total_tools"`
	FailedTools            int64     `json:"failed_tools"`
	Replans                int64     `json:"replans"`
	TaskCompleted          bool      `json:"task_completed"`
	CompletionType         string    `json:"completion_type"`          // reconciled (skilllite-agent/src/evolution.rs:66-93)
	CompletionTypeReported string    `json:"completion_type_reported"` // the turn's, as done sends it
	Rules                  []string  `json:"rules,omitempty"`
}

// FeedbackReport is the cross-check of bridged turns with decisions rows.
type FeedbackReport struct {
	Decisions int `json:"decisions"` // rows read
	Turns     int `json:"turns"`     // turns that ended with done
	// Recorded are the turns SkillLite records a decision for: at least one
	// tool call. The others are not looked for.
	Recorded       int          `json:"recorded"`
	Matched        []TurnMatch  `json:"matched"`
	Differing      int          `json:"differing"` // matched pairs whose counts differ
	UnmatchedTurns []TurnCounts `json:"unmatched_turns"`
}

// TurnMatch is a turn paired with its decision, and the counts on which
// they differ.
type TurnMatch struct {
	Turn     TurnCounts  `json:"turn"`
	Decision Decision    `json:"decision"`
	Diffs    []CountDiff `json:"diffs,omitempty"`
}

// CountDiff is a figure on which the bridge and SkillLite's decision differ.
type CountDiff struct {
	Field     string `json:"field"` // the decisions column
	Bridge    any    `json:"bridge"`
	SkillLite any    `json:"skilllite"`
}

// Time window in which a decision is written after a turn's last known
// time: it is recorded once the final answer is in, after the last tool
// result (chat_session.rs:388-421), and ts has whole seconds.
const (
	decisionBefore = 2 * time.Second
	decisionAfter  = 10 * time.Minute
)

// CrossCheck pairs the turns with decisions and compares their counts.
//
// Nothing on agent-rpc's stdout names a decisions row: a row has the
// session_key and the time it was written, the stdout neither (unless the
// input holds the requests, whose session_key then narrows the rows). So
// the pairing is by order. SkillLite writes a row per turn with a tool
// call, in turn order: the recorded turns of a session_key (or of the whole
// input, when it names none) are taken to be consecutive rows of that
// session (of all rows), in the same order, with rows of other runs
// possibly between them. A turn and a row agree when the row's total_tools
// is the done line's tool_calls, its completion_type_reported the done
// line's completion_type, and, for a turn with a real time, its ts falls
// within [end-2s, end+10m]. Turns and rows are paired in order so that the
// most pairs agree (the latest rows among equal pairings); every turn
// without a row is unmatched.
//
// A matched pair is then compared on what the bridge derives itself:
// executed tool calls, failed ones, replans, task completion. Those are the
// data-quality figures: the keys come from the agent's own done line.
func CrossCheck(turns []TurnCounts, decisions []Decision) FeedbackReport {
	r := FeedbackReport{Decisions: len(decisions), Turns: len(turns), Matched: []TurnMatch{}, UnmatchedTurns: []TurnCounts{}}
	rows := slices.Clone(decisions)
	slices.SortFunc(rows, func(a, b Decision) int { return cmp.Compare(a.ID, b.ID) })

	// Groups by session_key, in the order they first appear; the turns
	// without one last, against the rows the others left.
	var keys []string
	groups := map[string][]TurnCounts{}
	for _, t := range turns {
		if t.agentCount() < 1 {
			continue
		}
		r.Recorded++
		if _, ok := groups[t.SessionKey]; !ok && t.SessionKey != "" {
			keys = append(keys, t.SessionKey)
		}
		groups[t.SessionKey] = append(groups[t.SessionKey], t)
	}
	if _, ok := groups[""]; ok {
		keys = append(keys, "")
	}
	used := map[int64]bool{}
	for _, key := range keys {
		var cand []Decision
		for _, d := range rows {
			if !used[d.ID] && (key == "" || d.SessionID == key) {
				cand = append(cand, d)
			}
		}
		for _, p := range align(groups[key], cand) {
			if p.d == nil {
				r.UnmatchedTurns = append(r.UnmatchedTurns, p.t)
				continue
			}
			used[p.d.ID] = true
			m := TurnMatch{Turn: p.t, Decision: *p.d, Diffs: compareCounts(p.t, *p.d)}
			if len(m.Diffs) > 0 {
				r.Differing++
			}
			r.Matched = append(r.Matched, m)
		}
	}
	slices.SortStableFunc(r.Matched, func(a, b TurnMatch) int { return cmp.Compare(a.Turn.Line, b.Turn.Line) })
	slices.SortStableFunc(r.UnmatchedTurns, func(a, b TurnCounts) int { return cmp.Compare(a.Line, b.Line) })
	return r
}

type pair struct {
	t TurnCounts
	d *Decision // nil: unmatched
}

// maxCells bounds the alignment's table (4 bytes a cell): beyond it, only
// the latest rows are considered.
const maxCells = 1 << 23

// align pairs turns with rows, both in order, so that the most pairs agree:
// a longest common subsequence, which lets rows of other runs lie between
// and around the run's, and a turn go without a row. Among equal pairings
// it takes the latest rows. Rows whose total_tools no turn has are dropped
// first; beyond maxCells, the oldest rows.
func align(turns []TurnCounts, rows []Decision) []pair {
	counts := map[int64]bool{}
	for _, t := range turns {
		counts[t.agentCount()] = true
	}
	rows = slices.DeleteFunc(slices.Clone(rows), func(d Decision) bool { return !counts[d.TotalTools] })
	n := len(turns)
	if n > 0 && len(rows) > maxCells/(n+1)-1 {
		rows = rows[len(rows)-(maxCells/(n+1)-1):]
	}
	m := len(rows)
	// f[i*(m+1)+j]: the most agreeing pairs of turns[i:] and rows[j:].
	w := m + 1
	f := make([]int32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			best := max(f[(i+1)*w+j], f[i*w+j+1])
			if agrees(turns[i], rows[j]) {
				best = max(best, 1+f[(i+1)*w+j+1])
			}
			f[i*w+j] = best
		}
	}
	out := make([]pair, n)
	for i := range turns {
		out[i].t = turns[i]
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case f[i*w+j+1] == f[i*w+j]: // a later row does as well
			j++
		case agrees(turns[i], rows[j]) && f[i*w+j] == 1+f[(i+1)*w+j+1]:
			out[i].d = &rows[j]
			i, j = i+1, j+1
		default:
			i++
		}
	}
	return out
}

// agrees reports whether row can be turn's decision, by the agent's own
// figures and, when the turn has a real time, the row's.
func agrees(t TurnCounts, d Decision) bool {
	if d.TotalTools != t.agentCount() {
		return false
	}
	if t.CompletionType != "" && normalize(t.CompletionType) != normalize(d.CompletionTypeReported) {
		return false
	}
	if !t.End.IsZero() && !d.TS.IsZero() && (d.TS.Before(t.End.Add(-decisionBefore)) || d.TS.After(t.End.Add(decisionAfter))) {
		return false
	}
	return true
}

// compareCounts lists the figures on which the bridge and the decision differ.
func compareCounts(t TurnCounts, d Decision) []CountDiff {
	var diffs []CountDiff
	add := func(field string, ours, theirs any) {
		if ours != theirs {
			diffs = append(diffs, CountDiff{Field: field, Bridge: ours, SkillLite: theirs})
		}
	}
	add("total_tools", t.ToolCalls, d.TotalTools)
	add("failed_tools", t.Failed, d.FailedTools)
	add("replans", t.Replans, d.Replans)
	add("task_completed", t.TaskCompleted, d.TaskCompleted)
	return diffs
}
