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

	"github.com/evosignal/evosignal/internal/taxonomy"
)

// Rule kinds, as agent/planner reads them.
const (
	RulePrefer  = "prefer"
	RuleAvoid   = "avoid"
	RuleReplace = "replace"
)

// RulesConfig holds the thresholds a learned rule must pass. The JSON tags
// are how they appear in a rule set (thresholds).
type RulesConfig struct {
	// MinCalls: prefer and avoid need at least this many calls of the hint
	// in the task type (-min-calls, default 30).
	MinCalls int64 `json:"min_calls"`
	// PreferSuccess: prefer needs the lower bound of the 95% Wilson
	// interval of the hint's success rate in the type at or above this
	// (-prefer-success, default 0.8).
	PreferSuccess float64 `json:"prefer_success"`
	// PreferShare: prefer needs the hint's share of the type's calls at or
	// above this (-prefer-share, default 0.3).
	PreferShare float64 `json:"prefer_share"`
	// AvoidLift: avoid needs the lift to be large with confidence: the
	// lower bound of the 95% Wilson interval of the hint's failure rate in
	// the type at or above this many times the type's baseline failure
	// rate (-avoid-lift, default 2). The lower bound above the baseline
	// follows.
	AvoidLift float64 `json:"avoid_lift"`
	// Alpha: avoid needs the p-value of the 2×2 test (hint vs. the type's
	// other calls) below this (-alpha, default 0.01).
	Alpha float64 `json:"alpha"`
	// MinReplans: replace needs at least this many replans showing the
	// swap (-min-replans, default 3).
	MinReplans int64 `json:"min_replans"`
	// ReplaceSuccess: replace needs the lower bound of the 95% Wilson
	// interval of the success rate of the added tasks at or above this
	// (-replace-success, default 0.5).
	ReplaceSuccess float64 `json:"replace_success"`
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

// LearnedRule is one learned hint rule with its evidence. Its id, kind,
// task_type, tool_hint, instead and instruction are agent/planner's Rule.
type LearnedRule struct {
	// ID is kind:task_type:tool_hint (replace: kind:task_type:tool_hint:instead):
	// the same for as long as the rule holds.
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	TaskType string `json:"task_type"`
	ToolHint string `json:"tool_hint"`
	// Instead: replace, the hint to use; avoid, a better hint for the type
	// when one is known (a replace or prefer rule's), else empty.
	Instead     string `json:"instead,omitempty"`
	Instruction string `json:"instruction"`
	// Support: prefer and avoid, the hint's calls in the type; replace,
	// the replans showing the swap.
	Support int64 `json:"support"`
	// Confidence: the lower bound of the 95% Wilson interval of the rate
	// the rule rests on: prefer, the hint's success rate; avoid, its
	// failure rate; replace, the added tasks' success rate.
	Confidence float64 `json:"confidence"`
	// Evidence is *CallEvidence (prefer, avoid) or *ReplaceEvidence.
	Evidence any `json:"evidence"`
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

// RuleWindow is the time window of a rule set: sessions started in
// [since, until); null is open.
type RuleWindow struct {
	Since *time.Time `json:"since"`
	Until *time.Time `json:"until"`
}

// LearnedRules is a versioned rule set: the project's JSON rule set, a
// superset of agent/planner's RuleSet.
type LearnedRules struct {
	// Version is "rs-" and the first 12 hex digits of the SHA-256 of the
	// rules as a planner sees them (id, kind, task_type, tool_hint,
	// instead, instruction, in order): it changes exactly when the rules an
	// agent applies change, not when only their evidence does.
	Version     string     `json:"version"`
	GeneratedAt time.Time  `json:"generated_at"`
	Window      RuleWindow `json:"window"`
	Classifier  string     `json:"classifier"`
	// Agent is the agent whose sessions the rules were learned from; empty
	// for all agents.
	Agent      string        `json:"agent,omitempty"`
	Thresholds RulesConfig   `json:"thresholds"`
	Rules      []LearnedRule `json:"rules"`
}

// LearnRules learns the rule set of the sessions f selects. f.By must be
// empty: rules are learned per task type.
func LearnRules(ctx context.Context, src Source, f Filter, tax *taxonomy.Taxonomy, cfg RulesConfig, now time.Time) (*LearnedRules, error) {
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
		rs.finish()
	}
	return rs, nil
}

// LearnRulesByAgent learns one rule set per agent with a tool call or a
// task in the sessions f selects, each from that agent's sessions only,
// keyed by agent name.
func LearnRulesByAgent(ctx context.Context, src Source, f Filter, tax *taxonomy.Taxonomy, cfg RulesConfig, now time.Time) (map[string]*LearnedRules, error) {
	if len(f.By) > 0 {
		return nil, fmt.Errorf("rules are learned per task type: -by %v is not supported", f.By)
	}
	return learnRuleSets(ctx, src, f, tax, cfg, now, true)
}

// learnRuleSets runs the evidence queries once (grouped by agent when byAgent) and
// derives one rule set per agent ("" for all).
func learnRuleSets(ctx context.Context, src Source, f Filter, tax *taxonomy.Taxonomy, cfg RulesConfig, now time.Time, byAgent bool) (map[string]*LearnedRules, error) {
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
	t, err := runTyped(ctx, src, "analyze/rules_replace.sql", rf, tax)
	if err != nil {
		return nil, err
	}
	sets := map[string]*LearnedRules{}
	// set returns the rule set of agent: keyed by agent name when
	// byAgent, else the one set under "".
	set := func(agent *string) *LearnedRules {
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
		rs.finish()
	}
	return sets, nil
}

func newRuleSet(f Filter, tax *taxonomy.Taxonomy, cfg RulesConfig, now time.Time, agent string) *LearnedRules {
	rs := &LearnedRules{
		GeneratedAt: now.UTC(),
		Classifier:  tax.ID(),
		Agent:       agent,
		Thresholds:  cfg,
		Rules:       []LearnedRule{},
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
func avoidRule(h *HintRow, cfg RulesConfig) (LearnedRule, bool) {
	if h.Calls < cfg.MinCalls || h.OtherFailureRate == nil || h.PValue == nil {
		return LearnedRule{}, false
	}
	e := callEvidence(h)
	base := *h.OtherFailureRate
	if !(e.FailureCI.Lo > base && e.FailureCI.Lo >= cfg.AvoidLift*base && *h.PValue < cfg.Alpha) {
		return LearnedRule{}, false
	}
	return LearnedRule{
		Kind:       RuleAvoid,
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
func preferRule(h *HintRow, cfg RulesConfig) (LearnedRule, bool) {
	if h.Calls < cfg.MinCalls {
		return LearnedRule{}, false
	}
	e := callEvidence(h)
	successLo := 1 - e.FailureCI.Hi
	worse := h.OtherFailureRate != nil && h.PValue != nil && e.FailureRate > *h.OtherFailureRate && *h.PValue < cfg.Alpha
	if !(successLo >= cfg.PreferSuccess && e.Share >= cfg.PreferShare && !worse) {
		return LearnedRule{}, false
	}
	return LearnedRule{
		Kind:       RulePrefer,
		TaskType:   h.TaskType.String(),
		ToolHint:   *h.Hint,
		Support:    h.Calls,
		Confidence: successLo,
		Evidence:   e,
	}, true
}

// replaceRule: the swap seen in enough replans, and the added tasks
// succeeding with a lower bound at or above the threshold.
func replaceRule(c *row, cfg RulesConfig) (LearnedRule, bool) {
	e := &ReplaceEvidence{
		Replans:   c.int("replans"),
		Added:     c.int("added"),
		Completed: c.int("completed"),
		Succeeded: c.int("succeeded"),
	}
	if e.Replans < cfg.MinReplans || e.Added == 0 {
		return LearnedRule{}, false
	}
	e.SuccessRate = *Rate(e.Succeeded, e.Added)
	e.SuccessCI = *Wilson(e.Succeeded, e.Added, Z95)
	if e.SuccessCI.Lo < cfg.ReplaceSuccess {
		return LearnedRule{}, false
	}
	return LearnedRule{
		Kind:       RuleReplace,
		TaskType:   c.need("task_type"),
		ToolHint:   c.need("from_hint"),
		Instead:    c.need("to_hint"),
		Support:    e.Replans,
		Confidence: e.SuccessCI.Lo,
		Evidence:   e,
	}, true
}

var ruleKindOrder = map[string]int{RuleAvoid: 0, RuleReplace: 1, RulePrefer: 2}

// finish resolves conflicts, names the rules, orders them, writes their
// instructions and versions the set.
func (rs *LearnedRules) finish() {
	// A replace rule's target, else a prefer rule's hint, is what an avoid
	// rule suggests instead; the best-supported one when there are several.
	better := map[string]LearnedRule{}
	for _, r := range rs.Rules {
		if r.Kind == RuleAvoid {
			continue
		}
		k := r.TaskType + "\x00" + r.ToolHint
		if r.Kind == RulePrefer {
			k = r.TaskType + "\x00"
		}
		if b, ok := better[k]; !ok || r.Confidence > b.Confidence {
			better[k] = r
		}
	}
	for i := range rs.Rules {
		r := &rs.Rules[i]
		if r.Kind != RuleAvoid {
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
		r.ID = r.Kind + ":" + r.TaskType + ":" + r.ToolHint
		if r.Kind == RuleReplace {
			r.ID += ":" + r.Instead
		}
		r.Instruction = ruleInstruction(*r)
	}
	slices.SortFunc(rs.Rules, func(a, b LearnedRule) int {
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
func ruleInstruction(r LearnedRule) string {
	switch r.Kind {
	case RulePrefer:
		return fmt.Sprintf("For %s tasks, prefer the tool %s: it is what these tasks use most, and it succeeds.", r.TaskType, r.ToolHint)
	case RuleAvoid:
		s := fmt.Sprintf("For %s tasks, do not hint the tool %s: it fails far more often than the alternatives.", r.TaskType, r.ToolHint)
		if r.Instead != "" {
			s += fmt.Sprintf(" Use %s instead.", r.Instead)
		}
		return s
	case RuleReplace:
		return fmt.Sprintf("For %s tasks, use the tool %s instead of %s: replans kept replacing %s with %s, and it worked.", r.TaskType, r.Instead, r.ToolHint, r.ToolHint, r.Instead)
	}
	return ""
}

// ruleSetVersion hashes the rules as a planner sees them.
func ruleSetVersion(rules []LearnedRule) string {
	type seen struct {
		ID, Kind, TaskType, ToolHint, Instead, Instruction string
	}
	v := make([]seen, len(rules))
	for i, r := range rules {
		v[i] = seen{r.ID, r.Kind, r.TaskType, r.ToolHint, r.Instead, r.Instruction}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings only
	}
	sum := sha256.Sum256(b)
	return "rs-" + hex.EncodeToString(sum[:])[:12]
}
