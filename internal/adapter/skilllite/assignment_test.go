package skilllite

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// TestWorkspaceAssignment: a workspace drawn under a rule set's holdout
// (DrawWorkspace, the arms ruleset.Draw gives the workspace's id) writes the
// rules it applies and records its arm; every session the translator
// bridges from that workspace reports the recorded arm, with the rule set
// and rules in the rules arm and neither in the holdout arm. Without a
// holdout the file goes and sessions report no assignment; a broken file
// is an error naming it.
func TestWorkspaceAssignment(t *testing.T) {
	rs := ruleset.RuleSet{Version: "rs-ws0000000001", Holdout: 0.5, Rules: []ruleset.Rule{
		{ID: "prefer:testing:run_command", Kind: ruleset.KindPrefer, TaskType: "testing", ToolHint: "run_command"},
		{ID: "prefer:editing:write_file", Kind: ruleset.KindPrefer, TaskType: "editing", ToolHint: "write_file", Holdout: 0.5},
	}}
	tax := taxonomy.Default()
	input, err := os.ReadFile(filepath.Join(fixtures, "no_replan.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// Workspace ids in each arm, and in the rules arm with the second rule
	// held out.
	ids := map[string]string{}
	for i := 0; len(ids) < 3; i++ {
		id := fmt.Sprint("/home/dev/project-", i)
		d := ruleset.Draw(rs, id)
		key := d.Arm
		if d.Arm == ruleset.ArmRules && len(d.Applied.Rules) == 1 {
			key = "rules, one held out"
		}
		if ids[key] == "" {
			ids[key] = id
		}
	}
	for key, id := range ids {
		t.Run(key, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.MkdirAll(filepath.Join(ws, ".skilllite"), 0o755); err != nil {
				t.Fatal(err)
			}
			applied, wa := DrawWorkspace(rs, id, tax)
			if wa == nil {
				t.Fatal("no assignment under a holdout")
			}
			if err := WriteAssignment(ws, wa); err != nil {
				t.Fatal(err)
			}
			d := ruleset.Draw(rs, id)
			if !reflect.DeepEqual(applied, d.Applied) || string(wa.Assignment.Arm) != d.Arm || wa.Assignment.Unit != events.UnitWorkspace || wa.Assignment.UnitID != id {
				t.Fatalf("drawn %+v / %+v, want the arms ruleset.Draw gives %s: %+v", applied, wa, id, d)
			}
			cfg := testConfig
			cfg.Workspace = ws
			res := translateWith(t, cfg, input)
			starts := 0
			for _, e := range res.events {
				if e.Type != events.SessionStarted {
					continue
				}
				starts++
				p, err := e.Payload()
				if err != nil {
					t.Fatal(err)
				}
				s := p.(*events.SessionStartedData)
				if s.Assignment == nil || !reflect.DeepEqual(*s.Assignment, wa.Assignment) {
					t.Errorf("assignment %+v, want %+v", s.Assignment, wa.Assignment)
				}
				wantRuleset, wantRules := "", []string(nil)
				if d.Arm == ruleset.ArmRules {
					wantRuleset, wantRules = rs.Version, d.Applied.IDs()
				}
				if s.Ruleset != wantRuleset || !slices.Equal(s.Rules, wantRules) {
					t.Errorf("ruleset %q rules %v, want %q %v", s.Ruleset, s.Rules, wantRuleset, wantRules)
				}
			}
			if starts == 0 {
				t.Fatal("no session bridged")
			}
		})
	}

	t.Run("no holdout", func(t *testing.T) {
		ws := t.TempDir()
		if err := os.MkdirAll(filepath.Join(ws, ".skilllite"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, wa := DrawWorkspace(rs, "/w", tax)
		if err := WriteAssignment(ws, wa); err != nil {
			t.Fatal(err)
		}
		plain := rs
		plain.Holdout = 0
		if _, wa := DrawWorkspace(plain, "/w", tax); wa != nil {
			t.Fatalf("assignment %+v without a holdout", wa)
		}
		if err := WriteAssignment(ws, nil); err != nil {
			t.Fatal(err)
		}
		if wa, err := ReadAssignment(ws); wa != nil || err != nil {
			t.Fatalf("ReadAssignment = %+v, %v after removing it", wa, err)
		}
	})

	t.Run("broken file", func(t *testing.T) {
		ws := t.TempDir()
		if err := os.MkdirAll(filepath.Join(ws, ".skilllite"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(AssignmentFile(ws), []byte(`{"ruleset":"rs-1","assignment":{"ruleset":"rs-1","arm":"holdout","holdout":0.1,"unit":"workspace","unit_id":"/w"}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadAssignment(ws); err == nil || !strings.Contains(err.Error(), AssignmentFile(ws)) {
			t.Errorf("ReadAssignment of a holdout arm that applies a rule set: %v, want an error naming the file", err)
		}
	})
}
