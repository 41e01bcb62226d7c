package skilllite

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/evosignal/evosignal/internal/adapter/records"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// SkillLite's transcripts (~/.skilllite/transcripts/{session_key}-{date}.jsonl)
// hold every tool call before it runs and every result after, each with the
// time in Unix seconds, the result with elapsed_ms
// (skilllite-executor/src/transcript.rs:39-107, 228-245;
// skilllite-agent/src/agent_loop/execution.rs:25-110). They hold no plan, so
// they cannot stand alone; joined by tool_call_id with agent-rpc's stdout,
// they give a backfill its real times.

// CallTimes are the times of one tool call in SkillLite's transcripts.
type CallTimes struct {
	Called, Returned time.Time // zero when the transcript lacks the entry
	ElapsedMS        int64     // -1 without elapsed_ms
}

// Transcripts are the calls of SkillLite's transcripts, by tool_call_id and
// tool name. A key seen in two calls (providers that number their calls
// call_0, call_1, … in every session) is left out: it names no one call.
type Transcripts struct {
	calls     map[string]CallTimes
	ambiguous map[string]bool
	// Calls, Ambiguous and Malformed count what reading found.
	Calls, Ambiguous, Malformed int
}

func transcriptKey(id, name string) string { return id + "\x00" + name }

// Lookup returns the times of call id of tool name.
func (tr *Transcripts) Lookup(id, name string) (CallTimes, bool) {
	if tr == nil || id == "" {
		return CallTimes{}, false
	}
	c, ok := tr.calls[transcriptKey(id, name)]
	return c, ok
}

// ReadTranscripts reads the *.jsonl files of dir, SkillLite's transcripts
// directory. Lines other than tool calls and results are skipped; lines
// that do not parse are counted in Malformed.
func ReadTranscripts(dir string) (*Transcripts, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("transcripts in %s: %w", dir, err)
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("transcripts: %w", err)
		}
	}
	slices.Sort(files)
	tr := &Transcripts{calls: map[string]CallTimes{}, ambiguous: map[string]bool{}}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("transcripts: %w", err)
		}
		err = tr.read(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("transcript %s: %w", name, err)
		}
	}
	tr.Calls = len(tr.calls)
	return tr, nil
}

// transcriptEntry is the part of a TranscriptEntry the bridge reads.
type transcriptEntry struct {
	Type       string `json:"type"`
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
	Timestamp  string `json:"timestamp"`
	ElapsedMS  *int64 `json:"elapsed_ms"`
}

func (tr *Transcripts) read(r io.Reader) error {
	lr := records.NewLines(r, records.DefaultMax)
	for {
		raw, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		tooLong := errors.Is(err, records.ErrTooLong)
		if err != nil && !tooLong {
			return err
		}
		var e transcriptEntry
		if tooLong || json.Unmarshal(raw, &e) != nil {
			tr.Malformed++
			continue
		}
		if e.Type != "tool_call" && e.Type != "tool_result" || e.ToolCallID == "" {
			continue
		}
		secs, err := strconv.ParseInt(e.Timestamp, 10, 64)
		if err != nil || secs <= 0 {
			tr.Malformed++
			continue
		}
		at := time.Unix(secs, 0).UTC()
		key := transcriptKey(e.ToolCallID, e.Name)
		if tr.ambiguous[key] {
			continue
		}
		c, seen := tr.calls[key]
		if !seen {
			c.ElapsedMS = -1
		}
		switch {
		case e.Type == "tool_call" && c.Called.IsZero():
			c.Called = at
		case e.Type == "tool_result" && c.Returned.IsZero():
			c.Returned = at
			if e.ElapsedMS != nil {
				c.ElapsedMS = *e.ElapsedMS
			}
		default:
			// A second call or result under the key.
			delete(tr.calls, key)
			tr.ambiguous[key] = true
			tr.Ambiguous++
			continue
		}
		tr.calls[key] = c
	}
}
