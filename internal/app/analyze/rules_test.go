package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
	"github.com/evosignal/evosignal/schema"
)

// swapArgs are thresholds low enough for the 13 coding calls and 3 swaps of
// rules_swaps.jsonl.
var swapArgs = []string{"-min-calls", "5", "-prefer-success", "0.6", "-replace-success", "0.4"}

func TestRulesGolden(t *testing.T) {
	swaps := buildEventsDB(t, nil, fixture("rules_swaps.jsonl"))
	valid := buildEventsDB(t, nil, validSessions(t)...)
	tests := []struct {
		name, golden string
		args         []string
	}{
		{"swaps", "rules_swaps.golden.json", append([]string{"-db", swaps}, swapArgs...)},
		{"swaps, one agent", "rules_swaps_skilllite.golden.json", append([]string{"-db", swaps, "-agent", "skilllite", "-since", "2025-06-01"}, swapArgs...)},
		{"swaps, default thresholds", "rules_swaps_default.golden.json", []string{"-db", swaps}},
		{"sample sessions", "rules_valid.golden.json", []string{"-db", valid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, tt.golden, runForJSON(t, append([]string{"rules"}, tt.args...)...))
		})
	}
	// SkillLite's planning rules, written into a workspace. Its hints
	// (grep, search_web) are no hints SkillLite knows: it would drop the
	// rules, so they are left out.
	ws := t.TempDir()
	if s := runForOutput(t, append([]string{"rules", "-db", swaps, "-workspace", ws}, swapArgs...)...); s != "" {
		t.Fatalf("with -workspace, stdout got %q", s)
	}
	b, err := os.ReadFile(filepath.Join(ws, ".skilllite", "planning_rules.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "rules_swaps_skilllite_format.golden.json", b)
}

// The rule set is what agent/planner loads, valid against
// schema/v1/ruleset.json.
func TestRulesLoadInPlanner(t *testing.T) {
	swaps := buildEventsDB(t, nil, fixture("rules_swaps.jsonl"))
	b := []byte(runForOutput(t, append([]string{"rules", "-db", swaps, "-format", "json"}, swapArgs...)...))
	sch, err := schema.Compile(schema.RuleSet)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("analyze rules output is not valid against %s: %v\n%s", schema.RuleSet, err, b)
	}
	rs, err := ruleset.Parse(b)
	if err != nil {
		t.Fatalf("ruleset.Parse: %v\n%s", err, b)
	}
	want := []string{"avoid:coding:search_web", "replace:coding:search_web:grep", "prefer:coding:grep"}
	if !slices.Equal(rs.IDs(), want) || rs.Version == "" {
		t.Fatalf("planner rule set %v (version %q), want %v", rs.IDs(), rs.Version, want)
	}
}

func TestRulesShape(t *testing.T) {
	swaps := buildEventsDB(t, nil, fixture("rules_swaps.jsonl"))
	checkShape(t, "rules.shape.txt",
		runForJSON(t, append([]string{"rules", "-db", swaps, "-since", "2025-06-01", "-until", "2025-07-01"}, swapArgs...)...),
		runForJSON(t, "rules", "-db", swaps, "-agent", "coder"),
	)
	checkShape(t, "rules_skilllite.shape.txt",
		[]byte(`{"rules": `+runForOutput(t, append([]string{"rules", "-db", swaps, "-skilllite"}, swapArgs...)...)+`}`),
	)
}

func TestRulesFormats(t *testing.T) {
	swaps := buildEventsDB(t, nil, fixture("rules_swaps.jsonl"))
	csv := runForOutput(t, append([]string{"rules", "-db", swaps, "-format", "csv"}, swapArgs...)...)
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 4 || lines[0] != "id,kind,task_type,tool_hint,instead,support,confidence,instruction" ||
		!strings.HasPrefix(lines[1], "avoid:coding:search_web,avoid,coding,search_web,grep,6,0.6097,") {
		t.Fatalf("csv = %q, want a header and three rules", csv)
	}
}

func TestRulesUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"rules", "-h"}, &stdout, &stderr); err != nil || !strings.Contains(stderr.String(), "-replace-success") {
		t.Fatalf("rules -h = %v, printed %q; want nil and the flags", err, stderr.String())
	}
	stderr.Reset()
	err := run(context.Background(), []string{"rules", "-by", "agent", "-format", "table", "-skilllite", "-publish", "-alpha", "2"}, &stdout, &stderr)
	if err != errUsage {
		t.Fatalf("bad flags: err = %v, want errUsage", err)
	}
	for _, want := range []string{"-by", "-skilllite writes JSON", "-publish needs -nats", "-skilllite and -publish exclude each other", "-alpha"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not mention %q", stderr.String(), want)
		}
	}
}

