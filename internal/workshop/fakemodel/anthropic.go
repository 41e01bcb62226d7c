package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicError answers as the Messages API does when it refuses a
// request.
func anthropicError(w http.ResponseWriter, status int, kind, msg string) {
	_ = writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": kind, "message": msg},
	})
}

// messages answers POST /v1/messages with the script's next step, streamed
// when the request asks for it.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	t, ok := s.begin(w, r, "/v1/messages", anthropicError)
	if !ok {
		return
	}
	i, req, step, body, model := t.i, t.req, t.step, t.body, t.model
	blocks, err := anthropicContent(req.Step, step)
	if err != nil {
		s.fail(err)
		anthropicError(w, http.StatusInternalServerError, "api_error", err.Error())
		s.answered(i, http.StatusInternalServerError)
		return
	}
	stop := "end_turn"
	if len(step.Calls) > 0 {
		stop = "tool_use"
	}
	id := fmt.Sprintf("msg_fake_%03d", i)
	usage := map[string]any{"input_tokens": tokens(body), "output_tokens": outputTokens(step), "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !t.stream {
		err := writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		if err != nil {
			s.fail(fmt.Errorf("answer /v1/messages: %w", err))
		}
		s.answeredWith(i, http.StatusOK, Usage{Input: tokens(body), Output: outputTokens(step)})
		return
	}
	e := newSSE(w)
	start := map[string]any{"input_tokens": tokens(body), "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start,
	}})
	e.event("ping", map[string]any{"type": "ping"})
	for n, b := range blocks {
		switch b["type"] {
		case "text":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": n, "content_block": map[string]any{"type": "text", "text": ""}})
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": n, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": n, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": n, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}})
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": n})
	}
	e.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": outputTokens(step)}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
	if e.err != nil {
		s.fail(fmt.Errorf("stream /v1/messages answer: %w", e.err))
	}
	s.answeredWith(i, http.StatusOK, Usage{Input: tokens(body), Output: outputTokens(step)})
}

// anthropicContent is step n as Messages API content blocks: its text,
// then a tool_use block per call.
func anthropicContent(n int, step *Step) ([]map[string]any, error) {
	var blocks []map[string]any
	if step.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": step.Text})
	}
	for i, c := range step.Calls {
		if c.Custom {
			return nil, fmt.Errorf("step %d: call %s is custom, which the Messages API has not", n, c.Name)
		}
		in, err := inputJSON(c)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": callID("toolu", n, i, c), "name": c.Name, "input": json.RawMessage(in)})
	}
	return blocks, nil
}

// outputTokens is a rough count of the tokens of a step's answer.
func outputTokens(step *Step) int {
	n := len(step.Text)/4 + 1
	for _, c := range step.Calls {
		in, _ := inputJSON(c)
		n += (len(c.Name)+len(in))/4 + 1
	}
	return n
}

// countTokens answers POST /v1/messages/count_tokens with a rough count.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	i, _, _, _ := s.take(r, body, false)
	if err != nil {
		s.fail(err)
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		s.answered(i, http.StatusBadRequest)
		return
	}
	_ = writeJSON(w, http.StatusOK, map[string]any{"input_tokens": tokens(body)})
	s.answered(i, http.StatusOK)
}

// models answers GET /v1/models with the one model the server plays, in
// the Anthropic and OpenAI list shapes at once (both read "data").
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	i, _, _, _ := s.take(r, nil, false)
	_ = writeJSON(w, http.StatusOK, map[string]any{
		"object":   "list",
		"data":     []any{map[string]any{"id": s.cfg.Model, "object": "model", "type": "model", "display_name": s.cfg.Model, "created": 0, "created_at": "2026-01-01T00:00:00Z", "owned_by": "fakemodel"}},
		"has_more": false, "first_id": s.cfg.Model, "last_id": s.cfg.Model,
	})
	s.answered(i, http.StatusOK)
}
