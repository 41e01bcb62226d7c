package ingest

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/store"
)

// Reason codes of dead letters beyond the decoder's own.
const (
	ReasonOversize       = "oversize"
	ReasonSourceMismatch = "source_mismatch"
	// ReasonPlanTooLarge: a plan event (agent.plan.created or
	// agent.plan.updated) lists more tasks, or drops more, than
	// Config.MaxPlanTasks.
	ReasonPlanTooLarge = "plan_too_large"
)

// decode is events.Decode; a variable so that a test can play a newer
// contract, one that accepts what the current one dead-letters (see
// ReplayDeadLetters).
var decode = events.Decode

// classify turns one raw message into a store item: an accepted event, or a
// dead letter with a readable reason, by cfg's subject prefix and limits.
// subject is empty for file loads, which skips the subject/source check.
func classify(raw []byte, subject string, cfg Config) store.Item {
	it := store.Item{Raw: raw, Subject: subject}
	prefix, maxBytes := cfg.Prefix, cfg.MaxEventBytes
	if maxBytes > 0 && len(raw) > maxBytes {
		it.Dead = &store.Dead{
			Code:   ReasonOversize,
			Reason: fmt.Sprintf("event of %d bytes is over the limit of %d bytes", len(raw), maxBytes),
		}
		peekEnvelope(raw, it.Dead)
		return it
	}
	ev, err := decode(raw)
	if err != nil {
		it.Dead = &store.Dead{Code: string(events.ReasonSchema), Reason: err.Error()}
		var de *events.Error
		if errors.As(err, &de) {
			it.Dead.Code = string(de.Reason)
		}
		peekEnvelope(raw, it.Dead)
		return it
	}
	if subject != "" {
		agent := events.AgentOf(ev.Source)
		if got, ok := cfg.subjectAgent(subject); !ok || got != agent {
			it.Dead = &store.Dead{
				Code: ReasonSourceMismatch,
				Reason: fmt.Sprintf("source %q belongs to agent %q, which publishes on %s or below, not on %s",
					ev.Source, agent, bus.AgentSubject(prefix, agent), subject),
				Source: ev.Source, ID: ev.ID, Type: string(ev.Type),
			}
			return it
		}
	}
	if d := planTooLarge(ev, cfg.MaxPlanTasks); d != nil {
		it.Dead = d
		return it
	}
	it.Event = ev
	return it
}

// planTooLarge returns the dead letter of a plan event whose task list or
// dropped list is longer than max, nil for any other event.
func planTooLarge(ev *events.Event, max int) *store.Dead {
	if ev.Type != events.PlanCreated && ev.Type != events.PlanUpdated {
		return nil
	}
	p, err := ev.Payload()
	if err != nil {
		return nil // Decode checked it; a payload error cannot happen here
	}
	var tasks, dropped int
	switch d := p.(type) {
	case *events.PlanCreatedData:
		tasks = len(d.Tasks)
	case *events.PlanUpdatedData:
		tasks, dropped = len(d.Tasks), len(d.Dropped)
	}
	var what string
	switch {
	case tasks > max:
		what = fmt.Sprintf("lists %d tasks", tasks)
	case dropped > max:
		what = fmt.Sprintf("drops %d tasks", dropped)
	default:
		return nil
	}
	return &store.Dead{
		Code:   ReasonPlanTooLarge,
		Reason: fmt.Sprintf("the plan %s, over the limit of %d tasks per plan (ingest -max-plan-tasks)", what, max),
		Source: ev.Source, ID: ev.ID, Type: string(ev.Type),
	}
}

// peekEnvelope fills what can be read of a rejected event's envelope, so a
// dead letter can be traced to its agent.
func peekEnvelope(raw []byte, d *store.Dead) {
	var env struct {
		Source any `json:"source"`
		ID     any `json:"id"`
		Type   any `json:"type"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return
	}
	str := func(v any) string { s, _ := v.(string); return s }
	d.Source, d.ID, d.Type = str(env.Source), str(env.ID), str(env.Type)
}
