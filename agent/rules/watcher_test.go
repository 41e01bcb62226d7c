package rules_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent/rules"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// ruleSet is the JSON of a rule set as the analyzer publishes it: a
// superset of ruleset.RuleSet (generated_at, evidence, … are ignored).
func ruleSet(version, id string) string {
	return `{"version":"` + version + `","generated_at":"2026-01-05T00:00:00Z","agent":"",` +
		`"rules":[{"id":"` + id + `","kind":"avoid","task_type":"search","tool_hint":"grep","instead":"search_web",` +
		`"instruction":"…","support":120,"confidence":0.52,"evidence":{"calls":120}}]}`
}

func bucket(tb testing.TB) (jetstream.JetStream, jetstream.KeyValue) {
	tb.Helper()
	_, _, js := testkit.Embedded(tb)
	kv, err := bus.EnsureRulesBucket(tb.Context(), js, bus.DefaultRulesBucket())
	if err != nil {
		tb.Fatal(err)
	}
	return js, kv
}

func put(tb testing.TB, kv jetstream.KeyValue, key, value string) {
	tb.Helper()
	if _, err := kv.Put(tb.Context(), key, []byte(value)); err != nil {
		tb.Fatalf("put %s: %v", key, err)
	}
}

// waitVersion waits until w's current rule set has version want.
func waitVersion(tb testing.TB, w *rules.Watcher, want string) {
	tb.Helper()
	timeout := time.After(10 * time.Second)
	for {
		ch := w.Changed()
		if got := w.Current().Version; got == want {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			tb.Fatalf("Current().Version = %q after 10s, want %q", w.Current().Version, want)
		}
	}
}

