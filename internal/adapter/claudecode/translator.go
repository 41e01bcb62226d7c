// Package claudecode is the adapter of Claude Code's hooks and transcripts
// (transcript.go; the adapter tells the two apart per file, adapter.go).
// For the hooks, it reads the JSON
// objects Claude Code hands its hooks (one per hook call, as a settings.json
// hook appends them to a file; docs/claude-code.md) and translates them into
// evosignal events, one session per request: a user prompt and the agent's
// work on it until it stops (docs/plan-dialects.md, "Requests"). A request's
// id is <session_id>/<prompt_id> (hooks of Claude Code 2.1 and later carry
// the prompt's id), else <session_id> for a session's first prompt and
// <session_id>/2, /3, … for the next ones; the agent's own session id is
// the part before the first "/".
//
//	SessionStart                                the model, for the session's requests
//	UserPromptSubmit                            agent.session.started (goal = the prompt),
//	                                            emitted with the request's next hook; the
//	                                            request in force, if any, ends
//	PostToolUse / PostToolUseFailure of TodoWrite   the plan-dialect core: agent.plan.created,
//	                                            agent.plan.updated, agent.task.completed,
//	                                            when the burst of plan calls ends
//	PostToolUse / …Failure of TaskCreate /      the core's incremental dialect: steps held
//	TaskUpdate                                  until the burst ends (another tool's call,
//	                                            Stop, a prompt, the end), then its events
//	TaskList / TaskGet / ToolSearch             control calls; they do not end a burst
//	PostToolUse of Write / Edit / MultiEdit     the same, from the plan file's content
//	on a plan file (Config.Files)               (the Markdown dialect; paths resolved
//	                                            against the request's first cwd)
//	any other PostToolUse / PostToolUseFailure  agent.tool.called for the task in progress;
//	                                            failed: error, error_kind "interrupted" when
//	                                            is_interrupt; duration from its PreToolUse when
//	                                            both carry a time
//	Stop                                        the request stopped: it ends there (at its last
//	                                            Stop) with the next prompt, SessionEnd or the
//	                                            end of input; one that never stopped ends at
//	                                            the next prompt or SessionEnd, else stays open
//	SessionEnd                                  agent.session.ended of the request in force
//
// Outcome (foreign.Session.Outcome): success when the agent completed every
// task of the request's plan, else unknown. Claude Code reports no verdict
// of its own.
//
// Event ids are the request id plus the hook's tool_use_id (or "start",
// "end"), so translating the same hooks again gives the same events.
// Everything else (Notification, PreCompact, SubagentStop, …) is ignored and
// counted.
package claudecode

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/adapter/hooks"
)

// Config says who the events come from: Agent "claude-code" by default;
// Model unless SessionStart names one; Files, the plan files and file tools
// (Write, Edit, MultiEdit) whose calls are plan operations (the zero value
// reads none).
type Config = hooks.Config

// Counts are a Translator's totals: Ended counts the sessions ended by
// SessionEnd, or by a Stop at the end of input.
type Counts = hooks.Counts

// RecordError is a record skipped as malformed.
type RecordError = hooks.RecordError

// hook is one hook call's input, as Claude Code passes it; Time is the
// envelope's, when the hook command added one.
type hook struct {
	SessionID   string          `json:"session_id"`
	PromptID    string          `json:"prompt_id"`
	TurnID      string          `json:"turn_id"` // Codex's hooks, which have Claude Code's shape
	Cwd         string          `json:"cwd"`
	Event       string          `json:"hook_event_name"`
	ToolName    string          `json:"tool_name"`
	ToolInput   json.RawMessage `json:"tool_input"`
	ToolResult  json.RawMessage `json:"tool_response"`
	ToolUseID   string          `json:"tool_use_id"`
	Error       string          `json:"error"`
	IsInterrupt bool            `json:"is_interrupt"`
	Prompt      string          `json:"prompt"`
	Model       string          `json:"model"`
	Time        time.Time       `json:"-"`
}

// Translator turns hook records into events. Not safe for concurrent use.
type Translator struct {
	*hooks.Base[own]
	current map[string]string // the key of the request in force, by Claude Code session_id
	prompts map[string]int    // prompts without a prompt_id, by session_id
	models  map[string]string // SessionStart's model, by session_id
}

