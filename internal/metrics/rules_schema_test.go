package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/schema"
)

// checkRuleSetSchema checks that rs, as the producer encodes it, is valid
// against schema/v1/ruleset.json, and that an agent parses it back.
func checkRuleSetSchema(tb testing.TB, rs *ruleset.RuleSet) {
	tb.Helper()
	sch, err := schema.Compile(schema.RuleSet)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := json.Marshal(rs)
	if err != nil {
		tb.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		tb.Errorf("rule set %s is not valid against %s: %v\n%s", rs.Version, schema.RuleSet, err, b)
	}
	var members map[string]any
	if err := json.Unmarshal(b, &members); err != nil {
		tb.Fatal(err)
	}
	for _, m := range []string{"version", "generated_at", "window", "classifier", "thresholds", "rules"} {
		if _, ok := members[m]; !ok {
			tb.Errorf("rule set %s has no %s", rs.Version, m)
		}
	}
	if _, err := ruleset.Parse(b); err != nil {
		tb.Errorf("ruleset.Parse(the producer's rule set) = %v\n%s", err, b)
	}
}

// Every rule set LearnRules and LearnRulesByAgent write (avoid, replace and
// prefer rules, an agent's, a window's, an empty one) is valid against the
// schema; TestHintGenerator checks the generated world's too.
func TestRuleSetsValidateAgainstSchema(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "rules_swaps.jsonl"))
	ctx := context.Background()
	tax := taxonomy.Default()
	window := Filter{Since: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)}
	for _, tt := range []struct {
		name string
		f    Filter
		cfg  RulesConfig
	}{
		{"swaps", Filter{}, swapThresholds()},
		{"window", window, swapThresholds()},
		{"one agent", Filter{Agent: "skilllite"}, swapThresholds()},
		{"no rules", Filter{}, DefaultRulesConfig()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := LearnRules(ctx, src, tt.f, tax, tt.cfg, rulesNow)
			if err != nil {
				t.Fatal(err)
			}
			checkRuleSetSchema(t, rs)
		})
	}
	sets, err := LearnRulesByAgent(ctx, src, Filter{}, tax, swapThresholds(), rulesNow)
	if err != nil {
		t.Fatal(err)
	}
	for agent, rs := range sets {
		t.Run("agent "+agent, func(t *testing.T) { checkRuleSetSchema(t, rs) })
	}
}
