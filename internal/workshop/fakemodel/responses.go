package fakemodel

import (
	"fmt"
	"net/http"
	"time"
)

// openAIError answers as the OpenAI API does when it refuses a request.
func openAIError(w http.ResponseWriter, status int, kind, msg string) {
	_ = writeJSON(w, status, map[string]any{
		"error": map[string]any{"type": kind, "code": kind, "message": msg, "param": nil},
	})
}

// responses answers POST /v1/responses with the script's next step:
// a message item for its text, a function_call item per call (a
// custom_tool_call item per custom one).
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	t, ok := s.begin(w, r, "/v1/responses", openAIError)
	if !ok {
		return
	}
	i, req, step, body, model := t.i, t.req, t.step, t.body, t.model
	items, err := responseItems(i, req.Step, step)
	if err != nil {
		s.fail(err)
		openAIError(w, http.StatusInternalServerError, "server_error", err.Error())
		s.answered(i, http.StatusInternalServerError)
		return
	}
	id := fmt.Sprintf("resp_fake_%03d", i)
	created := time.Now().Unix()
	response := func(status string, output []map[string]any, usage any) map[string]any {
		return map[string]any{
			"id": id, "object": "response", "created_at": created, "status": status, "model": model,
			"output": output, "usage": usage, "error": nil, "incomplete_details": nil,
			"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		}
	}
	out := outputTokens(step)
	usage := map[string]any{
		"input_tokens": tokens(body), "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": tokens(body) + out,
	}
	if !t.stream {
		if err := writeJSON(w, http.StatusOK, response("completed", items, usage)); err != nil {
			s.fail(fmt.Errorf("answer /v1/responses: %w", err))
		}
		s.answeredWith(i, http.StatusOK, Usage{Input: tokens(body), Output: out})
		return
	}
	e := newSSE(w)
	seq := 0
	event := func(name string, v map[string]any) {
		v["type"] = name
		v["sequence_number"] = seq
		seq++
		e.event(name, v)
	}
	event("response.created", map[string]any{"response": response("in_progress", []map[string]any{}, nil)})
	event("response.in_progress", map[string]any{"response": response("in_progress", []map[string]any{}, nil)})
	for n, item := range items {
		switch item["type"] {
		case "message":
			added := map[string]any{"type": "message", "id": item["id"], "status": "in_progress", "role": "assistant", "content": []any{}}
			event("response.output_item.added", map[string]any{"output_index": n, "item": added})
			part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
			event("response.content_part.added", map[string]any{"item_id": item["id"], "output_index": n, "content_index": 0, "part": part})
			event("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": n, "content_index": 0, "delta": step.Text})
			event("response.output_text.done", map[string]any{"item_id": item["id"], "output_index": n, "content_index": 0, "text": step.Text})
			done := map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}
			event("response.content_part.done", map[string]any{"item_id": item["id"], "output_index": n, "content_index": 0, "part": done})
		case "custom_tool_call":
			added := map[string]any{"type": "custom_tool_call", "id": item["id"], "call_id": item["call_id"], "name": item["name"], "input": "", "status": "in_progress"}
			event("response.output_item.added", map[string]any{"output_index": n, "item": added})
			event("response.custom_tool_call_input.delta", map[string]any{"item_id": item["id"], "output_index": n, "delta": item["input"]})
			event("response.custom_tool_call_input.done", map[string]any{"item_id": item["id"], "output_index": n, "input": item["input"]})
		case "function_call":
			added := map[string]any{"type": "function_call", "id": item["id"], "call_id": item["call_id"], "name": item["name"], "arguments": "", "status": "in_progress"}
			event("response.output_item.added", map[string]any{"output_index": n, "item": added})
			event("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": n, "delta": item["arguments"]})
			event("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": n, "arguments": item["arguments"]})
		}
		event("response.output_item.done", map[string]any{"output_index": n, "item": item})
	}
	event("response.completed", map[string]any{"response": response("completed", items, usage)})
	if e.err != nil {
		s.fail(fmt.Errorf("stream /v1/responses answer: %w", e.err))
	}
	s.answeredWith(i, http.StatusOK, Usage{Input: tokens(body), Output: out})
}

// responseItems is step n (answering request r) as Responses API output
// items: a message for its text, then a function_call per call.
func responseItems(r, n int, step *Step) ([]map[string]any, error) {
	var items []map[string]any
	if step.Text != "" {
		items = append(items, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_fake_%03d", r), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}},
		})
	}
	for i, c := range step.Calls {
		if c.Custom {
			in, ok := c.Input.(string)
			if !ok {
				return nil, fmt.Errorf("step %d: custom call %s has input %T, want a string", n, c.Name, c.Input)
			}
			items = append(items, map[string]any{
				"type": "custom_tool_call", "id": fmt.Sprintf("ctc_fake_%03d_%d", r, i), "call_id": callID("call", n, i, c),
				"name": c.Name, "input": in, "status": "completed",
			})
			continue
		}
		args, err := inputJSON(c)
		if err != nil {
			return nil, err
		}
		items = append(items, map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_fake_%03d_%d", r, i), "call_id": callID("call", n, i, c),
			"name": c.Name, "arguments": args, "status": "completed",
		})
	}
	return items, nil
}
