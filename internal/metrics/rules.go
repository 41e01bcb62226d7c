package metrics

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// RulesConfig holds the thresholds a learned rule must pass; a rule set
// records them (ruleset.Thresholds documents each).
type RulesConfig ruleset.Thresholds

// DefaultHoldout is the share of sessions a learned rule set holds out as
// a randomised control unless told otherwise (analyze rules -holdout).
const DefaultHoldout = 0.1

// SetHoldout sets the holdout share of each rule set that has rules (a set
// without rules changes nothing, so it holds nothing out).
func SetHoldout(share float64, sets ...*ruleset.RuleSet) {
	for _, rs := range sets {
		if rs == nil {
			continue
		}
		rs.Holdout = 0
		if len(rs.Rules) > 0 {
			rs.Holdout = share
		}
	}
}

// SetRuleHoldout gives every rule of each set that holds out a share of
// its own (Holdout > 0) a holdout of its own, share (0: none): within the
// set's rules arm each rule is then held out of a session with this
// probability, drawn independently per rule (ruleset.AssignRule). The
// draws make a factorial design: each rule's randomised effect is its
// effect averaged over the other rules' arms, which is its effect alone
// where rules do not interact.
func SetRuleHoldout(share float64, sets ...*ruleset.RuleSet) {
	for _, rs := range sets {
		if rs == nil {
			continue
		}
		for i := range rs.Rules {
			rs.Rules[i].Holdout = 0
			if rs.Holdout > 0 {
				rs.Rules[i].Holdout = share
			}
		}
	}
}

// DefaultRulesConfig returns the documented defaults.
func DefaultRulesConfig() RulesConfig {
	return RulesConfig{
		MinCalls:       30,
		PreferSuccess:  0.8,
		PreferShare:    0.3,
		AvoidLift:      2,
		Alpha:          0.01,
		MinReplans:     3,
		ReplaceSuccess: 0.5,
	}
}

// Validate reports every problem at once.
func (c RulesConfig) Validate() error {
	var errs []error
	unit := func(name string, v float64) {
		if !(v >= 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("-%s %v: want a number in [0, 1]", name, v))
		}
	}
	if c.MinCalls < 1 {
		errs = append(errs, fmt.Errorf("-min-calls %d: want at least 1", c.MinCalls))
	}
	unit("prefer-success", c.PreferSuccess)
	unit("prefer-share", c.PreferShare)
	unit("replace-success", c.ReplaceSuccess)
	if !(c.AvoidLift >= 1) {
		errs = append(errs, fmt.Errorf("-avoid-lift %v: want at least 1", c.AvoidLift))
	}
	if !(c.Alpha > 0 && c.Alpha <= 1) {
		errs = append(errs, fmt.Errorf("-alpha %v: want a number in (0, 1]", c.Alpha))
	}
	if c.MinReplans < 1 {
		errs = append(errs, fmt.Errorf("-min-replans %d: want at least 1", c.MinReplans))
	}
	return errors.Join(errs...)
}

// CallEvidence is the evidence of a prefer or avoid rule: the hint's real
// tool calls in the task type against the type's other calls.
type CallEvidence struct {
	Calls               int64    `json:"calls"`
	Failed              int64    `json:"failed"`
	FailureRate         float64  `json:"failure_rate"`
	FailureCI           Interval `json:"failure_ci"`
	TypeCalls           int64    `json:"type_calls"` // all calls of the type
	Share               float64  `json:"share"`      // calls / type_calls
	BaselineCalls       int64    `json:"baseline_calls"`
	BaselineFailed      int64    `json:"baseline_failed"`
	BaselineFailureRate *float64 `json:"baseline_failure_rate"`
	Lift                *float64 `json:"lift"`
	// LiftLower is failure_ci.lo / baseline_failure_rate: the lift the
	// data support with confidence (null when the baseline never fails).
	LiftLower *float64 `json:"lift_lower"`
	PValue    *float64 `json:"p_value"`
	Test      *string  `json:"test"`
}

