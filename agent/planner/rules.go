package planner

import "github.com/evosignal/evosignal/agent/ruleset"

// How the planner applies a rule set (ruleset.RuleSet, the learned-rules
// document; Config.Rules) to a task's tool hint: see ruleset.Kind.

// forbidding returns the first avoid or replace rule that forbids hint for
// tasks of taskType.
func forbidding(rs ruleset.RuleSet, taskType, hint string) (ruleset.Rule, bool) {
	if taskType == "" {
		return ruleset.Rule{}, false
	}
	for _, r := range rs.Rules {
		if (r.Kind == ruleset.KindAvoid || r.Kind == ruleset.KindReplace) && r.TaskType == taskType && r.ToolHint == hint {
			return r, true
		}
	}
	return ruleset.Rule{}, false
}

// preferred returns the first prefer rule for taskType whose hint is
// available and not forbidden for that type.
func preferred(rs ruleset.RuleSet, taskType string, available func(string) bool) (ruleset.Rule, bool) {
	if taskType == "" {
		return ruleset.Rule{}, false
	}
	for _, r := range rs.Rules {
		if r.Kind != ruleset.KindPrefer || r.TaskType != taskType || !available(r.ToolHint) {
			continue
		}
		if _, forbidden := forbidding(rs, taskType, r.ToolHint); forbidden {
			continue
		}
		return r, true
	}
	return ruleset.Rule{}, false
}
