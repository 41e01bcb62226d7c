package infer

// Score counts how inferred re-decisions match explicit replans.
type Score struct {
	Sessions int `json:"sessions"`
	Replans  int `json:"explicit_replans"`
	Inferred int `json:"inferred"`
	TP       int `json:"true_positives"`  // inferred, matching an explicit replan
	FP       int `json:"false_positives"` // inferred, matching none
	FN       int `json:"false_negatives"` // explicit, matched by none
}

// Add adds o to s.
func (s *Score) Add(o Score) {
	s.Sessions += o.Sessions
	s.Replans += o.Replans
	s.Inferred += o.Inferred
	s.TP += o.TP
	s.FP += o.FP
	s.FN += o.FN
}

// Precision is TP / inferred (1 with nothing inferred).
func (s Score) Precision() float64 {
	if s.Inferred == 0 {
		return 1
	}
	return float64(s.TP) / float64(s.Inferred)
}

// Recall is TP / explicit replans (1 with none).
func (s Score) Recall() float64 {
	if s.Replans == 0 {
		return 1
	}
	return float64(s.TP) / float64(s.Replans)
}

// F1 is the harmonic mean of precision and recall.
func (s Score) F1() float64 {
	p, r := s.Precision(), s.Recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// Match scores one session: each inferred re-decision is matched with at
// most one explicit replan whose position is within window calls of its
// At, and each replan with at most one re-decision, in order (both lists
// are in order, so the earliest unmatched candidate is taken).
func Match(inferred []Redecision, replans []int, window int) Score {
	s := Score{Sessions: 1, Replans: len(replans), Inferred: len(inferred)}
	j := 0
	for _, r := range inferred {
		for j < len(replans) && replans[j] < r.At-window {
			j++ // too early for this and every later re-decision
		}
		if j < len(replans) && replans[j] <= r.At+window {
			s.TP++
			j++
		}
	}
	s.FP = s.Inferred - s.TP
	s.FN = s.Replans - s.TP
	return s
}

// Evaluate runs r over sessions and scores them against their explicit
// replans.
func Evaluate(r Rule, sessions []Session, window int) Score {
	var total Score
	for _, s := range sessions {
		total.Add(Match(r.Infer(s.Calls), s.Replans, window))
	}
	return total
}
