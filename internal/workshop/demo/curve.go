package demo

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/evosignal/evosignal/internal/metrics"
)

// WriteCurve prints the curve as a table, then the change from the first
// generation to the last and the rules learned from all generations.
func WriteCurve(w io.Writer, curve []Generation) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "generation\tsessions\tfirst-try success\tavg replans\ttool failure rate\ttokens/session\tafter a replan\tran with\tthen learned\t")
	for _, g := range curve {
		ran := "no rules"
		if g.Ruleset != nil {
			ran = fmt.Sprintf("%s (%d rules)", *g.Ruleset, len(g.Rules))
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.2f\t%s\t%.0f\t%.0f\t%s\t%s (%d rules)\t\n", g.Generation, g.Sessions,
			Pct(g.FirstTrySuccessRate), Deref(g.AvgReplans), Pct(g.FailureRate), Deref(g.TokensPerSession), Deref(g.ReplanTokensPerSession),
			ran, g.LearnedRuleset, len(g.LearnedRules))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range curve {
		if g.Planted != "" {
			fmt.Fprintf(w, "after generation %d: harmful rules planted among the learned ones: %s\n", g.Generation, g.Planted)
		}
		if g.RolledBack != "" {
			fmt.Fprintf(w, "after generation %d: %s's randomised effect was harmful: rolled back to the last good set, %s\n", g.Generation, g.RolledBack, g.LearnedRuleset)
		}
		if len(g.Retired) > 0 {
			fmt.Fprintf(w, "after generation %d: retired, each harmful by its own randomised effect: %s\n", g.Generation, strings.Join(g.Retired, ", "))
		}
	}
	if len(curve) > 1 {
		a, b := curve[0], curve[len(curve)-1]
		fmt.Fprintf(w, "\nfirst-try success %s → %s, avg replans %.2f → %.2f, tool failure rate %s → %s\n",
			Pct(a.FirstTrySuccessRate), Pct(b.FirstTrySuccessRate), Deref(a.AvgReplans), Deref(b.AvgReplans), Pct(a.FailureRate), Pct(b.FailureRate))
		fmt.Fprintf(w, "tokens per session %.0f → %.0f, of which after a replan %.0f → %.0f\n",
			Deref(a.TokensPerSession), Deref(b.TokensPerSession), Deref(a.ReplanTokensPerSession), Deref(b.ReplanTokensPerSession))
	}
	if n := len(curve); n > 0 && len(curve[n-1].LearnedRules) > 0 {
		fmt.Fprintf(w, "\nrules learned from all %d generations:\n", n)
		for _, id := range curve[n-1].LearnedRules {
			fmt.Fprintf(w, "  %s\n", id)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// Pct prints a rate as a percentage with one decimal, "-" for none.
func Pct(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**r)
}

// Deref is a rate, 0 for none.
func Deref(r *float64) float64 {
	if r == nil {
		return 0
	}
	return *r
}

// WriteEffects prints each rule set's effect on first-try success over the
// run: randomised (its rules arm against its holdout arm, always-valid
// interval) and observational (sessions that loaded it against comparable
// ones that did not).
func WriteEffects(w io.Writer, effects []Effect) error {
	if len(effects) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rule set\trule\tsessions rules / holdout\trandomised effect on first-try success\tverdict\tobservational effect")
	for _, e := range effects {
		r := e.Randomised
		rnd := "withheld: " + e.Assignment
		if e.Assignment == "ok" {
			rnd = fmt.Sprintf("%s → %s: %s %s", Pct(r.Holdout), Pct(r.Rules), pts(r.Effect), ptsCI(r.CI))
		}
		obs := "-"
		if o := e.Observational; o != nil {
			obs = fmt.Sprintf("%s → %s: %s %s", Pct(o.ControlRate), Pct(o.TreatedRate), pts(o.Difference), ptsCI(o.DifferenceCI))
		}
		rule := "(the set)"
		if e.Rule != "" {
			rule = e.Rule
		}
		fmt.Fprintf(tw, "%s\t%s\t%d / %d\t%s\t%s\t%s\n", e.Ruleset, rule, r.SessionsRules, r.SessionsHoldout, rnd, e.Verdict, obs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

func pts(d *float64) string {
	if d == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f pts", 100**d)
}

func ptsCI(ci *metrics.Interval) string {
	if ci == nil {
		return ""
	}
	return fmt.Sprintf("[%+.1f, %+.1f]", 100*ci.Lo, 100*ci.Hi)
}
