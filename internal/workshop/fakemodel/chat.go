package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Usage is the token usage an answer reported: input (prompt) tokens, of
// them the cached ones, and output (completion) tokens.
type Usage struct {
	Input, Output, Cached int
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{Input: u.Input + v.Input, Output: u.Output + v.Output, Cached: u.Cached + v.Cached}
}

// chatUsage is the usage the Chat Completions API reports for step n:
// fixed by the script alone, not by what the client sent, so that a test's
// truth is known before the client runs. The prompt grows by ten tokens a
// request from 100; from the second request on, 80 of them are cached (the
// instructions and tool schemas a provider caches); the completion is
// the step's rough count (outputTokens).
func chatUsage(n int, step *Step) Usage {
	u := Usage{Input: 100 + 10*n, Output: outputTokens(step)}
	if n > 0 {
		u.Cached = 80
	}
	return u
}

// ChatUsage is the usage the server reports, over the Chat Completions
// API, for each step of script, in order: the truth of the tokens of a
// client that asks for every step (and for the usage of a stream).
func ChatUsage(script []Step) []Usage {
	out := make([]Usage, len(script))
	for n := range script {
		out[n] = chatUsage(n, &script[n])
	}
	return out
}

// chatUsageJSON is u as the Chat Completions API writes it.
func chatUsageJSON(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.Cached, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
}

// chat answers POST /v1/chat/completions with the script's next step: an
// assistant message with the step's text as content and a function tool
// call per call, its arguments a JSON string. A stream is chat.completion
// chunks, then data: [DONE]; it reports usage (a last chunk with no
// choices) only when the request asks for it (stream_options.include_usage),
// as OpenAI does, and the usage recorded is then zero.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	t, ok := s.begin(w, r, "/v1/chat/completions", openAIError)
	if !ok {
		return
	}
	i, req, step, model := t.i, t.req, t.step, t.model
	calls, err := chatToolCalls(req.Step, step)
	if err != nil {
		s.fail(err)
		openAIError(w, http.StatusInternalServerError, "server_error", err.Error())
		s.answered(i, http.StatusInternalServerError)
		return
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	var usage Usage
	if req.Step >= 0 {
		usage = chatUsage(req.Step, step)
	}
	id := fmt.Sprintf("chatcmpl-fake-%03d", i)
	created := time.Now().Unix()
	if !t.stream {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		if step.Text != "" {
			msg["content"] = step.Text
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		err := writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices":            []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":              chatUsageJSON(usage),
			"system_fingerprint": "fp_fakemodel",
		})
		if err != nil {
			s.fail(fmt.Errorf("answer /v1/chat/completions: %w", err))
		}
		s.answeredWith(i, http.StatusOK, usage)
		return
	}
	var in struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(t.body, &in) // begin decoded it already
	e := newSSE(w)
	chunk := func(delta map[string]any, finish any) {
		e.data(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "system_fingerprint": "fp_fakemodel",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		})
	}
	chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	if step.Text != "" {
		chunk(map[string]any{"content": step.Text}, nil)
	}
	for n, c := range calls {
		fn := c["function"].(map[string]any)
		chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": n, "id": c["id"], "type": "function", "function": map[string]any{"name": fn["name"], "arguments": ""},
		}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": n, "function": map[string]any{"arguments": fn["arguments"]},
		}}}, nil)
	}
	chunk(map[string]any{}, finish)
	if in.StreamOptions.IncludeUsage {
		e.data(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "system_fingerprint": "fp_fakemodel",
			"choices": []any{}, "usage": chatUsageJSON(usage),
		})
	} else {
		usage = Usage{}
	}
	e.done()
	if e.err != nil {
		s.fail(fmt.Errorf("stream /v1/chat/completions answer: %w", e.err))
	}
	s.answeredWith(i, http.StatusOK, usage)
}

// chatToolCalls is step n's calls as Chat Completions tool calls, each a
// function whose arguments are its input as a JSON string.
func chatToolCalls(n int, step *Step) ([]map[string]any, error) {
	var calls []map[string]any
	for i, c := range step.Calls {
		if c.Custom {
			return nil, fmt.Errorf("step %d: call %s is custom, which the Chat Completions API has not", n, c.Name)
		}
		args, err := inputJSON(c)
		if err != nil {
			return nil, err
		}
		calls = append(calls, map[string]any{
			"id": callID("call", n, i, c), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": args},
		})
	}
	return calls, nil
}
