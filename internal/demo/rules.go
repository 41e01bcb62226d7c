package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent/rules"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/metrics"
)

// publishRules publishes the rule sets exactly as analyze rules -publish
// does (bus.PublishRuleSets: the global set, and each agent's own set when
// it has rules) and returns the version each agent's watcher should then
// hold: its own set's, or the global one's when it has none.
func publishRules(ctx context.Context, kv jetstream.KeyValue, global *metrics.LearnedRules, byAgent map[string]*metrics.LearnedRules) (map[string]string, error) {
	docs := map[string]bus.RuleSetDoc{}
	encode := func(rs *metrics.LearnedRules) (bus.RuleSetDoc, error) {
		b, err := json.Marshal(rs)
		if err != nil {
			return bus.RuleSetDoc{}, fmt.Errorf("encode rule set %s: %w", rs.Version, err)
		}
		return bus.RuleSetDoc{JSON: b, Empty: len(rs.Rules) == 0}, nil
	}
	want := map[string]string{}
	for name, rs := range byAgent {
		d, err := encode(rs)
		if err != nil {
			return nil, err
		}
		docs[name] = d
		want[name] = global.Version
		if !d.Empty {
			want[name] = rs.Version
		}
	}
	d, err := encode(global)
	if err != nil {
		return nil, err
	}
	docs[bus.GlobalRulesKey] = d
	want[bus.GlobalRulesKey] = global.Version
	if _, err := bus.PublishRuleSets(ctx, kv, docs); err != nil {
		return nil, fmt.Errorf("publish rules: %w", err)
	}
	return want, nil
}

// waitRules waits until each watcher holds the version published for its
// agent (the global one when none was).
func waitRules(ctx context.Context, watchers map[string]*rules.Watcher, want map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for name, w := range watchers {
		v, ok := want[name]
		if !ok {
			v = want[bus.GlobalRulesKey]
		}
		for {
			ch := w.Changed()
			if w.Current().Version == v {
				break
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return fmt.Errorf("agent %s did not see rule set %s (holds %q; last problem: %v): %w", name, v, w.Current().Version, w.Err(), ctx.Err())
			}
		}
	}
	return nil
}

// ruleIDs is the union of the rule ids the agents hold, sorted.
func ruleIDs(watchers map[string]*rules.Watcher, names []string) []string {
	ids := map[string]bool{}
	for _, n := range names {
		for _, id := range watchers[n].Current().IDs() {
			ids[id] = true
		}
	}
	return append([]string{}, slices.Sorted(maps.Keys(ids))...)
}