// -publish puts the global rule set and each agent's own into the
// key-value bucket; an agent's watcher sees them, sees a new revision only
// when a rule set changes, and sees its key deleted when its own rules are
// gone (agent/rules then falls back to the global key).
func TestRulesPublish(t *testing.T) {
	srv, _, js := testkit.Embedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	swaps := buildEventsDB(t, nil, fixture("rules_swaps.jsonl"))
	publish := func(extra ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := append([]string{"rules", "-db", swaps, "-publish", "-nats", srv.ClientURL()}, extra...)
		if err := run(ctx, args, &stdout, &stderr); err != nil {
			t.Fatalf("analyze %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stderr.String()
	}
	log := publish(swapArgs...)
	for _, want := range []string{"evosignal_rules/global revision", "evosignal_rules/skilllite revision", "evosignal_rules/coder: no rules of its own, not written"} {
		if !strings.Contains(log, want) {
			t.Errorf("publish log %q lacks %q", log, want)
		}
	}

	kv, err := js.KeyValue(ctx, "evosignal_rules")
	if err != nil {
		t.Fatalf("bucket: %v", err)
	}
	if st, err := kv.Status(ctx); err != nil || st.History() != 16 {
		t.Fatalf("bucket status %v, %v; want history 16", st, err)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sets := map[string]ruleset.RuleSet{}
	for e := range w.Updates() {
		if e == nil {
			break // the initial values are all in
		}
		rs, err := ruleset.Parse(e.Value())
		if err != nil {
			t.Fatalf("key %s: %v", e.Key(), err)
		}
		sets[e.Key()] = rs
	}
	if len(sets) != 2 || len(sets["global"].Rules) != 3 || len(sets["skilllite"].Rules) != 3 {
		t.Fatalf("watched rule sets %+v, want global and skilllite with 3 rules each", sets)
	}

	// The same rule sets again: nothing new under any key.
	before, err := kv.Get(ctx, "global")
	if err != nil {
		t.Fatal(err)
	}
	if log := publish(swapArgs...); strings.Count(log, "unchanged") != 2 {
		t.Fatalf("second publish log %q, want two keys unchanged", log)
	}
	if after, err := kv.Get(ctx, "global"); err != nil || after.Revision() != before.Revision() {
		t.Fatalf("global revision %v after an unchanged publish, want %d (%v)", after, before.Revision(), err)
	}

	// Default thresholds: no rules. The watcher sees the new, empty global
	// set and skilllite's key deleted.
	publish()
	var globalSeen, deleteSeen bool
	for !globalSeen || !deleteSeen {
		select {
		case e := <-w.Updates():
			switch {
			case e == nil:
			case e.Key() == "global":
				var rs struct {
					Version string            `json:"version"`
					Rules   []json.RawMessage `json:"rules"`
				}
				if err := json.Unmarshal(e.Value(), &rs); err != nil {
					t.Fatal(err)
				}
				if rs.Version == sets["global"].Version || len(rs.Rules) != 0 || e.Operation() != jetstream.KeyValuePut {
					t.Fatalf("update of global: version %s (was %s), %d rules; want a new version without rules", rs.Version, sets["global"].Version, len(rs.Rules))
				}
				globalSeen = true
			case e.Key() == "skilllite":
				if e.Operation() != jetstream.KeyValueDelete {
					t.Fatalf("update of skilllite: %v, want a delete", e.Operation())
				}
				deleteSeen = true
			}
		case <-ctx.Done():
			t.Fatalf("updates seen: global %v, skilllite deleted %v; want both", globalSeen, deleteSeen)
		}
	}
}

// With -agent, only that agent's key is written.
func TestRulesPublishOneAgent(t *testing.T) {
	srv, _, js := testkit.Embedded(t)
	ctx := context.Background()
	swaps := buildEventsDB(t, nil, fixture("rules_swaps.jsonl"))
	var stdout, stderr bytes.Buffer
	args := append([]string{"rules", "-db", swaps, "-agent", "skilllite", "-publish", "-nats", srv.ClientURL(), "-bucket", "team_rules", "-history", "4"}, swapArgs...)
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	kv, err := js.KeyValue(ctx, "team_rules")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys(ctx)
	if err != nil || !slices.Equal(keys, []string{"skilllite"}) {
		t.Fatalf("keys %v (%v), want [skilllite]", keys, err)
	}
}
