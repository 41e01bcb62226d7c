package planner

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/evosignal/evosignal/agent"
)

// modelTask is a task as the model writes it. Ids and completed flags are
// ignored: a new plan is numbered from 1 and has nothing done.
type modelTask struct {
	Description string  `json:"description"`
	ToolHint    *string `json:"tool_hint"`
	TaskType    string  `json:"task_type"`
}

// Parse reads a plan from the model's answer: a JSON array of tasks
// {"description", "tool_hint", "task_type"}, optionally in a Markdown code
// fence. Other members (the model's id, completed) are ignored. The tasks
// are numbered from 1, not completed, with a blank hint made null. "[]" is
// an empty plan, not an error. Anything else (not a JSON array, a task that
// is not an object or has no description) is an error that says why.
func Parse(raw string) ([]agent.Task, error) {
	s := unfence(raw)
	if !strings.HasPrefix(s, "[") {
		return nil, fmt.Errorf("parse plan: expected a JSON array of tasks, got %s", preview(s))
	}
	var items []modelTask
	if err := json.Unmarshal([]byte(s), &items); err != nil {
		return nil, fmt.Errorf("parse plan: %w", err)
	}
	tasks := make([]agent.Task, 0, len(items))
	for i, it := range items {
		if strings.TrimSpace(it.Description) == "" {
			return nil, fmt.Errorf("parse plan: task %d has no description", i+1)
		}
		tasks = append(tasks, agent.Task{
			ID:          int64(i + 1),
			Description: it.Description,
			ToolHint:    nonBlank(it.ToolHint),
			TaskType:    strings.TrimSpace(it.TaskType),
		})
	}
	return tasks, nil
}

// unfence trims raw and removes a Markdown code fence around it (```json
// … ``` or ``` … ```), as models often add one.
func unfence(raw string) string {
	s := strings.TrimSpace(raw)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		rest = strings.TrimSuffix(strings.TrimSpace(rest), "```")
		s = strings.TrimSpace(rest)
	}
	return s
}

// preview describes s for an error message.
func preview(s string) string {
	if s == "" {
		return "nothing"
	}
	const max = 40
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// nonBlank trims a hint; a blank one is null.
func nonBlank(h *string) *string {
	if h == nil {
		return nil
	}
	s := strings.TrimSpace(*h)
	if s == "" {
		return nil
	}
	return &s
}
