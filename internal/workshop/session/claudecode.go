package session

import (
	"bytes"
	"encoding/json"
	"time"
)

// ClaudeCodeHooks renders sessions as the JSON objects Claude Code hands
// its hooks, one per line. Even sessions are wrapped in the envelope of the
// documented hook command ({"time", "hook"}); odd ones are bare hook inputs
// without a time.
func ClaudeCodeHooks[S Source](ss []S) []byte {
	var b bytes.Buffer
	for i, src := range ss {
		s := src.Script()
		put := func(at time.Time, h map[string]any) {
			h["session_id"] = s.ID
			h["transcript_path"] = "/home/u/.claude/projects/-home-u-app/" + s.ID + ".jsonl"
			h["cwd"] = "/home/u/app"
			h["permission_mode"] = "default"
			var v any = h
			if i%2 == 0 {
				v = map[string]any{"time": at.UTC().Format(time.RFC3339Nano), "hook": h}
			}
			line, err := json.Marshal(v)
			if err != nil {
				panic(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		put(s.Start, map[string]any{"hook_event_name": "SessionStart", "source": "startup", "model": s.Model})
		put(s.Start, map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": s.Goal})
		for _, st := range s.Steps {
			pre := map[string]any{"hook_event_name": "PreToolUse", "tool_name": st.Tool, "tool_use_id": st.ID}
			post := map[string]any{"tool_name": st.Tool, "tool_use_id": st.ID}
			if st.Args != nil {
				pre["tool_input"] = json.RawMessage(st.Args)
				post["tool_input"] = json.RawMessage(st.Args)
			}
			put(st.At, pre)
			if st.OK {
				post["hook_event_name"] = "PostToolUse"
				post["tool_response"] = map[string]any{"ok": true}
			} else {
				post["hook_event_name"] = "PostToolUseFailure"
				post["error"] = st.Err
				post["is_interrupt"] = false
			}
			put(st.At.Add(st.Dur), post)
		}
		put(s.End, map[string]any{"hook_event_name": "Notification", "message": "Claude is waiting for your input"})
		put(s.End, map[string]any{"hook_event_name": "Stop", "stop_hook_active": false})
		if !s.StopOnly {
			put(s.End, map[string]any{"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
		}
	}
	return b.Bytes()
}
