package registry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// shape is what one kind of input looks like in its first record: its
// name, the command that reads it, and a test of the record's top-level
// members.
type shape struct {
	what, reads string
	is          func(m map[string]json.RawMessage) bool
}

func has(m map[string]json.RawMessage, names ...string) bool {
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return false
		}
	}
	return true
}

func typeIs(m map[string]json.RawMessage, types ...string) bool {
	var t string
	if json.Unmarshal(m["type"], &t) != nil {
		return false
	}
	for _, want := range types {
		if t == want {
			return true
		}
	}
	return false
}

// shapes are the inputs the bridge knows, the most specific first.
var shapes = []shape{
	{"evosignal events (CloudEvents)", "ingest -file FILE: they need no bridge", func(m map[string]json.RawMessage) bool { return has(m, "specversion") }},
	{"OpenTelemetry traces (OTLP JSON)", "bridge -agent otel", func(m map[string]json.RawMessage) bool { return has(m, "resourceSpans") }},
	{"Cursor hook inputs", "bridge -agent cursor", func(m map[string]json.RawMessage) bool { return has(m, "hook_event_name", "conversation_id") }},
	{"Codex CLI hook inputs", "bridge -agent codex", func(m map[string]json.RawMessage) bool {
		var path string
		json.Unmarshal(m["transcript_path"], &path)
		return has(m, "hook_event_name", "session_id") && (has(m, "turn_id") || strings.Contains(path, "rollout-"))
	}},
	{"Claude Code hook inputs", "bridge -agent claude-code", func(m map[string]json.RawMessage) bool { return has(m, "hook_event_name", "session_id") }},
	{"a Claude Code transcript", "bridge -agent claude-code", func(m map[string]json.RawMessage) bool { return has(m, "type", "sessionId") || has(m, "type", "uuid") }},
	{"a Codex CLI rollout", "bridge -agent codex", func(m map[string]json.RawMessage) bool {
		return has(m, "payload") && typeIs(m, "session_meta", "response_item", "event_msg", "turn_context", "compacted")
	}},
	{"SkillLite agent-rpc output", "bridge -agent skilllite", func(m map[string]json.RawMessage) bool { return has(m, "event", "data") || has(m, "method") }},
}

// Describe says what an input whose first bytes are head looks like and
// which command reads it, from its first JSON object (a line, or the first
// element of an array; a hook envelope {"time", "hook"} is looked into):
// "" when it looks like nothing the bridge knows.
func Describe(head []byte) string {
	m := firstObject(head)
	if m == nil {
		return ""
	}
	if inner, ok := m["hook"]; ok && has(m, "time") {
		var h map[string]json.RawMessage
		if json.Unmarshal(inner, &h) == nil && h != nil {
			m = h
		}
	}
	for _, s := range shapes {
		if s.is(m) {
			return fmt.Sprintf("%s, which %s reads", s.what, s.reads)
		}
	}
	return ""
}

// firstObject returns the members of the first JSON object in head: its
// first non-empty line, or the first element of an array.
func firstObject(head []byte) map[string]json.RawMessage {
	trimmed := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if _, err := dec.Token(); err != nil {
			return nil
		}
		var m map[string]json.RawMessage
		if dec.More() && dec.Decode(&m) == nil {
			return m
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(trimmed))
	sc.Buffer(nil, len(trimmed)+1)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil {
			return nil
		}
		return m
	}
	return nil
}