func watch(tb testing.TB, js jetstream.JetStream, agent string) *rules.Watcher {
	tb.Helper()
	w, err := rules.Watch(tb.Context(), js, ruleset.DefaultBucket, agent)
	if err != nil {
		tb.Fatalf("Watch: %v", err)
	}
	tb.Cleanup(func() {
		if err := w.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return w
}

func TestWatchFollowsKeys(t *testing.T) {
	js, kv := bucket(t)
	put(t, kv, ruleset.GlobalKey, ruleSet("g1", "avoid:search:grep"))
	put(t, kv, "other", ruleSet("o1", "other-rule"))

	w := watch(t, js, "coder")
	// The initial load is done when Watch returns.
	rs, key := w.CurrentKey()
	if rs.Version != "g1" || key != ruleset.GlobalKey {
		t.Fatalf("CurrentKey() = %q from %q, want g1 from global", rs.Version, key)
	}
	if got := rs.IDs(); len(got) != 1 || got[0] != "avoid:search:grep" {
		t.Errorf("rule ids = %v, want [avoid:search:grep]", got)
	}

	steps := []struct {
		name, key, value string // value "" deletes the key
		want, wantKey    string
	}{
		{name: "global update", key: ruleset.GlobalKey, value: ruleSet("g2", "a"), want: "g2", wantKey: ruleset.GlobalKey},
		{name: "agent key beats global", key: "coder", value: ruleSet("c1", "b"), want: "c1", wantKey: "coder"},
		{name: "global update under agent key", key: ruleset.GlobalKey, value: ruleSet("g3", "a"), want: "c1", wantKey: "coder"},
		{name: "agent update", key: "coder", value: ruleSet("c2", "b"), want: "c2", wantKey: "coder"},
		{name: "agent key deleted: global again", key: "coder", want: "g3", wantKey: ruleset.GlobalKey},
		{name: "global deleted: no rules", key: ruleset.GlobalKey, want: "", wantKey: ""},
	}
	for _, st := range steps {
		ch := w.Changed()
		if st.value == "" {
			if err := kv.Delete(t.Context(), st.key); err != nil {
				t.Fatal(err)
			}
		} else {
			put(t, kv, st.key, st.value)
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no change seen after 10s", st.name)
		}
		if rs, key := w.CurrentKey(); rs.Version != st.want || key != st.wantKey {
			t.Errorf("%s: CurrentKey() = %q from %q, want %q from %q", st.name, rs.Version, key, st.want, st.wantKey)
		}
	}
	if err := w.Err(); err != nil {
		t.Errorf("Err() = %v, want nil", err)
	}
}

func TestWatchKeepsLastGoodRuleSet(t *testing.T) {
	js, kv := bucket(t)
	w := watch(t, js, "coder")
	if rs := w.Current(); rs.Version != "" || len(rs.Rules) != 0 {
		t.Fatalf("Current() on an empty bucket = %+v, want no rules", rs)
	}
	put(t, kv, "coder", ruleSet("c1", "a"))
	waitVersion(t, w, "c1")
	for _, bad := range []struct{ name, value, want string }{
		{"not json", "{", "decode rule set"},
		{"invalid rule", `{"version":"c2","rules":[{"id":"x","kind":"maybe","task_type":"t","tool_hint":"h"}]}`, `kind "maybe"`},
	} {
		ch := w.Changed()
		put(t, kv, "coder", bad.value)
		// A bad value is not a change; a good one afterwards is.
		put(t, kv, ruleset.GlobalKey, ruleSet("g-"+bad.name, "g"))
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no change seen", bad.name)
		}
		if got := w.Current().Version; got != "c1" {
			t.Errorf("%s: Current().Version = %q, want the last good c1", bad.name, got)
		}
		if err := w.Err(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: Err() = %v, want it to mention %q", bad.name, err, bad.want)
		}
	}
}

func TestWatchErrors(t *testing.T) {
	_, _, js := testkit.Embedded(t)
	tests := []struct {
		name, bucket, agent string
		is                  error
		want                string
	}{
		{name: "no bucket", bucket: ruleset.DefaultBucket, agent: "coder", is: jetstream.ErrBucketNotFound},
		{name: "agent not a key", bucket: ruleset.DefaultBucket, agent: "a b", want: "not a valid key-value key"},
		{name: "empty agent", bucket: ruleset.DefaultBucket, agent: "", want: "not a valid key-value key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := rules.Watch(t.Context(), js, tt.bucket, tt.agent)
			if err == nil {
				w.Close()
				t.Fatalf("Watch(%q, %q) = nil error", tt.bucket, tt.agent)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Watch(%q, %q) = %v, want errors.Is %v", tt.bucket, tt.agent, err, tt.is)
			}
			if tt.want != "" && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Watch(%q, %q) = %v, want it to contain %q", tt.bucket, tt.agent, err, tt.want)
			}
		})
	}
}

func TestWatchCancelledInitialLoad(t *testing.T) {
	js, _ := bucket(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if w, err := rules.Watch(ctx, js, ruleset.DefaultBucket, "coder"); err == nil {
		w.Close()
		t.Fatal("Watch with a cancelled context = nil error")
	}
}

func TestCloseTwiceAndCurrentAfterClose(t *testing.T) {
	js, kv := bucket(t)
	put(t, kv, ruleset.GlobalKey, ruleSet("g1", "a"))
	w, err := rules.Watch(t.Context(), js, ruleset.DefaultBucket, "coder")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := w.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if got := w.Current().Version; got != "g1" {
		t.Errorf("Current().Version after Close = %q, want g1", got)
	}
}

// The rule set a Watcher returns is what a planner takes.
func TestCurrentFeedsPlanner(t *testing.T) {
	js, kv := bucket(t)
	put(t, kv, ruleset.GlobalKey, ruleSet("g1", "avoid:search:grep"))
	w := watch(t, js, "coder")
	rs := w.Current()
	if err := rs.Validate(); err != nil {
		t.Fatalf("Current() does not validate: %v", err)
	}
	if got := rs.Rules[0]; got.Kind != ruleset.KindAvoid || got.Instead != "search_web" {
		t.Errorf("rule = %+v, want avoid with instead search_web", got)
	}
	rs.Rules[0].ID = "mutated"
	if got := w.Current().Rules[0].ID; got != "avoid:search:grep" {
		t.Errorf("Current() shares its rules with callers: id now %q", got)
	}
}
