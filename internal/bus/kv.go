package bus

import (
	"context"
	"errors"
	"fmt"
	"regexp"

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
