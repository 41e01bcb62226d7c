package report

import "github.com/evosignal/evosignal/internal/metrics"

// Inferred re-decisions: the rule views/inferred_redecisions.sql applies, and
// how well it matched the explicit replans of sessions whose plans were
// hidden, on the report set of cmd/inferbench (docs/inferred-replans.md,
// "all (report set)"). A test checks that the doc says the same.
const (
	inferredRule      = "k=1 tool cap=3"
	inferredPrecision = 0.709
	inferredRecall    = 0.907
	inferredDoc       = "docs/inferred-replans.md"
)

// Inferred is the section on the re-decisions of plan-less sessions,
// inferred from their tool calls: an estimate, shown apart from the counted
// replans and never part of them.
type Inferred struct {
	Estimate bool `json:"estimate"` // always true: these are inferred, not counted
	// Rule is the inference rule with its parameters (cmd/inferbench's
	// name for it); Precision and Recall are how well it matched hidden
	// explicit replans, measured as MeasuredIn says.
	Rule       string  `json:"rule"`
	Precision  float64 `json:"precision"`
	Recall     float64 `json:"recall"`
	MeasuredIn string  `json:"measured_in"`

	Current  InferredWindow `json:"current"`
	Previous InferredWindow `json:"previous"`
}

// InferredWindow is one window's plan-less sessions, as the replans
// analyzer counts them (over ended sessions).
type InferredWindow struct {
	PlanlessSessions    int64             `json:"planless_sessions"`
	InferredSessions    int64             `json:"inferred_sessions"`
	InferredRate        *float64          `json:"inferred_rate"`
	InferredRateCI      *metrics.Interval `json:"inferred_rate_ci"`
	InferredRedecisions int64             `json:"inferred_redecisions"`
	AvgInferred         *float64          `json:"avg_inferred"`
}

func newInferred(cur, prev metrics.ReplansRow) Inferred {
	return Inferred{
		Estimate: true, Rule: inferredRule, Precision: inferredPrecision, Recall: inferredRecall, MeasuredIn: inferredDoc,
		Current: inferredWindow(cur), Previous: inferredWindow(prev),
	}
}

func inferredWindow(r metrics.ReplansRow) InferredWindow {
	return InferredWindow{
		PlanlessSessions: r.PlanlessSessions, InferredSessions: r.InferredSessions,
		InferredRate: r.InferredRate, InferredRateCI: r.InferredRateCI,
		InferredRedecisions: r.InferredRedecisions, AvgInferred: r.AvgInferred,
	}
}
