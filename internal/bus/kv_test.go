package bus_test

import (
	"context"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

func TestRulesBucketConfigValidate(t *testing.T) {
	if err := bus.DefaultRulesBucket().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	err := bus.RulesBucketConfig{Bucket: "no.dots", History: 65, Replicas: 0}.Validate()
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, want := range []string{"no.dots", "history 65", "replicas 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// EnsureRulesBucket creates the bucket, and updates it in place: values
// survive a change of history.
func TestEnsureRulesBucket(t *testing.T) {
	_, _, js := testkit.Embedded(t)
	ctx := context.Background()
	cfg := bus.DefaultRulesBucket()
	kv, err := bus.EnsureRulesBucket(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, ruleset.GlobalKey, []byte(`{"version":"rs-1","rules":[]}`)); err != nil {
		t.Fatal(err)
	}
	cfg.History = 4
	kv, err = bus.EnsureRulesBucket(ctx, js, cfg)
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	st, err := kv.Status(ctx)
	if err != nil || st.History() != 4 || st.Bucket() != "evosignal_rules" {
		t.Fatalf("status %v, %v; want bucket evosignal_rules with history 4", st, err)
	}
	e, err := kv.Get(ctx, ruleset.GlobalKey)
	if err != nil || string(e.Value()) != `{"version":"rs-1","rules":[]}` {
		t.Fatalf("value after update: %v, %v", e, err)
	}
	if _, err := bus.EnsureRulesBucket(ctx, js, bus.RulesBucketConfig{Bucket: "x", History: 0, Replicas: 1}); err == nil {
		t.Fatal("history 0 accepted")
	}
}
