package fakemodel_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
)

var script = []fakemodel.Step{
	{Text: "Let me look.", Calls: []fakemodel.Call{{Name: "Bash", Input: map[string]any{"command": "ls"}}}},
	{Calls: []fakemodel.Call{{ID: "own_id", Name: "update_plan", Input: map[string]any{"plan": []any{}}}, {Name: "Read"}}},
	{Text: "Done."},
}

func start(t *testing.T, cfg fakemodel.Config) *fakemodel.Server {
	t.Helper()
	srv, err := fakemodel.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// event is one server-sent event.
type event struct {
	name string
	data map[string]any
}

func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("event %s: %v", name, err)
			}
			if d["type"] != name {
				t.Errorf("event %s has type %v", name, d["type"])
			}
			out = append(out, event{name, d})
		}
	}
	return out
}

// names returns the events' names.
func names(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.name)
	}
	return out
}

func TestMessagesStream(t *testing.T) {
	srv := start(t, fakemodel.Config{Script: script})
	resp := post(t, srv.URL()+"/v1/messages", `{"model":"m","stream":true,"messages":[]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	evs := readEvents(t, resp.Body)
	got := strings.Join(names(evs), " ")
	want := "message_start ping content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got != want {
		t.Fatalf("events = %s, want %s", got, want)
	}
	use := evs[5].data["content_block"].(map[string]any)
	if use["type"] != "tool_use" || use["name"] != "Bash" || use["id"] != "toolu_fake_00_0" {
		t.Errorf("tool_use block = %v", use)
	}
	if d := evs[6].data["delta"].(map[string]any); d["partial_json"] != `{"command":"ls"}` {
		t.Errorf("input delta = %v", d)
	}
	if d := evs[8].data["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Errorf("message_delta = %v", d)
	}
}

func TestMessagesNotStreamed(t *testing.T) {
	srv := start(t, fakemodel.Config{Script: script[2:]})
	resp := post(t, srv.URL()+"/v1/messages", `{"model":"m","messages":[]}`)
	var msg struct {
		Content    []map[string]any `json:"content"`
		StopReason string           `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0]["text"] != "Done." || msg.StopReason != "end_turn" {
		t.Errorf("message = %+v", msg)
	}
}

func TestResponsesStream(t *testing.T) {
	srv := start(t, fakemodel.Config{Script: script})
	post(t, srv.URL()+"/v1/responses", `{"model":"m","stream":true}`) // step 0
	resp := post(t, srv.URL()+"/v1/responses", `{"model":"m","stream":true}`)
	evs := readEvents(t, resp.Body)
	var done []map[string]any
	for _, e := range evs {
		if e.name == "response.output_item.done" {
			done = append(done, e.data["item"].(map[string]any))
		}
	}
	if last := evs[len(evs)-1]; last.name != "response.completed" {
		t.Fatalf("last event %s, want response.completed", last.name)
	}
	if len(done) != 2 || done[0]["call_id"] != "own_id" || done[0]["arguments"] != `{"plan":[]}` || done[1]["call_id"] != "call_fake_01_1" || done[1]["arguments"] != "{}" {
		t.Errorf("items = %v", done)
	}
	reqs := srv.Scripted()
	if len(reqs) != 2 || reqs[1].Step != 1 || reqs[1].Status != http.StatusOK {
		t.Errorf("scripted requests = %+v", reqs)
	}
}

func TestSideRequests(t *testing.T) {
	srv := start(t, fakemodel.Config{Script: script, Scripted: func(r fakemodel.Request) bool {
		return !strings.Contains(string(r.Body), `"max_tokens":1`)
	}})
	tests := []struct {
		name, method, path, body string
		status                   int
	}{
		{"count tokens", "POST", "/v1/messages/count_tokens", `{"messages":[]}`, 200},
		{"models", "GET", "/v1/models", "", 200},
		{"a side request", "POST", "/v1/messages", `{"max_tokens":1,"messages":[]}`, 200},
		{"unknown path", "POST", "/v1/complete", `{}`, 404},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL()+tt.path, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
	}
	if n := srv.Answered(); n != 0 {
		t.Errorf("side requests took %d steps", n)
	}
	if err := srv.Err(); err == nil || !strings.Contains(err.Error(), "/v1/complete") {
		t.Errorf("Err() = %v, want the unknown path", err)
	}
}

