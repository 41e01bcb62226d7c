package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent/ruleset"
)

// Action says what Publish did with one key.
type Action string

// Actions of Publish.
const (
	Put       Action = "put"       // the rule set was written
	Unchanged Action = "unchanged" // the key already held the same rule set
	Deleted   Action = "deleted"   // an agent without rules of its own: its key was deleted
	Skipped   Action = "skipped"   // an agent without rules of its own and without a key
)

// Publication is what Publish did with one key.
type Publication struct {
	Key      string
	Action   Action
	Revision uint64 // of the value now in force (0 when none)
	Version  string // of the rule set published under Key
	Rules    int    // its number of rules
}

// Publish puts rule sets into kv, the rules bucket Watchers follow: global
// (unless nil) under ruleset.GlobalKey, and each agent's own set of
// byAgent under the agent's name (ruleset.Key), in key order. Each value is
// the rule set's JSON.
//
// A key whose latest value already holds the same rule set (generated_at
// aside) is not rewritten, so that watchers see a change only when there
// is one. An agent's key holds its rules only when it has some: an agent
// without rules of its own (too little data) has its key deleted, or not
// written, so that its watcher falls back to the global key. The global
// key is always written. An agent named like the global key is an error.
func Publish(ctx context.Context, kv jetstream.KeyValue, global *ruleset.RuleSet, byAgent map[string]*ruleset.RuleSet) ([]Publication, error) {
	sets := make(map[string]*ruleset.RuleSet, len(byAgent)+1)
	for agent, rs := range byAgent {
		if agent == ruleset.GlobalKey {
			return nil, fmt.Errorf("publish rules: an agent named %q would overwrite the rules of all agents", agent)
		}
		if _, err := ruleset.Key(agent); err != nil {
			return nil, fmt.Errorf("publish rules: %w", err)
		}
		sets[agent] = rs
	}
	if global != nil {
		sets[ruleset.GlobalKey] = global
	}
	keys := make([]string, 0, len(sets))
	for k := range sets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Publication, 0, len(keys))
	for _, key := range keys {
		rs := sets[key]
		p, err := publish(ctx, kv, key, rs)
		if err != nil {
			return out, fmt.Errorf("publish rules: %w", err)
		}
		p.Key, p.Version, p.Rules = key, rs.Version, len(rs.Rules)
		out = append(out, p)
	}
	return out, nil
}

// publish writes (or deletes) one key.
func publish(ctx context.Context, kv jetstream.KeyValue, key string, rs *ruleset.RuleSet) (Publication, error) {
	where := kv.Bucket() + "/" + key
	b, err := json.Marshal(rs)
	if err != nil {
		return Publication{}, fmt.Errorf("encode rule set %s for %s: %w", rs.Version, where, err)
	}
	b = append(b, '\n')
	old, err := kv.Get(ctx, key)
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return Publication{}, fmt.Errorf("read %s: %w", where, err)
	}
	empty := len(rs.Rules) == 0
	switch {
	case key != ruleset.GlobalKey && empty && old == nil:
		return Publication{Action: Skipped}, nil
	case key != ruleset.GlobalKey && empty:
		if err := kv.Delete(ctx, key); err != nil {
			return Publication{}, fmt.Errorf("delete %s: %w", where, err)
		}
		return Publication{Action: Deleted}, nil
	case old != nil && sameRuleSet(old.Value(), b):
		return Publication{Action: Unchanged, Revision: old.Revision()}, nil
	}
	rev, err := kv.Put(ctx, key, b)
	if err != nil {
		return Publication{}, fmt.Errorf("put %s: %w", where, err)
	}
	return Publication{Action: Put, Revision: rev}, nil
}

// sameRuleSet reports whether two encoded rule sets are equal but for
// generated_at.
func sameRuleSet(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	for _, v := range []any{x, y} {
		if m, ok := v.(map[string]any); ok {
			delete(m, "generated_at")
		}
	}
	return reflect.DeepEqual(x, y)
}

// History returns the rule sets key has held in kv, newest first, as far
// as the bucket keeps them (its history setting); deletions and values
// that are not rule sets are left out. A key never written has none.
func History(ctx context.Context, kv jetstream.KeyValue, key string) ([]ruleset.RuleSet, error) {
	entries, err := kv.History(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history of %s/%s: %w", kv.Bucket(), key, err)
	}
	var out []ruleset.RuleSet
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Operation() != jetstream.KeyValuePut {
			continue
		}
		rs, err := ruleset.Parse(e.Value())
		if err != nil {
			continue
		}
		out = append(out, rs)
	}
	return out, nil
}
