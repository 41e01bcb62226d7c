package bus

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent/ruleset"
)

// RulesBucketConfig is the JetStream key-value bucket that holds the learned
// rule sets agents watch (agent/rules: one key per agent name, and
// ruleset.GlobalKey for the rules learned from every agent).
type RulesBucketConfig struct {
	Bucket   string // bucket name
	History  int    // versions kept per key (1 to 64)
	Replicas int    // 1, or 3/5 on a cluster
}

// DefaultRulesBucket returns the defaults: bucket ruleset.DefaultBucket,
// 16 versions per key, one replica.
func DefaultRulesBucket() RulesBucketConfig {
	return RulesBucketConfig{Bucket: ruleset.DefaultBucket, History: 16, Replicas: 1}
}

var validBucket = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

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
