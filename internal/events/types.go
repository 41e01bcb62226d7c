package events

// Type is the CloudEvents type attribute of an evosignal event. Each v1 type
// has a constant here and a schema file schema/v1/<type>.json for its data;
// a minor version that changes a type's data (v1.1: agent.session.ended)
// has its own file of it, schema/v1.1/<type>.json. The decoder accepts the
// latest version (schema.Latest), whose events include every v1 event.
type Type string

// The v1 event types.
const (
	SessionStarted    Type = "agent.session.started"
	PlanCreated       Type = "agent.plan.created"
	HintStripped      Type = "agent.hint.stripped"
	PlanUpdated       Type = "agent.plan.updated"
	ToolCalled        Type = "agent.tool.called"
	TaskCompleted     Type = "agent.task.completed"
	DepthLimitReached Type = "agent.depth_limit.reached"
	SessionEnded      Type = "agent.session.ended"
	// ModelCalled (v1.3) is one model call, with its tokens and time.
	ModelCalled Type = "agent.model.called"
)

// Types lists every event type: the v1 types in the order of a typical
// session, then those later minor versions added (v1.3: agent.model.called,
// which a session emits before each plan, replan and tool call it decides).
var Types = []Type{
	SessionStarted,
	PlanCreated,
	HintStripped,
	PlanUpdated,
	ToolCalled,
	TaskCompleted,
	DepthLimitReached,
	SessionEnded,
	ModelCalled,
}

// Known reports whether t is an event type of the latest version.
func (t Type) Known() bool {
	_, ok := lookupType([]byte(t))
	return ok
}

// DataSchema returns the $id of the JSON Schema of t's data in the latest
// version of the contract (the file of t in the newest version that has
// one), suitable for the optional dataschema attribute of any event the
// decoder accepts. Data that is also valid v1 data may name the v1 file
// instead (schema/README.md, "Versioning"); evosignal never reads the
// attribute to choose a schema.
func (t Type) DataSchema() string {
	switch t {
	case SessionStarted:
		return SchemaBaseV1_4 + string(t) + ".json"
	case SessionEnded:
		return SchemaBaseV1_2 + string(t) + ".json"
	case ModelCalled, ToolCalled:
		return SchemaBaseV1_3 + string(t) + ".json"
	}
	return SchemaBaseV1 + string(t) + ".json"
}

// SchemaBaseV1 … SchemaBaseV1_4 are the URL prefixes of the v1, v1.1, v1.2,
// v1.3 and v1.4 JSON Schema $ids (identifiers, never fetched).
const (
	SchemaBaseV1   = "https://schema.evosignal.dev/v1/"
	SchemaBaseV1_1 = "https://schema.evosignal.dev/v1.1/"
	SchemaBaseV1_2 = "https://schema.evosignal.dev/v1.2/"
	SchemaBaseV1_3 = "https://schema.evosignal.dev/v1.3/"
	SchemaBaseV1_4 = "https://schema.evosignal.dev/v1.4/"
)

// lookupType maps a type name to its constant without allocating.
func lookupType(b []byte) (Type, bool) {
	switch string(b) {
	case string(SessionStarted):
		return SessionStarted, true
	case string(PlanCreated):
		return PlanCreated, true
	case string(HintStripped):
		return HintStripped, true
	case string(PlanUpdated):
		return PlanUpdated, true
	case string(ToolCalled):
		return ToolCalled, true
	case string(TaskCompleted):
		return TaskCompleted, true
	case string(DepthLimitReached):
		return DepthLimitReached, true
	case string(SessionEnded):
		return SessionEnded, true
	case string(ModelCalled):
		return ModelCalled, true
	}
	return "", false
}

// Origin says where the tasks of agent.plan.created came from.
type Origin string

// Origin values.
const (
	OriginModel    Origin = "model"    // parsed from the model's answer
	OriginFallback Origin = "fallback" // the answer did not parse; the agent used a default plan
	OriginEmpty    Origin = "empty"    // no tasks
)

// Valid reports whether o is one of the Origin constants.
func (o Origin) Valid() bool { return oneOf(string(o), origins) }

// Phase says whether a hint was stripped from a plan or a replan.
type Phase string

// Phase values.
const (
	PhasePlan   Phase = "plan"
	PhaseReplan Phase = "replan"
)

