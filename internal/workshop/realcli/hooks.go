package realcli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// hookScript returns the hook script of docs/claude-code.md, which the
// tests run as users do: it appends its hook input, in the time envelope
// ({"time": ..., "hook": input}), as one line to the file named by its first
// argument, holding a lock while it writes.
func hookScript() ([]byte, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("realcli: cannot locate the source file")
	}
	doc := filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "claude-code.md")
	b, err := os.ReadFile(doc)
	if err != nil {
		return nil, fmt.Errorf("read the documented hook: %w", err)
	}
	const start, end = "```sh\n#!/bin/sh\n", "```\n"
	i := bytes.Index(b, []byte(start))
	if i < 0 {
		return nil, fmt.Errorf("%s has no sh block starting #!/bin/sh", doc)
	}
	script := b[i+len("```sh\n"):]
	j := bytes.Index(script, []byte(end))
	if j < 0 {
		return nil, fmt.Errorf("%s: the hook's sh block does not end", doc)
	}
	return script[:j], nil
}

// toolEvents are the hook events that take a tool matcher.
var toolEvents = map[string]bool{
	"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true,
	"PermissionRequest": true, "PermissionDenied": true,
}

// writeHooks writes the hook script into dir and returns the hooks
// document that runs it for each event, appending to log: Claude Code's
// settings.json "hooks" shape, which Codex's hooks.json shares.
func writeHooks(dir, log string, events []string) (map[string]any, error) {
	script := filepath.Join(dir, "evosignal-hook.sh")
	body, err := hookScript()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(script, body, 0o755); err != nil {
		return nil, fmt.Errorf("write the hook script: %w", err)
	}
	command := script + " " + log
	hooks := map[string]any{}
	for _, e := range events {
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}
		if toolEvents[e] {
			group["matcher"] = "*"
		}
		hooks[e] = []any{group}
	}
	return hooks, nil
}

// writeJSON writes v, indented, to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// HookRecord is one line of a hook log: the time the hook ran and the
// hook input the CLI gave it.
type HookRecord struct {
	Time string          `json:"time"`
	Hook json.RawMessage `json:"hook"`
}

// ReadJSONLines decodes every non-empty line of the file at path into a
// T.
func ReadJSONLines[T any](path string) ([]T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []T
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", filepath.Base(path), i+1, err)
		}
		out = append(out, v)
	}
	return out, nil
}
