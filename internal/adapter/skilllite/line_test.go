package skilllite

import (
	"strings"
	"testing"
)

func TestParseLineVariants(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		wantErr string // a substring of the error; "" for none
		kind    lineKind
		isError bool
		text    string
	}{
		{name: "is_error true", line: `{"event":"tool_result","data":{"name":"x","result":"r","is_error":true}}`, kind: kindToolResult, isError: true, text: "r"},
		{name: "success false", line: `{"event":"tool_result","data":{"name":"x","content":"c","success":false}}`, kind: kindToolResult, isError: true, text: "c"},
		{name: "ok true", line: `{"event":"tool_result","data":{"tool_name":"x","output":"o","ok":true}}`, kind: kindToolResult, text: "o"},
		{name: "error member", line: `{"event":"tool_result","data":{"name":"x","error":"e"}}`, kind: kindToolResult, isError: true, text: "e"},
		{name: "empty error member", line: `{"event":"tool_result","data":{"name":"x","result":"r","error":""}}`, kind: kindToolResult, text: "r"},
		{name: "flag beats error member", line: `{"event":"tool_result","data":{"name":"x","error":"e","is_error":false}}`, kind: kindToolResult},
		{name: "result object as JSON", line: `{"event":"tool_result","data":{"name":"x","result":{"a":1},"is_error":true}}`, kind: kindToolResult, isError: true, text: `{"a":1}`},
		{name: "no flag at all", line: `{"event":"tool_result","data":{"name":"x"}}`, kind: kindToolResult},
		{name: "flag of the wrong type", line: `{"event":"tool_result","data":{"name":"x","success":"yes"}}`, wantErr: "data.success: want a boolean, got string"},
		{name: "name of the wrong type", line: `{"event":"tool_result","data":{"name":1}}`, wantErr: "data.name: want a string, got number"},
		{name: "arguments as a number", line: `{"event":"tool_call","data":{"name":"x","arguments":1}}`, wantErr: "data.arguments: want an object or a string, got number"},
		{name: "arguments not JSON", line: `{"event":"tool_call","data":{"name":"x","arguments":"{oops"}}`, kind: kindToolCall},
		{name: "tool_call without a name", line: `{"event":"tool_call","data":{"arguments":{}}}`, wantErr: "data.name: missing tool name"},
		{name: "task id as a float", line: `{"event":"task_progress","data":{"task_id":2.0}}`, kind: kindTaskProgress},
		{name: "task id fractional", line: `{"event":"task_progress","data":{"task_id":2.5}}`, wantErr: "data.task_id: want an integer ≥ 1, got 2.5"},
		{name: "task id too large", line: `{"event":"task_progress","data":{"task_id":9007199254740992}}`, wantErr: "want an integer ≥ 1"},
		{name: "tasks not objects", line: `{"event":"task_plan","data":{"tasks":[1]}}`, wantErr: "data.tasks[0]: want an object, got number"},
		{name: "task without id", line: `{"event":"task_plan","data":{"tasks":[{"description":"d"}]}}`, wantErr: "data.tasks[0].id: missing"},
		{name: "hint of the wrong type", line: `{"event":"task_plan","data":{"tasks":[{"id":1,"tool_hint":3}]}}`, wantErr: "data.tasks[0].tool_hint: want a string, got number"},
		{name: "data not an object", line: `{"event":"done","data":[]}`, wantErr: "data: want an object, got array"},
		{name: "data absent", line: `{"event":"done"}`, kind: kindDone},
		{name: "error message of any shape", line: `{"event":"error","data":{"message":{"code":1}}}`, kind: kindError},
		{name: "params not an object", line: `{"method":"agent_chat","params":"hi"}`, wantErr: "params: want an object, got string"},
		{name: "message of the wrong type", line: `{"method":"agent_chat","params":{"message":5}}`, wantErr: "params.message: want a string, got number"},
		{name: "model of the wrong type", line: `{"method":"agent_chat","params":{"message":"m","config":{"model":1}}}`, wantErr: "params.config.model: want a string"},
		{name: "another method", line: `{"method":"confirm","params":{"approved":true}}`, kind: kindOtherRequest},
		{name: "method not a string", line: `{"method":true}`, wantErr: "method: want a string, got boolean"},
		{name: "trailing garbage", line: `{"event":"done"} x`, wantErr: "not JSON"},
		{name: "two objects", line: `{}{}`, wantErr: "not JSON"},
		{name: "null", line: `null`, wantErr: "want a JSON object, got null"},
		{name: "bad time", line: `{"ts":true,"event":"done"}`, wantErr: "ts: want a string or a number, got boolean"},
		{name: "blank", line: " \t", kind: kindBlank},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := parseLine([]byte(tt.line))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseLine(%s) error = %v, want one containing %q", tt.line, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseLine(%s) error = %v", tt.line, err)
			}
			if l.kind != tt.kind || l.res.isError != tt.isError || l.res.text != tt.text {
				t.Fatalf("parseLine(%s) = kind %d, is_error %v, text %q; want %d, %v, %q", tt.line, l.kind, l.res.isError, l.res.text, tt.kind, tt.isError, tt.text)
			}
		})
	}
}
