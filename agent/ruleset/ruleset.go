// Package ruleset is the learned-rules document: the rule set evosignal's
// analyzer learns (`analyze rules`, internal/metrics) and agents apply
// (agent/planner, loaded by agent/rules). Its contract is the JSON Schema
// schema/v1/ruleset.json; RuleSet is its one Go type, for the producer and
// every consumer.
//
// A rule set is published in a NATS JetStream key-value bucket,
// DefaultBucket: the rules learned from every agent under GlobalKey, and
// each agent's own under its name (Key). This package holds those names
// and imports only the standard library, so that an agent, and the
// analyzer, can use it without NATS.
package ruleset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"
)

// Where rule sets are published.
const (
	// DefaultBucket is the key-value bucket rule sets are published to.
	DefaultBucket = "evosignal_rules"
	// GlobalKey holds the rule set learned from all agents.
	GlobalKey = "global"
)

// validKey is what a key-value key may be (nats.go's rule for keys).
var validKey = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)

// Key returns the key of agent's rule set, or an error when the agent name
// cannot be a key (it can whenever it is a subject token an agent may
// publish under, which is how evosignal names agents).
func Key(agent string) (string, error) {
	if !validKey.MatchString(agent) || agent[0] == '.' || agent[len(agent)-1] == '.' {
		return "", fmt.Errorf("agent name %q is not a valid key-value key", agent)
	}
	return agent, nil
}

// Kind says what a rule does to a task's tool hint.
type Kind string

// Rule kinds.
const (
	// KindPrefer: a task of the rule's type that has no hint gets ToolHint
	// (when it is available).
	KindPrefer Kind = "prefer"
	// KindAvoid: ToolHint is removed from tasks of the rule's type; when
	// Instead is set and available, it replaces it.
	KindAvoid Kind = "avoid"
	// KindReplace: as KindAvoid, with Instead required.
	KindReplace Kind = "replace"
)

// RuleSet is a version of the learned rules:
//
//	{"version": "rs-3f1c…", "generated_at": "…", "window": {…}, "classifier": "…",
//	 "thresholds": {…}, "rules": [{"id": "avoid:coding:search_web", "kind": "avoid", …}]}
//
// An agent needs only version and rules; the other members say how the
// rules were learned. Members a reader does not know are ignored, so that
// the analyzer can add some.
type RuleSet struct {
	// Version is "rs-" and the first 12 hex digits of the SHA-256 of the
	// rules as a planner sees them (id, kind, task_type, tool_hint,
	// instead, instruction, in order): it changes exactly when the rules an
	// agent applies change, not when only their evidence does. Agents
	// report it as ruleset in agent.session.started.
	Version     string    `json:"version"`
	GeneratedAt time.Time `json:"generated_at"`
	Window      Window    `json:"window"`
	// Classifier is the task taxonomy the task types come from (its ID).
	Classifier string `json:"classifier"`
	// Agent is the agent whose sessions the rules were learned from; empty
	// for all agents.
	Agent      string     `json:"agent,omitempty"`
	Thresholds Thresholds `json:"thresholds"`
	// Holdout (v1.4) is the share of sessions (or workspaces) an agent
	// holds out as a randomised control, in [0, 0.5]: Assign puts each in
	// the holdout arm with this probability, where no rule applies. 0
	// (absent): no holdout, every session applies the rules.
	Holdout float64 `json:"holdout,omitempty"`
	// RolledBack (v1.4) is set on a rule set published in place of one
	// whose randomised effect was harmful: what was rolled back, and the
	// evidence. The rules are those of the last good set (or none).
	RolledBack *Rollback `json:"rolled_back,omitempty"`
	// Retired (v1.4) are rules whose own randomised effect (their
	// per-rule holdout, Rule.Holdout) was harmful: the learner leaves them
	// out of every later set of the key, and each set carries the list on.
	Retired []Retired `json:"retired,omitempty"`
	Rules   []Rule    `json:"rules"`
}

// Retired records a rule taken out because its randomised effect alone
// (sessions applying it against those holding it out, within the rules
// arm of the set) was harmful: the rule's id, the set version it was
// measured in, and the evidence as in Rollback.
type Retired struct {
	Rule string `json:"rule"`
	Rollback
}

// Rollback records a harmful rule set replaced by the last good one: its
// version, the metric its randomised effect was harmful on, the effect
// (rules minus holdout) with its always-valid 95% interval, each arm's
// sessions, and when.
type Rollback struct {
	Version         string    `json:"version"`
	Metric          string    `json:"metric"`
	Effect          float64   `json:"effect"`
	Lo              float64   `json:"lo"`
	Hi              float64   `json:"hi"`
	SessionsRules   int64     `json:"sessions_rules"`
	SessionsHoldout int64     `json:"sessions_holdout"`
	At              time.Time `json:"at"`
}