// own is what a Claude Code request keeps besides the base's.
type own struct {
	sid string               // Claude Code's session_id
	pre map[string]time.Time // PreToolUse times by tool_use_id
}

type session = hooks.Session[own]

// NewTranslator returns a Translator sending to sink; now stamps records
// without a time.
func NewTranslator(cfg Config, sink agent.Sink, now func() time.Time) (*Translator, error) {
	b, err := hooks.NewBase[own](cfg, sink, now)
	if err != nil {
		return nil, err
	}
	t := &Translator{Base: b, current: map[string]string{}, prompts: map[string]int{}, models: map[string]string{}}
	b.OnEvict = func(s *session) {
		// A Claude Code session of none but abandoned requests keeps nothing.
		if sid := s.Own.sid; t.current[sid] == s.Key() {
			delete(t.current, sid)
			delete(t.prompts, sid)
			delete(t.models, sid)
		}
	}
	return t, nil
}

// Read translates the JSON objects of r, one after the other (lines or
// not), until r ends or ctx is done. A malformed record goes to onErr and
// is skipped; a record that is not JSON at all ends the input.
func (t *Translator) Read(ctx context.Context, r io.Reader, onErr func(*RecordError)) error {
	return t.Base.Read(ctx, r, t.Record, onErr)
}

// Record translates one record: a hook's input, or the envelope the
// documented hook command writes ({"time": RFC 3339, "hook": input}).
func (t *Translator) Record(ctx context.Context, raw []byte) error {
	return hooks.Record(ctx, t.Base, raw, parse, t.hook)
}

func parse(raw []byte, at time.Time) (*hook, error) {
	h := &hook{Time: at}
	if err := json.Unmarshal(raw, h); err != nil {
		return nil, fmt.Errorf("hook input: %w", err)
	}
	switch {
	case h.SessionID == "":
		return nil, errors.New("hook input: no session_id")
	case h.Event == "":
		return nil, errors.New("hook input: no hook_event_name")
	}
	if bytes.Equal(bytes.TrimSpace(h.ToolInput), []byte("null")) {
		h.ToolInput = nil
	}
	if bytes.Equal(bytes.TrimSpace(h.ToolResult), []byte("null")) {
		h.ToolResult = nil
	}
	return h, nil
}

// key is the request a hook belongs to: <session_id>/<prompt_id> when the
// hook carries the prompt's id (Claude Code 2.1 and later, every hook but
// SessionStart), <session_id>/<turn_id> for Codex's hooks; else the request the session's last UserPromptSubmit
// began: <session_id> for its first prompt, <session_id>/2, /3, … for the
// next ones; <session_id> before any prompt.
func (t *Translator) key(h *hook) string {
	if h.PromptID != "" {
		return h.SessionID + "/" + h.PromptID
	}
	if h.TurnID != "" {
		return h.SessionID + "/" + h.TurnID // Codex: <thread>/<turn>, as its rollouts give
	}
	if h.Event == "UserPromptSubmit" {
		t.prompts[h.SessionID]++
		if n := t.prompts[h.SessionID]; n > 1 {
			return fmt.Sprintf("%s/%d", h.SessionID, n)
		}
		return h.SessionID
	}
	return cmp.Or(t.current[h.SessionID], h.SessionID)
}

func (t *Translator) hook(ctx context.Context, h *hook) error {
	if h.Event == "SessionStart" {
		if h.Model != "" {
			t.models[h.SessionID] = h.Model
		}
		return nil // the request starts with its prompt
	}
	key := t.key(h)
	if cur := t.current[h.SessionID]; cur != "" && cur != key {
		// A new prompt: the request in force is over.
		if err := t.endKey(ctx, cur, h.Time); err != nil {
			return err
		}
	}
	if t.Done.Has(key) {
		t.N.Ignored++ // after its request ended
		return nil
	}
	t.current[h.SessionID] = key
	s := t.Session(key, h.Cwd, h.Time)
	if s.Own.pre == nil {
		s.Own = own{sid: h.SessionID, pre: map[string]time.Time{}}
		if m := t.models[h.SessionID]; m != "" {
			s.Model = m
		}
	}
	s.Ordinal++
	switch h.Event {
	case "UserPromptSubmit":
		if err := s.Flush(ctx); err != nil {
			return err
		}
		s.Iterate()
		s.Stopped = false
		if s.Goal == "" {
			s.Goal = h.Prompt
		}
		return t.Open(ctx, s)
	case "PreToolUse":
		if h.ToolUseID != "" {
			s.Own.pre[h.ToolUseID] = h.Time
		}
		return t.Open(ctx, s)
	case "PostToolUse", "PostToolUseFailure":
		if err := t.Open(ctx, s); err != nil {
			return err
		}
		return t.tool(ctx, s, h)
	case "Stop":
		s.Stopped, s.StopAt = true, h.Time
		if err := t.Open(ctx, s); err != nil {
			return err
		}
		return s.Flush(ctx)
	case "SessionEnd":
		if err := t.Open(ctx, s); err != nil {
			return err
		}
		delete(t.current, h.SessionID)
		return t.endKey(ctx, key, h.Time)
	}
	t.N.Ignored++
	return nil
}

