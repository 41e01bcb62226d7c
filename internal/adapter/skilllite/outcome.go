package skilllite

import (
	"strings"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// This file ends a turn at its done line: the outcome of
// agent.session.ended.

// outcomeOf maps a done line to the session's outcome: SkillLite's
// completion_type (skilllite-agent/src/rpc.rs:693-698, agent_loop/mod.rs:1018-1026);
// without one (older versions, recorders), task_completed, else the plan p.
func outcomeOf(d doneData, p []plandialect.Task) events.Outcome {
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
		if task.Done() {
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