// Window is the time window a rule set was learned from: sessions started
// in [since, until); null is open.
type Window struct {
	Since *time.Time `json:"since"`
	Until *time.Time `json:"until"`
}

// Thresholds are what a learned rule had to pass (analyze rules' flags).
type Thresholds struct {
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

// Rule is one learned planning rule with its evidence.
type Rule struct {
	// ID names the rule in agent.session.started (rules) and in
	// agent.hint.stripped (rule_id). The analyzer makes it
	// kind:task_type:tool_hint (replace: kind:task_type:tool_hint:instead),
	// the same for as long as the rule holds.
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// TaskType is the type of task the rule applies to: a task's own
	// task_type, else the session's. A task without either matches no rule.
	TaskType string `json:"task_type"`
	// ToolHint is the hint preferred (prefer) or forbidden (avoid, replace).
	ToolHint string `json:"tool_hint"`
	// Instead replaces a forbidden hint (replace: required; avoid: a better
	// hint for the type when one is known).
	Instead string `json:"instead,omitempty"`
	// Instruction is the rule in words, for a planning prompt; the
	// reference planner does not read it.
	Instruction string `json:"instruction,omitempty"`
	// Support: prefer and avoid, the hint's calls in the type; replace,
	// the replans showing the swap.
	Support int64 `json:"support"`
	// Confidence: the lower bound of the 95% Wilson interval of the rate
	// the rule rests on: prefer, the hint's success rate; avoid, its
	// failure rate; replace, the added tasks' success rate.
	Confidence float64 `json:"confidence"`
	// Holdout (v1.4) is the rule's own holdout share, in [0, 0.5]: within
	// the set's rules arm, AssignRule holds the rule out of a session (or
	// workspace) with this probability, independently of the set's other
	// rules, so that its effect alone is randomised too. 0 (absent): the
	// rule applies wherever the set does. A rule set with rule holdouts
	// has a holdout of its own.
	Holdout float64 `json:"holdout,omitempty"`
	// Evidence is the numbers behind the rule (schema/v1/ruleset.json
	// documents them): the analyzer's *metrics.CallEvidence or
	// *metrics.ReplaceEvidence; decoded, a map.
	Evidence any `json:"evidence"`
}

// Parse decodes and validates the JSON of a rule set.
func Parse(b []byte) (RuleSet, error) {
	var rs RuleSet
	if err := json.Unmarshal(b, &rs); err != nil {
		return RuleSet{}, fmt.Errorf("decode rule set: %w", err)
	}
	if err := rs.Validate(); err != nil {
		return RuleSet{}, fmt.Errorf("rule set %q: %w", rs.Version, err)
	}
	return rs, nil
}

// Validate reports every problem of rs at once, joined with errors.Join:
// a missing version (when there are rules), a holdout outside [0, 0.5],
// and per rule an empty or repeated id, an unknown kind, an empty
// task_type or tool_hint, a replace rule without instead, instead equal to
// tool_hint, or a rule holdout outside [0, 0.5] or in a set without a
// holdout; and a retired entry without a rule id.
func (rs RuleSet) Validate() error {
	var errs []error
	if rs.Version == "" && len(rs.Rules) > 0 {
		errs = append(errs, errors.New("no version"))
	}
	if !(rs.Holdout >= 0 && rs.Holdout <= MaxHoldout) {
		errs = append(errs, fmt.Errorf("holdout %v is not a share in [0, %v]", rs.Holdout, MaxHoldout))
	}
	for i, r := range rs.Retired {
		if r.Rule == "" {
			errs = append(errs, fmt.Errorf("retired %d: no rule id", i))
		}
	}
	seen := make(map[string]bool, len(rs.Rules))
	for i, r := range rs.Rules {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("rule %d (%q): %s", i, r.ID, fmt.Sprintf(format, args...)))
		}
		switch {
		case r.ID == "":
			bad("empty id")
		case seen[r.ID]:
			bad("id used twice")
		}
		seen[r.ID] = true
		switch r.Kind {
		case KindPrefer, KindAvoid, KindReplace:
		default:
			bad("kind %q is not one of prefer, avoid, replace", r.Kind)
		}
		if strings.TrimSpace(r.TaskType) == "" {
			bad("empty task_type")
		}
		if strings.TrimSpace(r.ToolHint) == "" {
			bad("empty tool_hint")
		}
		if r.Kind == KindReplace && strings.TrimSpace(r.Instead) == "" {
			bad("replace rule without instead")
		}
		if r.Instead != "" && r.Instead == r.ToolHint {
			bad("instead is the tool_hint itself")
		}
		switch {
		case !(r.Holdout >= 0 && r.Holdout <= MaxHoldout):
			bad("holdout %v is not a share in [0, %v]", r.Holdout, MaxHoldout)
		case r.Holdout > 0 && !(rs.Holdout > 0):
			bad("a rule holdout in a set without a holdout (the rule arms are drawn within the set's rules arm)")
		}
	}
	return errors.Join(errs...)
}