// ReplaceEvidence is the evidence of a replace rule.
type ReplaceEvidence struct {
	Replans     int64    `json:"replans"`
	Added       int64    `json:"added"`
	Completed   int64    `json:"completed"`
	Succeeded   int64    `json:"succeeded"`
	SuccessRate float64  `json:"success_rate"`
	SuccessCI   Interval `json:"success_ci"`
}

// LearnRules learns the rule set of the sessions f selects. f.By must be
// empty: rules are learned per task type.
func LearnRules(ctx context.Context, src Source, f Filter, tax *taxonomy.Taxonomy, cfg RulesConfig, now time.Time) (*ruleset.RuleSet, error) {
	if len(f.By) > 0 {
		return nil, fmt.Errorf("rules are learned per task type: -by %v is not supported", f.By)
	}
	sets, err := learnRuleSets(ctx, src, f, tax, cfg, now, false)
	if err != nil {
		return nil, err
	}
	rs := sets[""]
	if rs == nil {
		rs = newRuleSet(f, tax, cfg, now, f.Agent)
		finish(rs)
	}
	return rs, nil
}

// LearnRulesByAgent learns one rule set per agent with a tool call or a
// task in the sessions f selects, each from that agent's sessions only,
// keyed by agent name.
func LearnRulesByAgent(ctx context.Context, src Source, f Filter, tax *taxonomy.Taxonomy, cfg RulesConfig, now time.Time) (map[string]*ruleset.RuleSet, error) {
	if len(f.By) > 0 {
		return nil, fmt.Errorf("rules are learned per task type: -by %v is not supported", f.By)
	}
	return learnRuleSets(ctx, src, f, tax, cfg, now, true)
}

