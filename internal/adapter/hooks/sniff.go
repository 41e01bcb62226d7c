package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
)

// Form is what an input's first records show it to hold.
type Form int

const (
	// Undecided: its first lines say nothing (not JSON lines: a hook log
	// written as indented JSON, say).
	Undecided Form = iota
	// Hooks: hook inputs (hook_event_name, or the {"time", "hook"}
	// envelope), or a JSON array (of them).
	Hooks
	// Typed: JSON lines with a type member and no hook fields: another
	// file the agent writes (Claude Code's transcript, Codex's rollout).
	Typed
)

// Detection reads up to detectLines lines, at most detectBytes, before it
// takes an input for hook inputs.
const (
	detectLines = 16
	detectBytes = 4 << 20
)

// Sniff tells a hook log from the agent's other files by its first
// records, and returns the input to read from its start (Stat kept, for
// the hook log's modification time). It reads no more than it must to
// decide: a line at a time (bridge -follow hands a growing file over a
// pipe), at most detectLines lines and detectBytes bytes. The adapters of
// agents that write both (Claude Code: transcripts; Codex: rollouts) ask
// it, so that -agent X reads either.
func Sniff(in io.Reader) (io.Reader, Form, error) {
	br := bufio.NewReaderSize(in, 64<<10)
	var seen bytes.Buffer
	f := Undecided
	for n := 0; n < detectLines && seen.Len() < detectBytes; n++ {
		start := seen.Len()
		line, err := br.ReadSlice('\n')
		seen.Write(line)
		for errors.Is(err, bufio.ErrBufferFull) && seen.Len() < detectBytes {
			line, err = br.ReadSlice('\n')
			seen.Write(line)
		}
		if d, ok := detectLine(seen.Bytes()[start:], start == 0); ok {
			f = d
			break
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
				return nil, 0, err
			}
			break
		}
	}
	return peeked{Reader: io.MultiReader(bytes.NewReader(seen.Bytes()), br), in: in}, f, nil
}

// peeked is an input read again from its start after detect looked at its
// first lines; Stat is the input's, for a reader that wants the file's
// (a hook log's modification time stamps records that carry none).
type peeked struct {
	io.Reader
	in io.Reader
}

func (p peeked) Stat() (os.FileInfo, error) {
	if f, ok := p.in.(interface{ Stat() (os.FileInfo, error) }); ok {
		return f.Stat()
	}
	return nil, errors.New("not a file")
}

// detectLine says what a line is, when it can tell; first is whether it
// begins the input.
func detectLine(line []byte, first bool) (Form, bool) {
	line = bytes.TrimSpace(line)
	if first && bytes.HasPrefix(line, []byte("[")) {
		return Hooks, true
	}
	var probe struct {
		Event *string          `json:"hook_event_name"`
		Hook  *json.RawMessage `json:"hook"`
		Type  *string          `json:"type"`
	}
	if len(line) == 0 || json.Unmarshal(line, &probe) != nil {
		return 0, false
	}
	switch {
	case probe.Event != nil || probe.Hook != nil:
		return Hooks, true
	case probe.Type != nil:
		return Typed, true
	}
	return 0, false
}
