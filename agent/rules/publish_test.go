package rules_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent/rules"
	"github.com/evosignal/evosignal/agent/ruleset"
)

func learned(version string, ids ...string) *ruleset.RuleSet {
	rs := &ruleset.RuleSet{Version: version, GeneratedAt: time.Now().UTC(), Rules: []ruleset.Rule{}}
	for _, id := range ids {
		rs.Rules = append(rs.Rules, ruleset.Rule{ID: id, Kind: ruleset.KindAvoid, TaskType: "search", ToolHint: id})
	}
	return rs
}

// Publish writes the global set and the agents' own, leaves an unchanged
// set alone (generated_at aside), deletes the key of an agent that has no
// rules left, and a watcher then falls back to the global set.
func TestPublish(t *testing.T) {
	js, kv := bucket(t)
	type step struct {
		global  *ruleset.RuleSet
		byAgent map[string]*ruleset.RuleSet
		want    []rules.Action // in key order: coder, docs, global
		holds   string         // what coder's watcher then holds
	}
	w := watch(t, js, "coder")
	for i, s := range []step{
		{learned("g1", "a"), map[string]*ruleset.RuleSet{"coder": learned("c1", "b"), "docs": learned("d0")}, []rules.Action{rules.Put, rules.Skipped, rules.Put}, "c1"},
		{learned("g1", "a"), map[string]*ruleset.RuleSet{"coder": learned("c1", "b"), "docs": learned("d0")}, []rules.Action{rules.Unchanged, rules.Skipped, rules.Unchanged}, "c1"},
		{learned("g2", "a", "c"), map[string]*ruleset.RuleSet{"coder": learned("c0"), "docs": learned("d0")}, []rules.Action{rules.Deleted, rules.Skipped, rules.Put}, "g2"},
	} {
		pubs, err := rules.Publish(t.Context(), kv, s.global, s.byAgent)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		var got []rules.Action
		for _, p := range pubs {
			got = append(got, p.Action)
		}
		if !slices.Equal(got, s.want) || pubs[2].Key != ruleset.GlobalKey || pubs[2].Version != s.global.Version {
			t.Fatalf("step %d: publications %+v, want actions %v", i, pubs, s.want)
		}
		waitVersion(t, w, s.holds)
	}
	_, err := rules.Publish(t.Context(), kv, nil, map[string]*ruleset.RuleSet{ruleset.GlobalKey: learned("x", "a")})
	if err == nil || !strings.Contains(err.Error(), "overwrite") {
		t.Fatalf("Publish of an agent named %q = %v, want an error", ruleset.GlobalKey, err)
	}
}