// learnRuleSets runs the evidence queries once (grouped by agent when byAgent) and
// derives one rule set per agent ("" for all).
func learnRuleSets(ctx context.Context, src Source, f Filter, tax *taxonomy.Taxonomy, cfg RulesConfig, now time.Time, byAgent bool) (map[string]*ruleset.RuleSet, error) {
	if err := errors.Join(f.Validate(), cfg.Validate()); err != nil {
		return nil, err
	}
	hf, rf := f, f
	hf.By, rf.By = []string{"task_type"}, nil
	if byAgent {
		hf.By, rf.By = []string{"agent", "task_type"}, []string{"agent"}
	}
	hints, err := Hints(ctx, src, hf, tax, HintsConfig{MinCalls: cfg.MinCalls})
	if err != nil {
		return nil, err
	}
	t, err := runClassifying(ctx, src, "analyze/rules_replace.sql", rf, tax)
	if err != nil {
		return nil, err
	}
	sets := map[string]*ruleset.RuleSet{}
	// set returns the rule set of agent: keyed by agent name when
	// byAgent, else the one set under "".
	set := func(agent *string) *ruleset.RuleSet {
		key, name := "", f.Agent
		if byAgent && agent != nil {
			key, name = *agent, *agent
		}
		if sets[key] == nil {
			sets[key] = newRuleSet(f, tax, cfg, now, name)
		}
		return sets[key]
	}
	for i := range hints {
		h := &hints[i]
		rs := set(h.Agent.Value()) // every agent with a call or a task has a set, maybe empty
		if h.Hint == nil || h.TaskType.Value() == nil {
			continue
		}
		if r, ok := avoidRule(h, cfg); ok {
			rs.Rules = append(rs.Rules, r)
		} else if r, ok := preferRule(h, cfg); ok {
			rs.Rules = append(rs.Rules, r)
		}
	}
	err = eachRow(t, func(c *row) error {
		rs := set(c.str("agent"))
		if r, ok := replaceRule(c, cfg); ok {
			rs.Rules = append(rs.Rules, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read rules_replace: %w", err)
	}
	for _, rs := range sets {
		finish(rs)
	}
	return sets, nil
}

func newRuleSet(f Filter, tax *taxonomy.Taxonomy, cfg RulesConfig, now time.Time, agent string) *ruleset.RuleSet {
	rs := &ruleset.RuleSet{
		GeneratedAt: now.UTC(),
		Classifier:  tax.ID(),
		Agent:       agent,
		Thresholds:  ruleset.Thresholds(cfg),
		Rules:       []ruleset.Rule{},
	}
	if !f.Since.IsZero() {
		s := f.Since.UTC()
		rs.Window.Since = &s
	}
	if !f.Until.IsZero() {
		u := f.Until.UTC()
		rs.Window.Until = &u
	}
	return rs
}

func callEvidence(h *HintRow) *CallEvidence {
	e := &CallEvidence{
		Calls:               h.Calls,
		Failed:              h.Failed,
		TypeCalls:           h.Calls + h.OtherCalls,
		BaselineCalls:       h.OtherCalls,
		BaselineFailed:      h.OtherFailed,
		BaselineFailureRate: h.OtherFailureRate,
		Lift:                h.Lift,
		PValue:              h.PValue,
		Test:                h.Test,
	}
	if h.FailureRate != nil {
		e.FailureRate = *h.FailureRate
		e.FailureCI = *h.FailureCI
	}
	if s := Rate(e.Calls, e.TypeCalls); s != nil {
		e.Share = *s
	}
	if h.FailureCI != nil && h.OtherFailureRate != nil && *h.OtherFailureRate > 0 {
		l := h.FailureCI.Lo / *h.OtherFailureRate
		e.LiftLower = &l
	}
	return e
}

// avoidRule: enough calls, the failure rate's lower bound above the
// baseline rate by the factor AvoidLift (a large lift, with confidence),
// and a small p-value.
func avoidRule(h *HintRow, cfg RulesConfig) (ruleset.Rule, bool) {
	if h.Calls < cfg.MinCalls || h.OtherFailureRate == nil || h.PValue == nil {
		return ruleset.Rule{}, false
	}
	e := callEvidence(h)
	base := *h.OtherFailureRate
	if !(e.FailureCI.Lo > base && e.FailureCI.Lo >= cfg.AvoidLift*base && *h.PValue < cfg.Alpha) {
		return ruleset.Rule{}, false
	}
	return ruleset.Rule{
		Kind:       ruleset.KindAvoid,
		TaskType:   h.TaskType.String(),
		ToolHint:   *h.Hint,
		Support:    h.Calls,
		Confidence: e.FailureCI.Lo,
		Evidence:   e,
	}, true
}

// preferRule: enough calls, a success rate whose lower bound passes the
// threshold, a large share, and no significant evidence that the hint
// fails more often than the type's other calls.
func preferRule(h *HintRow, cfg RulesConfig) (ruleset.Rule, bool) {
	if h.Calls < cfg.MinCalls {
		return ruleset.Rule{}, false
	}
	e := callEvidence(h)
	successLo := 1 - e.FailureCI.Hi
	worse := h.OtherFailureRate != nil && h.PValue != nil && e.FailureRate > *h.OtherFailureRate && *h.PValue < cfg.Alpha
	if !(successLo >= cfg.PreferSuccess && e.Share >= cfg.PreferShare && !worse) {
		return ruleset.Rule{}, false
	}
	return ruleset.Rule{
		Kind:       ruleset.KindPrefer,
		TaskType:   h.TaskType.String(),
		ToolHint:   *h.Hint,
		Support:    h.Calls,
		Confidence: successLo,
		Evidence:   e,
	}, true
}

// replaceRule: the swap seen in enough replans, and the added tasks
// succeeding with a lower bound at or above the threshold.
func replaceRule(c *row, cfg RulesConfig) (ruleset.Rule, bool) {
	e := &ReplaceEvidence{
		Replans:   c.int("replans"),
		Added:     c.int("added"),
		Completed: c.int("completed"),
		Succeeded: c.int("succeeded"),
	}
	if e.Replans < cfg.MinReplans || e.Added == 0 {
		return ruleset.Rule{}, false
	}
	e.SuccessRate = *Rate(e.Succeeded, e.Added)
	e.SuccessCI = *Wilson(e.Succeeded, e.Added, Z95)
	if e.SuccessCI.Lo < cfg.ReplaceSuccess {
		return ruleset.Rule{}, false
	}
	return ruleset.Rule{
		Kind:       ruleset.KindReplace,
		TaskType:   c.need("task_type"),
		ToolHint:   c.need("from_hint"),
		Instead:    c.need("to_hint"),
		Support:    e.Replans,
		Confidence: e.SuccessCI.Lo,
		Evidence:   e,
	}, true
}

var ruleKindOrder = map[ruleset.Kind]int{ruleset.KindAvoid: 0, ruleset.KindReplace: 1, ruleset.KindPrefer: 2}

// finish resolves conflicts, names the rules, orders them, writes their
// instructions and versions the set.
func finish(rs *ruleset.RuleSet) {
	// A replace rule's target, else a prefer rule's hint, is what an avoid
	// rule suggests instead; the best-supported one when there are several.
	better := map[string]ruleset.Rule{}
	for _, r := range rs.Rules {
		if r.Kind == ruleset.KindAvoid {
			continue
		}
		k := r.TaskType + "\x00" + r.ToolHint
		if r.Kind == ruleset.KindPrefer {
			k = r.TaskType + "\x00"
		}
		if b, ok := better[k]; !ok || r.Confidence > b.Confidence {
			better[k] = r
		}
	}
	for i := range rs.Rules {
		r := &rs.Rules[i]
		if r.Kind != ruleset.KindAvoid {
			continue
		}
		if b, ok := better[r.TaskType+"\x00"+r.ToolHint]; ok {
			r.Instead = b.Instead
		} else if b, ok := better[r.TaskType+"\x00"]; ok && b.ToolHint != r.ToolHint {
			r.Instead = b.ToolHint
		}
	}
	for i := range rs.Rules {
		r := &rs.Rules[i]
		r.ID = string(r.Kind) + ":" + r.TaskType + ":" + r.ToolHint
		if r.Kind == ruleset.KindReplace {
			r.ID += ":" + r.Instead
		}
		r.Instruction = ruleInstruction(*r)
	}
	slices.SortFunc(rs.Rules, func(a, b ruleset.Rule) int {
		if c := cmp.Compare(ruleKindOrder[a.Kind], ruleKindOrder[b.Kind]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.TaskType, b.TaskType); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	rs.Version = ruleSetVersion(rs.Rules)
}

// instruction is the rule in one line for a planning prompt. It carries no
// numbers, so that it (and the version) stays the same while the rule holds.
func ruleInstruction(r ruleset.Rule) string {
	switch r.Kind {
	case ruleset.KindPrefer:
		return fmt.Sprintf("For %s tasks, prefer the tool %s: it is what these tasks use most, and it succeeds.", r.TaskType, r.ToolHint)
	case ruleset.KindAvoid:
		s := fmt.Sprintf("For %s tasks, do not hint the tool %s: it fails far more often than the alternatives.", r.TaskType, r.ToolHint)
		if r.Instead != "" {
			s += fmt.Sprintf(" Use %s instead.", r.Instead)
		}
		return s
	case ruleset.KindReplace:
		return fmt.Sprintf("For %s tasks, use the tool %s instead of %s: replans kept replacing %s with %s, and it worked.", r.TaskType, r.Instead, r.ToolHint, r.ToolHint, r.Instead)
	}
	return ""
}

// ruleSetVersion hashes the rules as a planner sees them.
// RuleSetVersion is the version of a rule set with these rules, as the
// analyzer names every set it learns (ruleset.RuleSet.Version).
func RuleSetVersion(rules []ruleset.Rule) string { return ruleSetVersion(rules) }

func ruleSetVersion(rules []ruleset.Rule) string {
	type seen struct {
		ID, Kind, TaskType, ToolHint, Instead, Instruction string
	}
	v := make([]seen, len(rules))
	for i, r := range rules {
		v[i] = seen{r.ID, string(r.Kind), r.TaskType, r.ToolHint, r.Instead, r.Instruction}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings only
	}
	sum := sha256.Sum256(b)
	return "rs-" + hex.EncodeToString(sum[:])[:12]
}
