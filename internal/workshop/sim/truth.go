package sim

import (
	"cmp"
	"slices"
)

// Thresholds of the ground truth's verdicts.
const (
	// SystematicHint is the probability from which a hint the model writes
	// for a type counts as systematic, not noise.
	SystematicHint = 0.10
	// WrongMargin is how far below the type's best tool a systematic
	// hint's success probability must be for the hint to be wrong: a rule
	// should avoid it.
	WrongMargin = 0.25
)

// Truth is the ground truth a scenario implies: per task type, the best
// tool and how often the model hints what. An analyzer that learns rules
// from enough simulated sessions should find an avoid rule for every Avoid
// entry (and may find the Prefer rule); it must find none against a type's
// best tool.
type Truth struct {
	Scenario string      `json:"scenario"`
	Types    []TypeTruth `json:"task_types"`
}

// TypeTruth is the ground truth of one task type.
type TypeTruth struct {
	TaskType string `json:"task_type"`
	// Share is the type's share of planned tasks.
	Share float64 `json:"share"`
	// BestTool is the tool most likely to succeed (the first in tool order
	// on a tie), and BestSuccess its success probability.
	BestTool    string  `json:"best_tool"`
	BestSuccess float64 `json:"best_success"`
	// NoHint is the probability that a task of the type is planned
	// without a hint.
	NoHint float64 `json:"no_hint"`
	// Hints are the hints the model plans tasks of the type with (before
	// any rule), most likely first.
	Hints []HintTruth `json:"hints"`
	// Avoid lists the systematic wrong hints: hinted with probability ≥
	// SystematicHint and succeeding at least WrongMargin less often than
	// BestTool.
	Avoid []string `json:"avoid"`
	// Prefer is BestTool when the model hints it with probability ≥
	// SystematicHint (a prefer rule needs many calls under the hint to be
	// learned), else "".
	Prefer string `json:"prefer,omitempty"`
}

// HintTruth is one hint the model writes for a type.
type HintTruth struct {
	Tool string `json:"tool"`
	// Probability that a task of the type is planned with this hint.
	Probability float64 `json:"probability"`
	// Success is the probability that a call of the tool succeeds in the
	// type; 0 for a tool that does not exist.
	Success float64 `json:"success"`
	// Exists is false for a hallucinated tool (the planner strips it).
	Exists bool `json:"exists"`
}

// Truth computes the ground truth of the scenario.
func (sc *Scenario) Truth() Truth {
	w := newWorld(sc)
	md := sc.Model
	var total float64
	for _, tt := range sc.TaskTypes {
		total += tt.Weight
	}
	tr := Truth{Scenario: sc.Name, Types: []TypeTruth{}}
	for _, ti := range w.types {
		t := TypeTruth{TaskType: ti.Name, Share: ti.Weight / total, NoHint: md.NoHint, Hints: []HintTruth{}, Avoid: []string{}}
		for _, tool := range w.toolNames {
			if p := sc.Success(tool, ti.Name); t.BestTool == "" || p > t.BestSuccess {
				t.BestTool, t.BestSuccess = tool, p
			}
		}
		prob := map[string]float64{}
		believed := 1 - md.NoHint - md.RandomHint - md.Hallucinate
		var sum float64
		for _, wt := range ti.weights {
			sum += wt
		}
		if sum == 0 {
			t.NoHint += believed
		}
		for i, h := range ti.hints {
			prob[h] += believed * ti.weights[i] / sum
		}
		for _, tool := range w.toolNames {
			prob[tool] += md.RandomHint / float64(len(w.toolNames))
		}
		for _, h := range md.HallucinatedTools {
			prob[h] += md.Hallucinate / float64(len(md.HallucinatedTools))
		}
		for _, h := range sortedKeys(prob) {
			if prob[h] <= 0 {
				continue
			}
			exists := slices.Contains(w.toolNames, h)
			ht := HintTruth{Tool: h, Probability: prob[h], Exists: exists}
			if exists {
				ht.Success = sc.Success(h, ti.Name)
			}
			t.Hints = append(t.Hints, ht)
			if exists && ht.Probability >= SystematicHint && ht.Success <= t.BestSuccess-WrongMargin {
				t.Avoid = append(t.Avoid, h)
			}
		}
		slices.SortStableFunc(t.Hints, func(a, b HintTruth) int { return cmp.Compare(b.Probability, a.Probability) })
		if prob[t.BestTool] >= SystematicHint {
			t.Prefer = t.BestTool
		}
		tr.Types = append(tr.Types, t)
	}
	return tr
}
