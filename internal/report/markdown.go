package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/evosignal/evosignal/internal/metrics"
)

// WriteMarkdown writes the report as Markdown: the same numbers as the
// JSON, as a headline and tables.
func WriteMarkdown(w io.Writer, r *Report) error {
	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	row := func(cells ...string) {
		for i, c := range cells {
			cells[i] = mdCell(c)
		}
		p("| %s |\n", strings.Join(cells, " | "))
	}
	head := func(cells ...string) {
		row(cells...)
		p("|%s\n", strings.Repeat("---|", len(cells)))
	}

	p("# evosignal report\n\n")
	p("> **%s**\n\n", mdCell(r.Headline.Text))
	p("Window: %s.", r.windowLine())
	if f := r.filterLine(); f != "" {
		p(" Only %s.", f)
	}
	p(" Generated %s.\n\n", stamp(r.GeneratedAt))

	p("## Summary\n\n")
	head("", "last "+r.Window.Length, "previous "+r.Window.Length, "change", "95% CI of the change", "")
	for _, m := range r.Headline.Metrics {
		row(m.Label, propText(m.Current), propText(m.Previous), ptsOf(m.Change), ptsCI(m.ChangeCI), m.Assessment)
	}
	s := r.Headline.Sessions
	row("Ended sessions", fmt.Sprint(s.Current), fmt.Sprint(s.Previous), "", "", "")
	row("Open sessions", fmt.Sprint(s.OpenCurrent), fmt.Sprint(s.OpenPrevious), "", "", "")
	row("Unknown outcome (ended, left out of the success rates)", fmt.Sprint(s.UnknownCurrent), fmt.Sprint(s.UnknownPrevious), "", "", "")
	p("\n")
	for _, g := range r.glance() {
		p("- %s\n", g)
	}
	p("\n")

	p("## Evolution curve\n\n")
	p("Per %s since %s (the last period may be partial).\n\n", r.Settings.Every, r.curveSince())
	if len(r.Trend) == 0 {
		p("No session started in these periods.\n\n")
	} else {
		head("period", "sessions", "unknown outcome", "first-try success", "success", "replan rate", "avg replans", "tool failure rate", "hallucinated hints / session", "rule sets")
		for _, t := range r.Trend {
			row(trendLabel(t.Period, r.Settings.Every), fmt.Sprint(t.Sessions), fmt.Sprint(t.UnknownOutcome), pct(t.FirstTrySuccessRate), pct(t.SuccessRate),
				pct(t.ReplanRate), num2(t.AvgReplans), pct(t.ToolFailureRate), num2(t.HallucinatedHintsPerSession), rulesetsText(t.Rulesets, t.NoRulesetSessions))
		}
		p("\n")
	}

	p("## Worst hints\n\n")
	p("Per task type, over the window's real tool calls: hints with at least %d calls that fail more often than the type's other calls, worst lift first; n.s.: p ≥ %g.\n\n", r.Settings.MinCalls, r.Settings.Thresholds.Alpha)
	if len(r.WorstHints) == 0 {
		p("None.\n\n")
	} else {
		head("task type", "hint", "calls", "failure rate", "95% CI", "other calls fail", "lift", "p", "followed", "dropped", "stripped")
		for _, h := range r.WorstHints {
			row(str(h.TaskType.Value()), str(h.Hint), fmt.Sprint(h.Calls), pct(h.FailureRate), pctCI(h.FailureCI), pct(h.OtherFailureRate),
				ratio(h.Lift), r.pText(h), pct(h.FollowedRate), fmt.Sprintf("%d of %d planned", h.Dropped, h.Planned), fmt.Sprint(h.Stripped))
		}
		p("\n")
	}

	p("## Task type → tool\n\n")
	p("Real tool calls since %s (%d windows of %s); stable: the same top tool with at least %.0f%% of the calls in each window.\n\n",
		stamp(r.Settings.MappingSince), r.Settings.MappingWindows, r.Window.Length, 100*r.Settings.StableShare)
	if len(r.Mappings) == 0 {
		p("No tool calls.\n\n")
	} else {
		head("task type", "calls", "top tool", "share", "success", "this window", "stable", "tools")
		for _, m := range r.Mappings {
			row(str(m.TaskType.Value()), fmt.Sprint(m.Calls), str(m.TopTool), pct(m.TopShare), pct(m.SuccessRate), windowTop(m), yesNo(m.Stable), toolsText(m))
		}
		p("\n")
	}

	p("## Rules\n\n")
	p("Learned with the rules analyzer from the sessions %s: now %s (%d rules), at the window's start %s (%d rules).\n\n",
		r.rulesFrom(), r.Rules.Current.Version, len(r.Rules.Current.Rules), r.Rules.Previous.Version, len(r.Rules.Previous.Rules))
	p("### New (%d)\n\n", len(r.Rules.New))
	if len(r.Rules.New) > 0 {
		head("rule", "instruction", "support", "confidence", "evidence")
		for _, x := range r.Rules.New {
			row(x.ID, x.Instruction, fmt.Sprint(x.Support), fmt.Sprintf("%.3f", x.Confidence), evidenceLine(x))
		}
		p("\n")
	}
	p("### To retire (%d)\n\n", len(r.Rules.Retired))
	if len(r.Rules.Retired) > 0 {
		head("rule", "kind", "why", "last evidence")
		for _, x := range r.Rules.Retired {
			ev := ""
			if x.Rule != nil {
				ev = evidenceLine(*x.Rule)
			}
			row(x.ID, x.Kind, retireWhy(x), ev)
		}
		p("\n")
	}

	p("## Rule effects\n\n")
	if len(r.RandomisedEffects) > 0 {
		p("**Randomised** — each rule set's rules arm against its holdout arm (sessions assigned at random by the agent), and each rule with a holdout of its own (its set's rules arm applying it against holding it out), with always-valid 95%% intervals; verdict on %s.\n\n", r.Settings.Metric)
		head("rule set", "rule", "sessions rules / holdout", "holdout share (expected)", "assignment", "rules", "holdout", "difference", "always-valid 95% CI", "verdict")
		for _, x := range r.RandomisedEffects {
			m := randomisedOf(x, r.Settings.Metric)
			rule := "(the set)"
			if x.Rule != "" {
				rule = "`" + x.Rule + "`"
			}
			row("`"+x.Ruleset+"`", rule, fmt.Sprintf("%d / %d", x.SessionsRules, x.SessionsHoldout), fmt.Sprintf("%s (%.0f%%)", pct(x.HoldoutShare), 100*x.Holdout),
				assignmentText(x), pct(m.Rules), pct(m.Holdout), ptsOf(m.Effect), ptsCI(m.CI), verdictText(x.Verdict))
		}
		p("\n**Observational** — sessions that loaded a rule set or rule against comparable sessions that did not.\n\n")
	}
	p("Sessions started since %s that applied each rule set or rule against comparable sessions that did not; verdict on %s (no effect: both arms ≥ %d sessions and the interval inside ±%.1f pts, too small to matter).\n\n",
		stamp(r.Settings.EffectSince), r.Settings.Metric, r.Settings.MinSessions, 100*r.Settings.NilMargin)
	if len(r.Effects) == 0 {
		p("No ended session applied a rule set or a rule.\n\n")
	} else {
		head("kind", "id", "treated", "control", "unknown outcome (treated / control)", "treated rate", "control rate", "difference", "95% CI", "verdict")
		for _, e := range r.Effects {
			m := effectOf(e, r.Settings.Metric)
			row(e.Kind, e.ID, fmt.Sprint(e.TreatedSessions), fmt.Sprint(e.ControlSessions),
				fmt.Sprintf("%d / %d", e.TreatedUnknownOutcome, e.ControlUnknownOutcome), pct(m.TreatedRate), pct(m.ControlRate),
				ptsOf(m.Difference), ptsCI(m.DifferenceCI), verdictText(e.Verdict))
		}
		p("\n")
	}

	p("## What sessions cost\n\n")
	p("Per ended session: model calls and tokens (input + output, from `agent.model.called`), real tool calls and time, with 95%% intervals of the means; `analyze cost` has the sums and `-view segments`, `-view after-failure`.\n\n")
	if len(r.Cost.Outcomes)+len(r.Cost.PreviousOutcomes) == 0 {
		p("No session of a known outcome ended in either window.\n\n")
	} else {
		head("outcome", "sessions", "model calls", "tokens", "tool calls", "seconds", "previous: sessions", "previous: tokens")
	}
	for _, class := range []string{"first_try_success", "success_after_replans", "failure"} {
		c, pv := byOutcome(r.Cost.Outcomes, class), byOutcome(r.Cost.PreviousOutcomes, class)
		if c == nil && pv == nil {
			continue
		}
		cells := []string{outcomeClassText(class), "0", "–", "–", "–", "–", "0", "–"}
		if c != nil {
			cells[1], cells[2], cells[3] = fmt.Sprint(c.Sessions), num2(c.ModelCallsMean)+" "+meanCI2(c.ModelCallsMeanCI), num0(c.TokensMean)+" "+meanCI(c.TokensMeanCI)
			cells[4], cells[5] = num2(c.RealToolCallsMean), num0(seconds(c.DurationMSMean))
		}
		if pv != nil {
			cells[6], cells[7] = fmt.Sprint(pv.Sessions), num0(pv.TokensMean)
		}
		row(cells...)
	}
	if len(r.Cost.Outcomes)+len(r.Cost.PreviousOutcomes) > 0 {
		p("\n")
	}
	if len(r.Cost.Segments) > 0 {
		head("plan segment", "sessions", "segments", "model calls / session", "tokens / session", "tool calls / session", "failed tool calls")
		for _, sg := range r.Cost.Segments {
			row(segmentText(sg.Segment), fmt.Sprint(sg.Sessions), fmt.Sprint(sg.Segments), num2(sg.ModelCallsPerSession), num0(sg.TokensPerSession),
				num2(sg.RealToolCallsPerSession), fmt.Sprint(sg.FailedToolCalls))
		}
		p("\n")
	}
	if len(r.Cost.ByRuleset) > 0 {
		p("Per rule set since %s: what replanning costs (the part after a session's first replan, over all its sessions).\n\n", stamp(r.Settings.TrendSince))
		head("rule set", "sessions", "model calls / session", "after a replan", "tokens / session", "after a replan")
		for _, x := range r.Cost.ByRuleset {
			row(rulesetName(x.Ruleset), fmt.Sprint(x.Sessions), num2(x.ModelCallsPerSession), num2(x.ReplanModelCallsPerSession),
				num0(x.TokensPerSession), num0(x.ReplanTokensPerSession))
		}
		p("\n")
	}

	p("## Where agents get stuck\n\n")
	p("Each state as `queries/analyze/stuck_states.sql` defines it; the rate is over ended sessions, recovered the stuck sessions that still succeeded.\n\n")
	head("state", "sessions in it", "occurrences", "most often after", "recovered", "previous "+r.Window.Length)
	for i, st := range r.Stuck.States {
		prevRate := "–"
		if i < len(r.Stuck.Previous) {
			prevRate = pct(r.Stuck.Previous[i].Rate)
		}
		row(stateText(st.State), fmt.Sprintf("%d (%s) %s", st.StuckSessions, pct(st.Rate), pctCI(st.RateCI)), fmt.Sprint(st.Occurrences),
			str(st.TopDetail), fmt.Sprintf("%d (%s)", st.Recovered, pct(st.RecoveryRate)), prevRate)
	}
	p("\n")
	if len(r.Stuck.Examples) > 0 {
		head("state", "example session", "agent", "outcome", "occurrences", "first at seq", "after")
		for _, e := range r.Stuck.Examples {
			row(e.State, "`"+e.Session+"`", e.Agent, e.Outcome, fmt.Sprint(e.Occurrences), fmt.Sprint(e.Seq), str(e.Detail))
		}
		p("\n")
	}
	if len(r.Stuck.Triggers) > 0 {
		p("Replan triggers, as the events before each replan show them, and how often the replanned sessions then succeeded.\n\n")
		head("visible trigger", "replans", "sessions", "then succeeded")
		for _, t := range r.Stuck.Triggers {
			row(t.Trigger, fmt.Sprint(t.Replans), fmt.Sprint(t.Sessions), pct(t.SuccessRate)+" "+pctCI(t.SuccessRateCI))
		}
		p("\n")
	}

	p("## Inferred re-decisions (estimate)\n\n")
	in := r.Inferred
	p("Sessions without a plan have no replan to count; their changes of course are inferred from their tool calls (rule %s: a switch to another tool after a failed call, at most 3 per session). "+
		"An estimate, never part of the replan rate above: on sessions whose explicit replans were hidden it had precision %.3f and recall %.3f (%s).\n\n",
		in.Rule, in.Precision, in.Recall, in.MeasuredIn)
	head("", "last "+r.Window.Length, "previous "+r.Window.Length)
	row("Ended sessions without a plan", fmt.Sprint(in.Current.PlanlessSessions), fmt.Sprint(in.Previous.PlanlessSessions))
	row("With an inferred re-decision", inferredRateText(in.Current), inferredRateText(in.Previous))
	row("Inferred re-decisions per session", num2(in.Current.AvgInferred), num2(in.Previous.AvgInferred))
	p("\n")

	p("## Data quality\n\n")
	q := r.DataQuality
	p("- Dead letters received in the window: %d\n", q.DeadLetters)
	p("- Open sessions (started in the window, never ended): %d\n", q.OpenSessions)
	p("- Sessions whose reported replan count differs from their replan events: %d\n\n", q.ReportedReplansMismatch)
	if len(q.DeadLettersByReason) > 0 {
		head("reason", "dead letters", "latest", "latest reason")
		for _, d := range q.DeadLettersByReason {
			row(d.ReasonCode, fmt.Sprint(d.DeadLetters), stamp(d.LatestAt), d.LatestReason)
		}
		p("\n")
	}
	for _, n := range q.Notes {
		p("- Note: %s\n", mdCell(n))
	}
	if len(q.Notes) > 0 {
		p("\n")
	}
	p("---\n\nevosignal `analyze report`, report version %d, classifier `%s`. The numbers come from the analyzers (`analyze replans`, `trend`, `hints`, `mappings`, `rules`, `effect`, `cost`, `stuck`); see docs/analyze.md.\n",
		r.Version, r.Classifier)
	return b.Flush()
}

// pText is a hint's p-value, marked n.s. when it is not below alpha.
func (r *Report) pText(h metrics.HintRow) string {
	if r.weak(h) {
		return pValue(h.PValue) + " (n.s.)"
	}
	return pValue(h.PValue)
}

// mdCell makes s safe in a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func propText(p Proportion) string {
	if p.Rate == nil {
		return "–"
	}
	if p.UnknownOutcome > 0 {
		return fmt.Sprintf("%s (%d of %d; %d of unknown outcome left out)", pct(p.Rate), p.Count, p.Sessions, p.UnknownOutcome)
	}
	return fmt.Sprintf("%s (%d of %d)", pct(p.Rate), p.Count, p.Sessions)
}

func num2(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *v)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// inferredRateText is the share of plan-less sessions with an inferred
// re-decision, with its counts and interval.
func inferredRateText(w InferredWindow) string {
	if w.InferredRate == nil {
		return "–"
	}
	return fmt.Sprintf("%s (%d of %d) %s", pct(w.InferredRate), w.InferredSessions, w.PlanlessSessions, pctCI(w.InferredRateCI))
}