func (t *Translator) tool(ctx context.Context, s *session, h *hook) error {
	if h.ToolName == "" {
		return &RecordError{Err: fmt.Errorf("%s without tool_name", h.Event)}
	}
	id := h.ToolUseID
	if id == "" {
		id = fmt.Sprintf("hook%d", s.Ordinal)
	}
	c := foreign.Call{Tool: h.ToolName, Args: h.ToolInput, Result: h.ToolResult, OK: h.Event == "PostToolUse"}
	if !c.OK {
		c.Error = h.Error
		if h.IsInterrupt {
			c.Kind = "interrupted"
		}
		if c.Error == "" && c.Kind == "" {
			c.Error = "tool failed"
		}
	}
	if pre, ok := s.Own.pre[h.ToolUseID]; ok && h.ToolUseID != "" {
		c.Duration = h.Time.Sub(pre)
		delete(s.Own.pre, h.ToolUseID)
	}
	return s.Tool(ctx, foreign.At{ID: s.ID() + "/" + id, Time: h.Time}, c)
}

// endKey ends the request key: at its last Stop when it stopped (so that
// its end is the same whatever comes after it), else at at.
func (t *Translator) endKey(ctx context.Context, key string, at time.Time) error {
	s := t.Sessions[key]
	if s == nil {
		return nil
	}
	if s.Stopped {
		at = s.StopAt
	}
	t.Forget(s)
	t.N.Ended++
	if err := t.Open(ctx, s); err != nil {
		return err
	}
	if err := s.Flush(ctx); err != nil { // before the outcome is judged
		return err
	}
	t.N.Quality.Add(s.Quality())
	return s.End(ctx, foreign.At{ID: s.ID() + "/end", Time: at}, "")
}

// Close ends, at their last Stop, the requests that stopped and were not
// ended by a later prompt or SessionEnd; the others stay open
// (Counts.Open), their last burst of plan calls classified. (bridge
// -follow never calls it: a followed file has no end.)
func (t *Translator) Close(ctx context.Context) error {
	var errs []error
	for _, s := range t.InOrder() {
		if !s.Stopped {
			// Open, but what it planned is known: a hook log of one event
			// (post_tool_use.json, as people commit them) never stops.
			t.N.Open++
			errs = append(errs, s.Flush(ctx))
			continue
		}
		errs = append(errs, t.endKey(ctx, s.Key(), s.StopAt))
	}
	return errors.Join(errs...)
}

const help = `  -agent claude-code   Claude Code hook inputs, as the hook in docs/claude-code.md
                       appends them, or transcripts (~/.claude/projects/<project>/
                       <session>.jsonl), told apart per file by its first records;
                       -in a directory reads every *.jsonl below it (a transcript tree
                       such as ~/.claude/projects) in name order. One session per request
                       (prompt): <session_id>/<prompt_id>. Transcripts give the lines'
                       times; a request ends at its final answer (an assistant line that
                       ends the turn without a call) or the next prompt, else stays open.
                       Sidechains (sub-agent lines) are not the parent request's: its
                       Task/Agent call is one real call, their lines, calls and tokens
                       are counted in the summary; token usage (once per message) too.
                       Write/Edit/MultiEdit of a plan file (task_plan.md, todo.md,
                       .cursor/plans/*.plan.md) are plan operations
`
