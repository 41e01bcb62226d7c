package inferbench

import (
	"context"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/infer"
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

// scenario returns a small simulated scenario: six tools that each fail
// half the time, hinted alike; the model follows its hints, replans with
// probability replan after every failure, and gives up on a task after 4
// calls — so a replan always finds a tool that has not failed for the task.
func scenario(tb testing.TB, replan string) *sim.Scenario {
	tb.Helper()
	sc, err := sim.Parse([]byte(`{
  "name": "t",
  "model": {"follow_hint": 1, "no_hint": 0, "random_hint": 0, "hallucinate": 0, "retries_before_replan": 0, "replan": ` + replan + `,
            "max_attempts": 4, "tasks_per_session": [1, 3]},
  "task_types": [{"name": "search", "weight": 1, "descriptions": ["Find it"], "hints": {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1}}],
  "tools": [{"name": "a", "success": {"*": 0.5}}, {"name": "b", "success": {"*": 0.5}}, {"name": "c", "success": {"*": 0.5}},
            {"name": "d", "success": {"*": 0.5}}, {"name": "e", "success": {"*": 0.5}}, {"name": "f", "success": {"*": 0.5}}]
}`))
	if err != nil {
		tb.Fatal(err)
	}
	return sc
}

func TestRunEverySwitchAReplan(t *testing.T) {
	// Every failure makes the model replan, to another tool, until its soft
	// cap of 3; later failures switch tools without a replan. So the rule
	// capped at 3 finds exactly the explicit replans.
	rule := infer.Rule{MinFailures: 1, Cap: 3}
	rep, err := Run(context.Background(), Config{
		Scenarios: []Scenario{{Name: "always", Sim: scenario(t, "1"), Tune: true}},
		TuneSeeds: []uint64{1}, ReportSeeds: []uint64{2}, Sessions: 50, Grid: []infer.Rule{rule},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.PerScenario[0].Score
	if s.Replans == 0 || s.FP != 0 || s.FN != 0 {
		t.Fatalf("Run(every switch a replan) = %+v, want explicit replans, all found, nothing else", s)
	}
	if s.TP+s.FN != s.Replans || s.TP+s.FP != s.Inferred {
		t.Fatalf("score %+v does not add up", s)
	}
}

func TestRunNoReplans(t *testing.T) {
	rep, err := Run(context.Background(), Config{
		Scenarios: []Scenario{{Name: "never", Sim: scenario(t, "0"), Tune: true}},
		TuneSeeds: []uint64{1}, ReportSeeds: []uint64{2}, Sessions: 50, Grid: []infer.Rule{{MinFailures: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.PerScenario[0].Score
	if s.Replans != 0 || s.Inferred == 0 || s.FP != s.Inferred || s.Precision() != 0 {
		t.Fatalf("Run(no replans) = %+v, want every inference a false positive", s)
	}
}

func TestRunTunesOnTuningSeedsOnly(t *testing.T) {
	grid := []infer.Rule{{MinFailures: 3}, {MinFailures: 1}}
	rep, err := Run(context.Background(), Config{
		Scenarios: []Scenario{{Name: "always", Sim: scenario(t, "1"), Tune: true}, {Name: "held", Sim: scenario(t, "0")}},
		TuneSeeds: []uint64{1}, ReportSeeds: []uint64{2}, Sessions: 30, Grid: grid,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rule.MinFailures != 1 || len(rep.Grid) != 2 || rep.Grid[1].Score.F1() <= rep.Grid[0].Score.F1() {
		t.Fatalf("tuned rule %s, grid %+v; want k=1, the better F1", rep.RuleName, rep.Grid)
	}
	if rep.Tuning.Score.Sessions != 30 || rep.Total.Score.Sessions != 60 || !rep.PerScenario[1].HeldOut {
		t.Fatalf("tuning on %d sessions, report on %d, held out %v; want 30, 60, true", rep.Tuning.Score.Sessions, rep.Total.Score.Sessions, rep.PerScenario[1].HeldOut)
	}
	if rep.PerScenario[0].Score == rep.Tuning.Score {
		t.Fatalf("report score of the tuned scenario = tuning score %+v: the report set must be other seeds", rep.Tuning.Score)
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, rep); err != nil || !strings.Contains(b.String(), "Chosen rule: **k=1 tool**") || !strings.Contains(b.String(), "| held | yes |") {
		t.Fatalf("WriteMarkdown = %q, %v", b.String(), err)
	}
}

func TestRunTieGoesToTheFirstRule(t *testing.T) {
	grid := []infer.Rule{{MinFailures: 1, Cap: 100}, {MinFailures: 1}} // the same inferences
	rep, err := Run(context.Background(), Config{
		Scenarios: []Scenario{{Name: "always", Sim: scenario(t, "1"), Tune: true}},
		TuneSeeds: []uint64{1}, ReportSeeds: []uint64{2}, Sessions: 10, Grid: grid,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rule.Cap != 100 {
		t.Fatalf("tuned rule %s on a tie, want the first, k=1 tool cap=100", rep.RuleName)
	}
}

func TestConfigValidate(t *testing.T) {
	err := Config{
		Scenarios: []Scenario{{Name: "x"}, {Name: "f", File: "a.jsonl", Tune: true}},
		TuneSeeds: []uint64{1}, ReportSeeds: []uint64{1}, Window: -1,
	}.Validate()
	for _, want := range []string{`scenario "x"`, `"f": only simulated`, "seed 1 is both", "sessions 0", "window -1", "empty grid"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}

func TestDefaultScenarios(t *testing.T) {
	scs, err := DefaultScenarios("../../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	tuned, held := 0, 0
	for _, s := range scs {
		if s.Tune {
			tuned++
		} else {
			held++
		}
	}
	if tuned != 3 || held != 4 {
		t.Fatalf("DefaultScenarios: %d tuned, %d held out; want 3 and 4", tuned, held)
	}
	ss, err := readEvents(scs[len(scs)-1].File)
	if err != nil || len(ss) == 0 {
		t.Fatalf("readEvents(%s) = %d sessions, %v", scs[len(scs)-1].File, len(ss), err)
	}
}

func TestChosenRuleValid(t *testing.T) {
	if err := ChosenRule().Validate(); err != nil {
		t.Fatalf("ChosenRule().Validate() = %v", err)
	}
}
