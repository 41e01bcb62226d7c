package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/workshop/sim"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestRulesPublishGuard: the bucket holds a good rule set, then a harmful
// one whose sessions (20% held out) show it harmful on first-try success;
// analyze rules -publish puts the good one back, with the evidence, in
// place of what it learned.
func TestRulesPublishGuard(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sc := sim.Default()
	var good, harm []ruleset.Rule
	for _, tt := range sc.Truth().Types {
		good = append(good, ruleset.Rule{ID: "prefer:" + tt.TaskType + ":" + tt.BestTool, Kind: ruleset.KindPrefer, TaskType: tt.TaskType, ToolHint: tt.BestTool})
		worst := ""
		for _, tool := range sc.Tools {
			if tool.Name != tt.BestTool && (worst == "" || sc.Success(tool.Name, tt.TaskType) < sc.Success(worst, tt.TaskType)) {
				worst = tool.Name
			}
		}
		harm = append(harm, ruleset.Rule{ID: "avoid:" + tt.TaskType + ":" + tt.BestTool, Kind: ruleset.KindAvoid, TaskType: tt.TaskType, ToolHint: tt.BestTool, Instead: worst})
	}
	goodSet := ruleset.RuleSet{Version: "rs-good", Holdout: 0.2, Rules: good}
	harmSet := ruleset.RuleSet{Version: "rs-harm", Holdout: 0.2, Rules: harm}

	d := testdb.New(t, testdb.Options{})
	d.Load(t, testdb.Generate(t, "harmful", func(ctx context.Context, sink agent.Sink) error {
		_, err := sim.Run(ctx, sim.Config{Scenario: sc, Seed: 4, Sessions: 800, Concurrency: 2, Ordered: true,
			Rules: func(string) ruleset.RuleSet { return harmSet }}, sink)
		return err
	}))
	db := d.Close(t)

	srv, _, js := testkit.Embedded(t)
	var stdout, stderr bytes.Buffer
	// Create the bucket the way -publish does, then hold good, then harmful.
	if err := run(ctx, []string{"rules", "-db", db, "-publish", "-nats", srv.ClientURL(), "-guard", "off"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	kv, err := js.KeyValue(ctx, ruleset.DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range []ruleset.RuleSet{goodSet, harmSet} {
		b, _ := json.Marshal(rs)
		if _, err := kv.Put(ctx, ruleset.GlobalKey, b); err != nil {
			t.Fatal(err)
		}
	}
	stderr.Reset()
	if err := run(ctx, []string{"rules", "-db", db, "-publish", "-nats", srv.ClientURL(), "-guard", "first_try_success"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "rs-harm's randomised effect on first_try_success is harmful") || !strings.Contains(stderr.String(), "rolled back to rs-good") {
		t.Errorf("publish log %q: want the rollback named", stderr.String())
	}
	e, err := kv.Get(ctx, ruleset.GlobalKey)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ruleset.Parse(e.Value())
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "rs-good" || got.RolledBack == nil || got.RolledBack.Version != "rs-harm" || !(got.RolledBack.Hi < 0) || got.RolledBack.SessionsHoldout == 0 {
		t.Errorf("global now holds %s with rollback %+v: want rs-good, rolling back rs-harm with its evidence", got.Version, got.RolledBack)
	}
}
