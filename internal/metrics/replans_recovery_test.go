package metrics

import (
	"context"
	"math"
	"testing"
)

// withinSE fails unless got is within 4 standard errors of want.
func withinSE(tb testing.TB, what string, got *float64, want, se float64) {
	tb.Helper()
	if got == nil {
		tb.Fatalf("%s = null, want %.4f", what, want)
	}
	if se <= 0 || math.IsNaN(se) {
		tb.Fatalf("%s: standard error %v", what, se)
	}
	tb.Logf("%s z=%.2f got %.4f want %.4f", what, (*got-want)/se, *got, want)
	if math.Abs(*got-want) > 4*se {
		tb.Fatalf("%s = %.4f, want %.4f ± 4×%.4f (|z| = %.1f)", what, *got, want, se, math.Abs(*got-want)/se)
	}
}

// seOfProp is the standard error of a proportion p estimated from n trials.
func seOfProp(p float64, n int64) float64 { return math.Sqrt(p * (1 - p) / float64(n)) }

// TestRecoversKnownProbabilities generates sessions with known
// probabilities (popTestModel, seeded: the test is deterministic) and checks
// that replans, trend and effect recover each of them within 4 standard
// errors.
func TestRecoversKnownProbabilities(t *testing.T) {
	m := popTestModel()
	src := popDB(t, m, 20250602)
	ctx := context.Background()
	dist := m.replanDist()
	var meanK, meanK2 float64 // E[k], E[k²] given a replan
	for k, p := range dist {
		meanK += float64(k) * p
		meanK2 += float64(k*k) * p
	}
	pAtLeast := func(n int) float64 { // P(k ≥ n | a replan)
		var s float64
		for k := max(n, 1); k < len(dist); k++ {
			s += dist[k]
		}
		return s
	}

	t.Run("replans by task type", func(t *testing.T) {
		res, err := Replans(ctx, src, Filter{By: []string{"task_type"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != len(m.Types) {
			t.Fatalf("rows = %d, want one per task type (%d)", len(res.Rows), len(m.Types))
		}
		var open, ended, mismatch int64
		for _, row := range res.Rows {
			name := ""
			if row.TaskType.Value() != nil {
				name = row.TaskType.String()
			}
			var tt popType
			for _, x := range m.Types {
				if x.Name == name {
					tt = x
				}
			}
			is := func(c popCell) bool { return c.t.Name == name }
			n := row.Sessions
			pr := tt.ReplanProb
			withinSE(t, name+" replan_rate", row.ReplanRate, pr, seOfProp(pr, n))
			meanX, varX := pr*meanK, pr*meanK2-pr*meanK*pr*meanK
			withinSE(t, name+" avg_replans", row.AvgReplans, meanX, math.Sqrt(varX/float64(n)))
			ps := m.expect(is, m.success)
			withinSE(t, name+" success_rate", row.SuccessRate, ps, seOfProp(ps, n))
			pf := ps * (1 - pr) * (1 - m.InvalidProb)
			withinSE(t, name+" first_try_success_rate", row.FirstTrySuccessRate, pf, seOfProp(pf, n))
			po := pr * ((1-m.InvalidProb)*pAtLeast(3) + m.InvalidProb*pAtLeast(2))
			withinSE(t, name+" over_cap_rate", row.OverCapRate, po, seOfProp(po, n))
			sh := m.StripProbs[1] + 2*m.StripProbs[2]
			shVar := m.StripProbs[1] + 4*m.StripProbs[2] - sh*sh
			withinSE(t, name+" stripped_hints_per_session", row.StrippedHintsPerSession, sh, math.Sqrt(shVar/float64(n)))
			for _, b := range row.SuccessByReplans[:2] { // success does not depend on replans
				withinSE(t, name+" success after "+b.Replans+" replans", b.SuccessRate, ps, seOfProp(ps, b.Sessions))
			}
			if row.Triggers.Model != row.InvalidReplans || row.Triggers.ToolFailures != row.ValidReplans {
				t.Fatalf("%s triggers = %+v, want model = invalid (%d), tool_failures = valid (%d)", name, row.Triggers, row.InvalidReplans, row.ValidReplans)
			}
			withinSE(t, name+" median_ms_to_first_replan", row.MedianMSToFirstReplan,
				float64((m.FirstReplanMin+m.FirstReplanMax)/2/1e6),
				float64((m.FirstReplanMax-m.FirstReplanMin)/1e6)/(2*math.Sqrt(float64(row.Sessions)*(1-(1-pr)*(1-m.InvalidProb)))))
			open += row.OpenSessions
			ended += row.Sessions
			mismatch += row.ReportedReplansMismatch
		}
		withinSE(t, "open share", Rate(open, open+ended), m.OpenProb, seOfProp(m.OpenProb, open+ended))
		withinSE(t, "mismatch share", Rate(mismatch, ended), m.MisreportProb, seOfProp(m.MisreportProb, ended))
	})

	t.Run("trend per day", func(t *testing.T) {
		rows, err := Trend(ctx, src, Filter{}, EveryDay)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != m.Days {
			t.Fatalf("rows = %d, want %d days", len(rows), m.Days)
		}
		for d, row := range rows {
			if want := m.Start.AddDate(0, 0, d).Format("2006-01-02"); row.Period != want {
				t.Fatalf("row %d period = %s, want %s", d, row.Period, want)
			}
			on := func(c popCell) bool { return c.day == d }
			ps := m.expect(on, m.success)
			withinSE(t, row.Period+" success_rate", row.SuccessRate, ps, seOfProp(ps, row.Sessions))
			pf := m.expect(on, func(c popCell) float64 { return m.success(c) * (1 - c.t.ReplanProb) * (1 - m.InvalidProb) })
			withinSE(t, row.Period+" first_try_success_rate", row.FirstTrySuccessRate, pf, seOfProp(pf, row.Sessions))
			pr := m.expect(on, func(c popCell) float64 { return c.t.ReplanProb })
			withinSE(t, row.Period+" replan_rate", row.ReplanRate, pr, seOfProp(pr, row.Sessions))
			fail := m.ToolFailProb + m.ToolFailDayShift*float64(d)
			withinSE(t, row.Period+" tool_failure_rate", row.ToolFailureRate, fail, seOfProp(fail, row.RealToolCalls))
			sh := m.StripProbs[1] + 2*m.StripProbs[2] // every generated strip is a hallucinated hint
			shVar := m.StripProbs[1] + 4*m.StripProbs[2] - sh*sh
			withinSE(t, row.Period+" hallucinated_hints_per_session", row.HallucinatedHintsPerSession, sh, math.Sqrt(shVar/float64(row.Sessions)))
			if len(row.Rulesets) != 1 || row.Rulesets[0] != "rs-gen" {
				t.Fatalf("%s rulesets = %v, want [rs-gen]", row.Period, row.Rulesets)
			}
		}
	})

	t.Run("effect", func(t *testing.T) {
		cfg := EffectConfig{MinSessions: 300, NilMargin: 0.1, Metric: EffectOnSuccess}
		res, err := Effect(ctx, src, Filter{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"ruleset rs-gen": EffectNil, "rule r-help": EffectHelpful, "rule r-harm": EffectHarmful, "rule r-nil": EffectNil}
		if len(res.Rows) != len(want) {
			t.Fatalf("rows = %d, want %d", len(res.Rows), len(want))
		}
		for _, row := range res.Rows {
			treated := func(c popCell) bool { return c.rule >= 0 }
			if row.Kind == "rule" {
				r := -1
				for i, x := range m.Rules {
					if x.ID == row.ID {
						r = i
					}
				}
				treated = func(c popCell) bool { return c.rule == r }
			}
			control := func(c popCell) bool { return !treated(c) }
			p1, p0 := m.expect(treated, m.success), m.expect(control, m.success)
			se := math.Sqrt(p1*(1-p1)/float64(row.TreatedSessions) + p0*(1-p0)/float64(row.ControlSessions))
			name := row.Kind + " " + row.ID
			withinSE(t, name+" treated success", row.Success.TreatedRate, p1, seOfProp(p1, row.TreatedSessions))
			withinSE(t, name+" success difference", row.Success.Difference, p1-p0, se)
			if row.Verdict != want[name] || row.Retire != (want[name] != EffectHelpful) {
				t.Fatalf("%s: verdict %s, retire %v; want %s (difference %.3f, interval %+v)",
					name, row.Verdict, row.Retire, want[name], *row.Success.Difference, *row.Success.DifferenceCI)
			}
			if row.Strata != int64(len(m.Types)) || row.UnmatchedSessions != 0 {
				t.Fatalf("%s: strata %d, unmatched %d; want %d, 0", name, row.Strata, row.UnmatchedSessions, len(m.Types))
			}
		}
	})
}
