package agentsim

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/internal/workshop/demo"
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

// The closed loop on the default scenario: rules learned from generation 1
// fix the model's systematic wrong hints, so generation 3 does clearly
// better; the rules learned are the ones the ground truth calls for.
func TestDemoImproves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	out, errOut, err := runCmd(t, "demo", "-generations", "3", "-sessions", "300", "-seed", "7", "-json", "-dir", dir)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, errOut)
	}
	var curve []demo.Generation
	if err := json.Unmarshal([]byte(out), &curve); err != nil {
		t.Fatalf("demo -json printed no JSON array: %v\n%s", err, out)
	}
	if len(curve) != 3 {
		t.Fatalf("%d generations, want 3", len(curve))
	}
	for i, g := range curve {
		if g.Generation != i+1 || g.Sessions != 300 || g.FirstTrySuccessRate == nil || g.AvgReplans == nil || g.FailureRate == nil {
			t.Fatalf("generation %d: %+v, want 300 sessions and every rate", i+1, g)
		}
	}
	g1, g2, g3 := curve[0], curve[1], curve[2]
	t.Logf("first-try %.3f → %.3f → %.3f; replans %.3f → %.3f → %.3f; failures %.3f → %.3f → %.3f",
		*g1.FirstTrySuccessRate, *g2.FirstTrySuccessRate, *g3.FirstTrySuccessRate,
		*g1.AvgReplans, *g2.AvgReplans, *g3.AvgReplans, *g1.FailureRate, *g2.FailureRate, *g3.FailureRate)
	if *g3.FirstTrySuccessRate < *g1.FirstTrySuccessRate+0.15 {
		t.Errorf("first-try success %.3f in generation 1, %.3f in 3: want at least 0.15 more", *g1.FirstTrySuccessRate, *g3.FirstTrySuccessRate)
	}
	if *g3.AvgReplans > *g1.AvgReplans*0.6 {
		t.Errorf("avg replans %.3f in generation 1, %.3f in 3: want at most 60%%", *g1.AvgReplans, *g3.AvgReplans)
	}
	if *g3.FailureRate >= *g1.FailureRate {
		t.Errorf("tool failure rate %.3f in generation 1, %.3f in 3: want lower", *g1.FailureRate, *g3.FailureRate)
	}

	// Generation 1 ran without rules; each later one with what was
	// learned before it, as recorded in agent.session.started.
	if g1.Ruleset != nil || len(g1.Rules) != 0 {
		t.Errorf("generation 1 ran with %v %v, want no rules", *g1.Ruleset, g1.Rules)
	}
	for i, g := range curve[1:] {
		prev := curve[i]
		if g.Ruleset == nil || *g.Ruleset != prev.LearnedRuleset || !slices.Equal(g.Rules, prev.LearnedRules) {
			t.Errorf("generation %d ran with %v %v, want %s %v", g.Generation, g.Ruleset, g.Rules, prev.LearnedRuleset, prev.LearnedRules)
		}
	}

	// The rules match the ground truth: an avoid rule for each systematic
	// wrong hint, none against a type's best tool.
	learned := curve[2].LearnedRules
	for _, tt := range sim.Default().Truth().Types {
		for _, tool := range tt.Avoid {
			if id := "avoid:" + tt.TaskType + ":" + tool; !slices.Contains(learned, id) {
				t.Errorf("learned %v, missing %s", learned, id)
			}
		}
		if id := "avoid:" + tt.TaskType + ":" + tt.BestTool; slices.Contains(learned, id) {
			t.Errorf("learned %s, against the best tool of %s", id, tt.TaskType)
		}
	}

	// The paths went to stderr; the database holds every session and is
	// closed (another handle can open it).
	db := filepath.Join(dir, "evosignal.duckdb")
	if !strings.Contains(errOut, "database:") || !strings.Contains(errOut, db) {
		t.Errorf("stderr does not name the database %s:\n%s", db, errOut)
	}
	conn, err := sql.Open("duckdb", db+"?access_mode=read_only")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var sessions, ended int
	if err := conn.QueryRowContext(context.Background(), `SELECT count(*), count(*) FILTER (WHERE has_end) FROM sessions`).Scan(&sessions, &ended); err != nil {
		t.Fatal(err)
	}
	if sessions != 900 || ended != 900 {
		t.Errorf("database holds %d sessions (%d ended), want 900", sessions, ended)
	}

	// A second demo into the same directory is refused.
	if _, _, err := runCmd(t, "demo", "-generations", "1", "-dir", dir); err == nil || !strings.Contains(err.Error(), "previous demo") {
		t.Errorf("demo into a used directory = %v, want a refusal", err)
	}
}

func TestDemoTable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	out, errOut, err := runCmd(t, "demo", "-generations", "2", "-sessions", "60", "-dir", dir,
		"-scenario", "../../../testdata/agentsim/minimal.json")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, errOut)
	}
	for _, w := range []string{"first-try success", "avg replans", "tool failure rate", "no rules", "database:", "jetstream:"} {
		if !strings.Contains(out, w) {
			t.Errorf("demo printed\n%s\nwant it to contain %q", out, w)
		}
	}
	for _, w := range []string{"generation 1/2: simulating 60 sessions", "ingested", "generation 2/2"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("progress on stderr\n%s\nwant it to contain %q", errOut, w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "jetstream")); err != nil {
		t.Errorf("no JetStream store in the demo directory: %v", err)
	}
}
