// Package agent is what an agent imports to take part in evosignal: a
// publisher that sends its planning events (CloudEvents v1, see
// schema/README.md) to NATS JetStream, and session helpers that number and
// type them.
//
// A minimal agent:
//
//	nc, _ := nats.Connect(url)
//	js, _ := jetstream.New(nc)
//	pub, _ := agent.NewPublisher(js, agent.PublisherConfig{})
//	defer pub.Close(ctx)
//	s := agent.NewSession(pub, "skilllite/host-a/worker-3", "")
//	s.Started(ctx, agent.SessionStarted{Goal: "…", Agent: "skilllite", …})
//	…
//	s.Ended(ctx, agent.SessionEnded{Outcome: agent.OutcomeSuccess, …})
//
// The package never logs; delivery failures come back as *DeliveryError from
// Flush and Close, and to PublisherConfig.OnError as they happen.
package agent

import "github.com/evosignal/evosignal/internal/events"

// The wire types of the v1 contract, re-exported for agents.
type (
	Event          = events.Event
	Task           = events.Task
	SessionStarted = events.SessionStartedData
	PlanCreated    = events.PlanCreatedData
	HintStripped   = events.HintStrippedData
	PlanUpdated    = events.PlanUpdatedData
	ToolCalled     = events.ToolCalledData
	ModelCalled    = events.ModelCalledData
	Usage          = events.Usage
	TaskCompleted  = events.TaskCompletedData
	DepthLimit     = events.DepthLimitReachedData
	SessionEnded   = events.SessionEndedData
	Assignment     = events.Assignment
	RuleArm        = events.RuleArm
)

// The enumerations of the v1 contract.
type (
	Origin      = events.Origin
	Phase       = events.Phase
	StripReason = events.StripReason
	Trigger     = events.Trigger
	Completion  = events.Completion
	Outcome     = events.Outcome
	Feedback    = events.Feedback
)

// Their values.
const (
	OriginModel    = events.OriginModel
	OriginFallback = events.OriginFallback
	OriginEmpty    = events.OriginEmpty

	PhasePlan   = events.PhasePlan
	PhaseReplan = events.PhaseReplan

	StripUnavailable = events.StripUnavailable
	StripRule        = events.StripRule

	TriggerModel        = events.TriggerModel
	TriggerDepthLimit   = events.TriggerDepthLimit
	TriggerToolFailures = events.TriggerToolFailures
	TriggerNoProgress   = events.TriggerNoProgress
	TriggerUser         = events.TriggerUser

	CompletionSuccess        = events.CompletionSuccess
	CompletionPartialSuccess = events.CompletionPartialSuccess
	CompletionFailure        = events.CompletionFailure

	OutcomeSuccess        = events.OutcomeSuccess
	OutcomePartialSuccess = events.OutcomePartialSuccess
	OutcomeFailure        = events.OutcomeFailure
	OutcomeAborted        = events.OutcomeAborted
	OutcomeTimeout        = events.OutcomeTimeout

	FeedbackPos     = events.FeedbackPos
	FeedbackNeg     = events.FeedbackNeg
	FeedbackNeutral = events.FeedbackNeutral
)
