package metrics

import (
	"context"
	"strings"
	"testing"
)

var effectCols = strings.Fields(`kind id agent agent_version model task_type day week ruleset strata unmatched_sessions
	treated_sessions treated_successes treated_first_try treated_replanned
	control_sessions control_successes control_first_try control_replanned treated_unknown control_unknown`)

func TestEffectVerdict(t *testing.T) {
	def := DefaultEffectConfig()
	onReplan := def
	onReplan.Metric = EffectOnReplan
	onFirstTry := def
	onFirstTry.Metric = EffectOnFirstTry
	tests := []struct {
		name           string
		cfg            EffectConfig
		kt, nt, kc, nc int64 // of the deciding metric
		want           string
	}{
		{"clearly better", def, 90, 100, 50, 100, EffectHelpful},
		{"clearly worse", def, 50, 100, 90, 100, EffectHarmful},
		{"tiny samples", def, 1, 1, 0, 1, EffectUndecided},
		{"no control", def, 5, 10, 0, 0, EffectUndecided},
		{"no difference, enough sessions", def, 5000, 10000, 5000, 10000, EffectNil},
		{"no difference, too few sessions", def, 100, 199, 100, 200, EffectUndecided},
		{"no difference, interval too wide", def, 250, 500, 250, 500, EffectUndecided},
		{"reliably better but negligible", def, 60500, 100000, 60000, 100000, EffectNil},
		{"reliably worse and negligible", def, 60000, 100000, 60500, 100000, EffectHarmful},
		{"more replans are worse", onReplan, 90, 100, 50, 100, EffectHarmful},
		{"fewer replans are better", onReplan, 50, 100, 90, 100, EffectHelpful},
		{"first try decides", onFirstTry, 90, 100, 50, 100, EffectHelpful},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newEffectMetric(tt.kt, tt.nt, tt.kc, tt.nc)
			row := EffectRow{TreatedSessions: tt.nt, ControlSessions: tt.nc}
			// the other metrics are neutral; only the deciding one matters
			neutral := newEffectMetric(1, 2, 1, 2)
			row.Success, row.FirstTrySuccess, row.Replan = neutral, neutral, neutral
			switch tt.cfg.Metric {
			case EffectOnSuccess:
				row.Success = m
			case EffectOnFirstTry:
				row.FirstTrySuccess = m
			case EffectOnReplan:
				row.Replan = m
			}
			if got := effectVerdict(row, tt.cfg); got != tt.want {
				t.Fatalf("effectVerdict(%d/%d vs %d/%d on %s) = %s, want %s (interval %+v)",
					tt.kt, tt.nt, tt.kc, tt.nc, tt.cfg.Metric, got, tt.want, m.DifferenceCI)
			}
		})
	}
}

func TestEffectRows(t *testing.T) {
	row := map[string]any{"kind": "rule", "id": "r-1", "strata": int64(2), "unmatched_sessions": int64(3),
		"treated_sessions": int64(10), "treated_successes": int64(10), "treated_first_try": int64(10), "treated_replanned": int64(0),
		"control_sessions": int64(20), "control_successes": int64(5), "control_first_try": int64(5), "control_replanned": int64(15)}
	src := cannedResults{"analyze/effect.sql": cannedTable(effectCols, row)}
	res, err := Effect(context.Background(), src, Filter{}, DefaultEffectConfig())
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	if r.Kind != "rule" || r.ID != "r-1" || r.Verdict != EffectHelpful || r.Retire {
		t.Fatalf("row = %+v, want rule r-1 helpful, kept", r)
	}
	if *r.Success.Difference != 0.75 || *r.Success.DifferenceCI != *NewcombeDiff(10, 10, 5, 20, Z95) ||
		*r.Replan.Difference != -0.75 || *r.Success.ControlCI != *Wilson(5, 20, Z95) {
		t.Fatalf("success = %+v, replan = %+v", r.Success, r.Replan)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "3 treated session(s)") {
		t.Fatalf("notes = %q, want the unmatched sessions", res.Notes)
	}

	res, err = Effect(context.Background(), cannedResults{"analyze/effect.sql": cannedTable(effectCols)}, Filter{}, DefaultEffectConfig())
	if err != nil || res.Rows == nil || len(res.Rows) != 0 || len(res.Notes) != 1 {
		t.Fatalf("no rules: rows %#v, notes %q, err %v; want an empty list and a note", res.Rows, res.Notes, err)
	}
}

func TestEffectConfigValidate(t *testing.T) {
	if err := DefaultEffectConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	err := EffectConfig{MinSessions: 0, NilMargin: 1.5, Metric: "joy"}.Validate()
	for _, want := range []string{"min sessions", "nil margin", `"joy"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Validate = %v, want every problem, %q among them", err, want)
		}
	}
	if _, err := Effect(context.Background(), cannedResults{}, Filter{}, EffectConfig{}); err == nil {
		t.Fatal("Effect with a zero config succeeded, want an error")
	}
}