func TestScriptExhausted(t *testing.T) {
	srv := start(t, fakemodel.Config{Script: script[:1]})
	post(t, srv.URL()+"/v1/messages", `{"stream":true}`)
	resp := post(t, srv.URL()+"/v1/messages", `{"stream":true}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d past the script's end, want 400", resp.StatusCode)
	}
	if err := srv.Err(); !errors.Is(err, fakemodel.ErrScriptExhausted) {
		t.Errorf("Err() = %v, want ErrScriptExhausted", err)
	}
}

func TestCustomCall(t *testing.T) {
	custom := []fakemodel.Step{{Calls: []fakemodel.Call{{Name: "exec", Custom: true, Input: "text(1);"}}}}
	srv := start(t, fakemodel.Config{Script: custom})
	resp := post(t, srv.URL()+"/v1/responses", `{"stream":true}`)
	var item map[string]any
	for _, e := range readEvents(t, resp.Body) {
		if e.name == "response.output_item.done" {
			item = e.data["item"].(map[string]any)
		}
	}
	if item["type"] != "custom_tool_call" || item["name"] != "exec" || item["input"] != "text(1);" || item["call_id"] != "call_fake_00_0" {
		t.Errorf("custom call item = %v", item)
	}

	refused := start(t, fakemodel.Config{Script: custom})
	if resp := post(t, refused.URL()+"/v1/messages", `{"stream":true}`); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("a custom call over the Messages API: status %d, want 500", resp.StatusCode)
	}
	if refused.Err() == nil {
		t.Error("a custom call over the Messages API: no error reported")
	}
}

// readChunks reads a Chat Completions stream: its chunks, and whether it
// ended with data: [DONE].
func readChunks(t *testing.T, r io.Reader) ([]map[string]any, bool) {
	t.Helper()
	var out []map[string]any
	done := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("chunk %s: %v", line, err)
		}
		out = append(out, c)
	}
	return out, done
}

func TestChatStream(t *testing.T) {
	srv := start(t, fakemodel.Config{Script: script})
	resp := post(t, srv.URL()+"/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	chunks, done := readChunks(t, resp.Body)
	if !done {
		t.Error("the stream did not end with [DONE]")
	}
	var text, name, args, id, finish string
	var usage map[string]any
	for _, c := range chunks {
		if c["object"] != "chat.completion.chunk" {
			t.Errorf("chunk object %v", c["object"])
		}
		if u, ok := c["usage"].(map[string]any); ok {
			usage = u
		}
		for _, ch := range c["choices"].([]any) {
			ch := ch.(map[string]any)
			if f, ok := ch["finish_reason"].(string); ok {
				finish = f
			}
			d := ch["delta"].(map[string]any)
			if s, ok := d["content"].(string); ok {
				text += s
			}
			calls, _ := d["tool_calls"].([]any)
			for _, tc := range calls {
				tc := tc.(map[string]any)
				if s, ok := tc["id"].(string); ok {
					id = s
				}
				fn := tc["function"].(map[string]any)
				if s, ok := fn["name"].(string); ok {
					name = s
				}
				args += fn["arguments"].(string)
			}
		}
	}
	if text != "Let me look." || name != "Bash" || args != `{"command":"ls"}` || id != "call_fake_00_0" || finish != "tool_calls" {
		t.Errorf("streamed text %q, call %s %s %s, finish %s", text, id, name, args, finish)
	}
	want := fakemodel.ChatUsage(script)[0]
	details := usage["prompt_tokens_details"].(map[string]any)
	if usage["prompt_tokens"] != float64(want.Input) || usage["completion_tokens"] != float64(want.Output) || details["cached_tokens"] != float64(want.Cached) {
		t.Errorf("usage %v, want %+v", usage, want)
	}
	if got := srv.Usage(); got != want {
		t.Errorf("recorded usage %+v, want %+v", got, want)
	}
}

func TestChatNotStreamed(t *testing.T) {
	srv := start(t, fakemodel.Config{Script: script})
	post(t, srv.URL()+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[]}`) // step 0, no usage asked for
	resp := post(t, srv.URL()+"/v1/chat/completions", `{"model":"m","messages":[]}`)
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || len(c.Choices) != 1 {
		t.Fatalf("completion = %+v", c)
	}
	m := c.Choices[0].Message
	if m.Content != nil || len(m.ToolCalls) != 2 || m.ToolCalls[0].ID != "own_id" || m.ToolCalls[0].Type != "function" ||
		m.ToolCalls[0].Function.Name != "update_plan" || m.ToolCalls[0].Function.Arguments != `{"plan":[]}` ||
		m.ToolCalls[1].ID != "call_fake_01_1" || m.ToolCalls[1].Function.Arguments != "{}" || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("message = %+v, finish %s", m, c.Choices[0].FinishReason)
	}
	want := fakemodel.ChatUsage(script)[1]
	if c.Usage.PromptTokens != want.Input || c.Usage.CompletionTokens != want.Output || c.Usage.PromptTokensDetails.CachedTokens != want.Cached || want.Cached == 0 {
		t.Errorf("usage %+v, want %+v", c.Usage, want)
	}
	// The stream that asked for no usage reported none: only the second
	// answer counts.
	if got := srv.Usage(); got != want {
		t.Errorf("recorded usage %+v, want %+v", got, want)
	}
	if err := srv.Err(); err != nil {
		t.Error(err)
	}
}