// IDs returns the ids of the rules, in order; nil when there are none.
func (rs RuleSet) IDs() []string {
	if len(rs.Rules) == 0 {
		return nil
	}
	ids := make([]string, len(rs.Rules))
	for i, r := range rs.Rules {
		ids[i] = r.ID
	}
	return ids
}

// MaxHoldout is the largest holdout share a rule set may have.
const MaxHoldout = 0.5

// Arms of a randomised holdout (agent.session.started assignment, v1.4).
const (
	ArmRules   = "rules"
	ArmHoldout = "holdout"
)

// Assign is the arm of unit (a session id, or a workspace's id) under the
// holdout of the rule set version: ArmHoldout when the first 8 bytes of
// SHA-256("evosignal-holdout\x00" + version + "\x00" + unit), read as a
// big-endian unsigned integer u, satisfy u < holdout × 2^64; else ArmRules.
// The same version and unit always give the same arm, so an agent in any
// language can follow it and anyone can check it (schema/README.md,
// "Randomised holdouts"); a new version draws anew. A holdout of 0 (or an
// empty version) is ArmRules.
func Assign(version, unit string, holdout float64) string {
	if version == "" || !(holdout > 0) {
		return ArmRules
	}
	h := sha256.Sum256([]byte("evosignal-holdout\x00" + version + "\x00" + unit))
	u := binary.BigEndian.Uint64(h[:8])
	// u < holdout·2^64, compared exactly: holdout is at most 0.5, so the
	// product fits a uint64 after the float's scaling by 2^64.
	limit := new(big.Float).SetPrec(128).Mul(big.NewFloat(min(holdout, 1)).SetPrec(128), new(big.Float).SetPrec(128).SetMantExp(big.NewFloat(1), 64))
	if new(big.Float).SetPrec(128).SetUint64(u).Cmp(limit) < 0 {
		return ArmHoldout
	}
	return ArmRules
}

// AssignRule is the arm of rule ruleID under its own holdout share within
// the rules arm of rule set version: Assign with the version and the
// rule's id joined by a NUL byte in place of the version, so that
// SHA-256("evosignal-holdout\x00" + version + "\x00" + ruleID + "\x00" +
// unit) decides, independently for each rule and of the set's own draw.
func AssignRule(version, ruleID, unit string, holdout float64) string {
	if version == "" || ruleID == "" {
		return ArmRules
	}
	return Assign(version+"\x00"+ruleID, unit, holdout)
}

// RetiredIDs is the set of the ids of rs's retired rules.
func (rs RuleSet) RetiredIDs() map[string]bool {
	ids := make(map[string]bool, len(rs.Retired))
	for _, r := range rs.Retired {
		ids[r.Rule] = true
	}
	return ids
}

// Drawn is what a unit (a session, or a workspace) applies of a rule set
// under its holdouts: its arm, the rule set it applies (none in the
// holdout arm; without the rules held out on their own in the rules arm),
// and the own arms of the rules with a holdout of their own.
type Drawn struct {
	Arm     string
	Applied RuleSet
	Rules   []RuleArm
}

// RuleArm is one rule's own arm (agent.session.started assignment.rules).
type RuleArm struct {
	ID      string  `json:"id"`
	Arm     string  `json:"arm"`
	Holdout float64 `json:"holdout"`
}

// Draw draws unit's arms under rs: Assign for the set; in the rules arm,
// AssignRule for each rule with a holdout of its own, a held-out rule left
// out of Applied. Without a holdout (or a version) the unit applies rs
// whole, in ArmRules.
func Draw(rs RuleSet, unit string) Drawn {
	if rs.Version == "" || !(rs.Holdout > 0) {
		return Drawn{Arm: ArmRules, Applied: rs}
	}
	if Assign(rs.Version, unit, rs.Holdout) == ArmHoldout {
		return Drawn{Arm: ArmHoldout}
	}
	d := Drawn{Arm: ArmRules, Applied: rs}
	kept := make([]Rule, 0, len(rs.Rules))
	for _, r := range rs.Rules {
		if r.Holdout > 0 {
			arm := AssignRule(rs.Version, r.ID, unit, r.Holdout)
			d.Rules = append(d.Rules, RuleArm{ID: r.ID, Arm: arm, Holdout: r.Holdout})
			if arm == ArmHoldout {
				continue
			}
		}
		kept = append(kept, r)
	}
	if len(kept) < len(rs.Rules) {
		d.Applied.Rules = kept
	}
	return d
}
