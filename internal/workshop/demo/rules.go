package demo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent/rules"
	"github.com/evosignal/evosignal/agent/ruleset"
)

// publishRules publishes the rule sets as analyze rules -publish does
// (rules.Publish) and returns the version each key now holds; an agent
// without a key of its own gets the global one.
func publishRules(ctx context.Context, kv jetstream.KeyValue, global *ruleset.RuleSet, byAgent map[string]*ruleset.RuleSet) (map[string]string, error) {
	pubs, err := rules.Publish(ctx, kv, global, byAgent)
	if err != nil {
		return nil, err
	}
	want := map[string]string{}
	for _, p := range pubs {
		if p.Action == rules.Put || p.Action == rules.Unchanged {
			want[p.Key] = p.Version
		}
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
			v = want[ruleset.GlobalKey]
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
