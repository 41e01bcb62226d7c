package events

import "encoding/json"

// The data of each v1 event type. Field tags match schema/v1/<type>.json
// exactly; optional members are omitempty, nullable ones are pointers
// without omitempty (encoded as null). Marshalling turns nil required
// slices into [] so that New does not fail on them.

// Task is one entry of a task plan (schema/v1/task.json).
type Task struct {
	ID          int64   `json:"id"`
	Description string  `json:"description"`
	ToolHint    *string `json:"tool_hint"` // nil: no hint; never ""
	Completed   bool    `json:"completed"`
	TaskType    string  `json:"task_type,omitempty"`
}

// SessionStartedData is the data of agent.session.started.
type SessionStartedData struct {
	Goal         string   `json:"goal"`
	Agent        string   `json:"agent"`
	AgentVersion string   `json:"agent_version"`
	Model        string   `json:"model"`
	Tools        []string `json:"tools"`
	TaskType     string   `json:"task_type,omitempty"`
	Ruleset      string   `json:"ruleset,omitempty"`
	Rules        []string `json:"rules,omitempty"`
	// Assignment (v1.4) is the arm of the rule set's randomised holdout
	// the session was assigned to, when the rule set has one.
	Assignment *Assignment `json:"assignment,omitempty"`
}

// Assignment is the arm of a randomised holdout (agent.session.started,
// v1.4): the rule set's version, the arm, the holdout share, and the unit
// the arm was drawn for (agent/ruleset.Assign draws it).
type Assignment struct {
	Ruleset string  `json:"ruleset"`
	Arm     Arm     `json:"arm"`
	Holdout float64 `json:"holdout"`
	Unit    Unit    `json:"unit"`
	UnitID  string  `json:"unit_id,omitempty"`
	// Rules are the arms of the rules with a holdout of their own
	// (ruleset.AssignRule), drawn in the rules arm only.
	Rules []RuleArm `json:"rules,omitempty"`
}

// RuleArm is one rule's own arm: held out of the session (holdout) or
// applied (rules), with the rule's holdout share.
type RuleArm struct {
	ID      string  `json:"id"`
	Arm     Arm     `json:"arm"`
	Holdout float64 `json:"holdout"`
}

// PlanCreatedData is the data of agent.plan.created.
type PlanCreatedData struct {
	Tasks      []Task `json:"tasks"`
	Origin     Origin `json:"origin"`
	ParseError string `json:"parse_error,omitempty"`
}

// HintStrippedData is the data of agent.hint.stripped.
type HintStrippedData struct {
	TaskID   int64       `json:"task_id"`
	ToolHint string      `json:"tool_hint"`
	Phase    Phase       `json:"phase"`
	Reason   StripReason `json:"reason"`
	RuleID   string      `json:"rule_id,omitempty"`
}

// PlanUpdatedData is the data of agent.plan.updated: one update_task_plan
// call.
type PlanUpdatedData struct {
	Replan  int64   `json:"replan"`
	Trigger Trigger `json:"trigger"`
	Reason  string  `json:"reason,omitempty"`
	Tasks   []Task  `json:"tasks"`
	Kept    []int64 `json:"kept"`
	Dropped []Task  `json:"dropped"`
	OverCap bool    `json:"over_cap"`
	Valid   bool    `json:"valid"`
	Error   string  `json:"error,omitempty"`
}

// ToolCalledData is the data of agent.tool.called.
type ToolCalledData struct {
	TaskID     *int64  `json:"task_id"`
	Tool       string  `json:"tool"`
	Hint       *string `json:"hint"`
	OK         bool    `json:"ok"`
	ErrorKind  string  `json:"error_kind,omitempty"`
	Error      string  `json:"error,omitempty"` // at most 4096 characters
	DurationMS int64   `json:"duration_ms"`
	Control    bool    `json:"control"`
	// ArgsDigest (v1.3) is a digest of the call's arguments: equal
	// arguments, equal digests (ArgsDigest). Empty when not reported.
	ArgsDigest string `json:"args_digest,omitempty"`
}

// ModelCalledData is the data of agent.model.called (v1.3): one model call,
// emitted when it returns. A token count is nil when the call did not
// report it, never 0 for unknown.
type ModelCalledData struct {
	// TaskID is the task in progress when the call was made: the task the
	// call's answer served (nil before the first plan, or when the agent
	// does not know).
	TaskID            *int64 `json:"task_id"`
	Model             string `json:"model,omitempty"`
	InputTokens       *int64 `json:"input_tokens,omitempty"`
	OutputTokens      *int64 `json:"output_tokens,omitempty"`
	CachedInputTokens *int64 `json:"cached_input_tokens,omitempty"`
	DurationMS        int64  `json:"duration_ms"`
}

// TaskCompletedData is the data of agent.task.completed.
type TaskCompletedData struct {
	TaskID     int64      `json:"task_id"`
	Completion Completion `json:"completion"`
	Reported   Completion `json:"reported,omitempty"`
	ToolCalls  int64      `json:"tool_calls"`
	Summary    string     `json:"summary,omitempty"`
}

// DepthLimitReachedData is the data of agent.depth_limit.reached.
type DepthLimitReachedData struct {
	TaskID    int64 `json:"task_id"`
	ToolCalls int64 `json:"tool_calls"`
	Limit     int64 `json:"limit"`
}

// SessionEndedData is the data of agent.session.ended.
type SessionEndedData struct {
	Outcome         Outcome  `json:"outcome"`
	Replans         int64    `json:"replans"`
	ToolCalls       int64    `json:"tool_calls"`
	FailedToolCalls int64    `json:"failed_tool_calls"`
	Iterations      int64    `json:"iterations"`
	DurationMS      int64    `json:"duration_ms"`
	Feedback        Feedback `json:"feedback,omitempty"`
	// Usage (v1.2) is what the session's model calls used, when the agent
	// reported it.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is what a session's model calls used (agent.session.ended, v1.2):
// the calls made, and the tokens and time they took as far as they were
// reported. A token count is absent when no call reported it, never 0 for
// unknown.
type Usage struct {
	ModelCalls        int64  `json:"model_calls"`
	InputTokens       *int64 `json:"input_tokens,omitempty"`
	OutputTokens      *int64 `json:"output_tokens,omitempty"`
	CachedInputTokens *int64 `json:"cached_input_tokens,omitempty"`
	// ModelMS is the model calls' wall time summed.
	ModelMS int64 `json:"model_ms"`
}

// MarshalJSON encodes d with nil Tools as [].
func (d SessionStartedData) MarshalJSON() ([]byte, error) {
	type plain SessionStartedData
	p := plain(d)
	if p.Tools == nil {
		p.Tools = []string{}
	}
	return json.Marshal(p)
}

// MarshalJSON encodes d with nil Tasks as [].
func (d PlanCreatedData) MarshalJSON() ([]byte, error) {
	type plain PlanCreatedData
	p := plain(d)
	if p.Tasks == nil {
		p.Tasks = []Task{}
	}
	return json.Marshal(p)
}

// MarshalJSON encodes d with nil Tasks, Kept and Dropped as [].
func (d PlanUpdatedData) MarshalJSON() ([]byte, error) {
	type plain PlanUpdatedData
	p := plain(d)
	if p.Tasks == nil {
		p.Tasks = []Task{}
	}
	if p.Kept == nil {
		p.Kept = []int64{}
	}
	if p.Dropped == nil {
		p.Dropped = []Task{}
	}
	return json.Marshal(p)
}
