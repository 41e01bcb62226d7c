package skilllite

import (
	"context"
	"strings"

	"github.com/evosignal/evosignal/internal/events"
)

// This file ends a turn at its done line: the outcome of
// agent.session.ended.

func (t *Translator) done(ctx context.Context, d doneData) error {
	// d.toolCalls, the agent's own count, is not used: SkillLite's count
	// leaves update_task_plan calls out (and an older one counted only
	// skill calls), while tool_calls in agent.session.ended counts every
	// agent.tool.called, control calls included. The bridge reports its
	// own tally, consistent with the events it emitted.
	return t.end(ctx, outcomeOf(d, t.turn.plan))
}

// outcomeOf maps a done line to the session's outcome.
func outcomeOf(d doneData, p plan) events.Outcome {
	switch normalize(d.completionType) {
	case "success", "succeeded", "successful", "completed", "complete", "done", "ok":
		return events.OutcomeSuccess
	case "partial_success", "partial", "partially_completed", "partial_completion":
		return events.OutcomePartialSuccess
	case "failure", "failed", "fail", "error", "incomplete", "not_completed":
		return events.OutcomeFailure
	case "aborted", "abort", "cancelled", "canceled", "interrupted", "stopped":
		return events.OutcomeAborted
	case "timeout", "timed_out", "time_out":
		return events.OutcomeTimeout
	}
	completed := 0
	for _, task := range p {
		if task.Completed {
			completed++
		}
	}
	switch {
	case d.hasTaskCompleted && d.taskCompleted:
		return events.OutcomeSuccess
	case d.hasTaskCompleted || completed < len(p):
		if completed > 0 {
			return events.OutcomePartialSuccess
		}
		return events.OutcomeFailure
	}
	return events.OutcomeSuccess
}

// completionOf maps what a complete_task call declared; "" when it names
// no completion.
func completionOf(s string) events.Completion {
	switch normalize(s) {
	case "success", "succeeded", "successful", "completed", "complete", "done", "ok":
		return events.CompletionSuccess
	case "partial_success", "partial", "partially_completed":
		return events.CompletionPartialSuccess
	case "failure", "failed", "fail", "error":
		return events.CompletionFailure
	}
	return ""
}

func normalize(s string) string {
	return strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
}
