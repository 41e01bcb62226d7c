package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
)

// RulesBucketConfig is the JetStream key-value bucket that holds the learned
// rule sets agents watch: one key per agent name, and GlobalRulesKey for the
// rules learned from every agent.
type RulesBucketConfig struct {
	Bucket   string // bucket name
	History  int    // versions kept per key (1 to 64)
	Replicas int    // 1, or 3/5 on a cluster
}

// GlobalRulesKey is the key of the rule set learned from all agents.
const GlobalRulesKey = "global"

// DefaultRulesBucket returns the defaults: bucket evosignal_rules, 16
// versions per key, one replica.
func DefaultRulesBucket() RulesBucketConfig {
	return RulesBucketConfig{Bucket: "evosignal_rules", History: 16, Replicas: 1}
}

var (
	validBucket = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	validKey    = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)
)

// Validate reports every problem of the configuration at once.
func (c RulesBucketConfig) Validate() error {
	var errs []error
	if !validBucket.MatchString(c.Bucket) {
		errs = append(errs, fmt.Errorf("rules bucket name %q: want letters, digits, '_' and '-'", c.Bucket))
	}
	if c.History < 1 || c.History > jetstream.KeyValueMaxHistory {
		errs = append(errs, fmt.Errorf("rules bucket history %d: want 1 to %d", c.History, jetstream.KeyValueMaxHistory))
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("rules bucket replicas %d: want 1 to 5", c.Replicas))
	}
	return errors.Join(errs...)
}

// RulesKey returns the key of agent's rule set, or an error when the agent
// name cannot be a key (it can whenever it is a subject token an agent may
// publish under, which is how evosignal names agents).
func RulesKey(agent string) (string, error) {
	if !validKey.MatchString(agent) || agent[0] == '.' || agent[len(agent)-1] == '.' {
		return "", fmt.Errorf("agent %q is not a valid key-value key", agent)
	}
	return agent, nil
}

// EnsureRulesBucket creates the rules bucket or updates it to the
// configuration.
func EnsureRulesBucket(ctx context.Context, js jetstream.JetStream, c RulesBucketConfig) (jetstream.KeyValue, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      c.Bucket,
		Description: "evosignal learned hint rules: one key per agent, and global",
		History:     uint8(c.History),
		Storage:     jetstream.FileStorage,
		Replicas:    c.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("create or update key-value bucket %s: %w", c.Bucket, err)
	}
	return kv, nil
}

// RuleSetDoc is one rule set to publish: its JSON, and whether it holds no
// rules.
type RuleSetDoc struct {
	JSON  []byte
	Empty bool
}

// Publication says what PublishRuleSets did with one key.
type Publication struct {
	Key      string
	Action   string // "put", "unchanged", "deleted" or "skipped"
	Revision uint64 // of the value now in force (0 when none)
}

// PublishRuleSets writes each rule set under its key (an agent name, or
// GlobalRulesKey), in key order. A key whose latest value already holds the
// same rule set (generated_at aside) is not rewritten, so watchers see a
// change only when there is one. An agent key with an empty rule set is
// deleted (or not written), so the agent's watcher falls back to the global
// key; the global key is always written.
func PublishRuleSets(ctx context.Context, kv jetstream.KeyValue, sets map[string]RuleSetDoc) ([]Publication, error) {
	keys := make([]string, 0, len(sets))
	for k := range sets {
		if _, err := RulesKey(k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Publication, 0, len(keys))
	for _, key := range keys {
		doc := sets[key]
		where := kv.Bucket() + "/" + key
		old, err := kv.Get(ctx, key)
		if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return out, fmt.Errorf("read %s: %w", where, err)
		}
		switch {
		case key != GlobalRulesKey && doc.Empty && old == nil:
			out = append(out, Publication{Key: key, Action: "skipped"})
		case key != GlobalRulesKey && doc.Empty:
			if err := kv.Delete(ctx, key); err != nil {
				return out, fmt.Errorf("delete %s: %w", where, err)
			}
			out = append(out, Publication{Key: key, Action: "deleted"})
		case old != nil && sameRuleSet(old.Value(), doc.JSON):
			out = append(out, Publication{Key: key, Action: "unchanged", Revision: old.Revision()})
		default:
			rev, err := kv.Put(ctx, key, doc.JSON)
			if err != nil {
				return out, fmt.Errorf("put %s: %w", where, err)
			}
			out = append(out, Publication{Key: key, Action: "put", Revision: rev})
		}
	}
	return out, nil
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