// Valid reports whether p is one of the Phase constants.
func (p Phase) Valid() bool { return oneOf(string(p), phases) }

// StripReason says why a tool hint was stripped.
type StripReason string

// StripReason values.
const (
	StripUnavailable StripReason = "unavailable" // no such tool in the session: a hallucinated hint
	StripRule        StripReason = "rule"        // a learned rule forbids it; rule_id names the rule
)

// Valid reports whether r is one of the StripReason constants.
func (r StripReason) Valid() bool { return oneOf(string(r), stripReasons) }

// Trigger says what prompted a replan.
type Trigger string

// Trigger values.
const (
	TriggerModel        Trigger = "model"         // the model decided on its own
	TriggerDepthLimit   Trigger = "depth_limit"   // a task hit the tool-call depth limit
	TriggerToolFailures Trigger = "tool_failures" // repeated tool failures
	TriggerNoProgress   Trigger = "no_progress"   // the agent saw no progress
	TriggerUser         Trigger = "user"          // the user asked for it
)

// Valid reports whether t is one of the Trigger constants.
func (t Trigger) Valid() bool { return oneOf(string(t), triggers) }

// Completion is how a task ended.
type Completion string

// Completion values.
const (
	CompletionSuccess        Completion = "success"
	CompletionPartialSuccess Completion = "partial_success"
	CompletionFailure        Completion = "failure"
)

// Valid reports whether c is one of the Completion constants.
func (c Completion) Valid() bool { return oneOf(string(c), completions) }

// Outcome is how a session ended.
type Outcome string

// Outcome values.
const (
	OutcomeSuccess        Outcome = "success"
	OutcomePartialSuccess Outcome = "partial_success"
	OutcomeFailure        Outcome = "failure"
	OutcomeAborted        Outcome = "aborted"
	OutcomeTimeout        Outcome = "timeout"
	// OutcomeUnknown (v1.1): the agent has no evidence of how the session
	// went: it declared no outcome, did not complete every planned task by
	// its own account, and did not end on an error. The analyses leave such
	// sessions out of every success rate and say how many they left out.
	OutcomeUnknown Outcome = "unknown"
)

// Valid reports whether o is one of the Outcome constants.
func (o Outcome) Valid() bool { return oneOf(string(o), outcomes) }

// Feedback is the user's verdict on a session.
type Feedback string

// Feedback values.
const (
	FeedbackPos     Feedback = "pos"
	FeedbackNeg     Feedback = "neg"
	FeedbackNeutral Feedback = "neutral"
)

// Valid reports whether f is one of the Feedback constants.
func (f Feedback) Valid() bool { return oneOf(string(f), feedbacks) }

// Arm is the arm of a randomised holdout a session was assigned to
// (agent.session.started assignment, v1.4).
type Arm string

// Arm values.
const (
	// ArmRules: the session applies the rule set.
	ArmRules Arm = "rules"
	// ArmHoldout: the session applies no rule: a randomised control.
	ArmHoldout Arm = "holdout"
)

// Unit is what a holdout assigns: a session, or a workspace whose sessions
// share one arm.
type Unit string

// Unit values.
const (
	UnitSession   Unit = "session"
	UnitWorkspace Unit = "workspace"
)

// The enum value lists, in schema order; the validator uses them too.
var (
	origins      = []string{string(OriginModel), string(OriginFallback), string(OriginEmpty)}
	phases       = []string{string(PhasePlan), string(PhaseReplan)}
	stripReasons = []string{string(StripUnavailable), string(StripRule)}
	triggers     = []string{string(TriggerModel), string(TriggerDepthLimit), string(TriggerToolFailures), string(TriggerNoProgress), string(TriggerUser)}
	completions  = []string{string(CompletionSuccess), string(CompletionPartialSuccess), string(CompletionFailure)}
	outcomes     = []string{string(OutcomeSuccess), string(OutcomePartialSuccess), string(OutcomeFailure), string(OutcomeAborted), string(OutcomeTimeout), string(OutcomeUnknown)}
	feedbacks    = []string{string(FeedbackPos), string(FeedbackNeg), string(FeedbackNeutral)}
	arms         = []string{string(ArmRules), string(ArmHoldout)}
	units        = []string{string(UnitSession), string(UnitWorkspace)}
)

func oneOf(s string, list []string) bool {
	for _, v := range list {
		if s == v {
			return true
		}
	}
	return false
}
