// Package claudecode is the adapter of Claude Code's hooks: it reads the JSON
// objects Claude Code hands its hooks (one per hook call, as a settings.json
// hook appends them to a file; docs/claude-code.md) and translates them into
// evosignal events, one session per Claude Code session_id:
//
//	SessionStart (or the session's first hook)  agent.session.started, emitted with the
//	                                            session's next hook; goal = the first
//	                                            UserPromptSubmit's prompt; model = SessionStart's model
//	PostToolUse / PostToolUseFailure of TodoWrite   the plan-dialect core: agent.plan.created,
//	                                            agent.plan.updated, agent.task.completed
//	PostToolUse of Write / Edit / MultiEdit     the same, from the plan file's content
//	on a plan file (Config.Files)               (the Markdown dialect; paths resolved
//	                                            against the session's first cwd)
//	any other PostToolUse / PostToolUseFailure  agent.tool.called for the task in progress;
//	                                            failed: error, error_kind "interrupted" when
//	                                            is_interrupt; duration from its PreToolUse when
//	                                            both carry a time
//	SessionEnd                                  agent.session.ended
//	Stop                                        marks a turn done; a session whose input ends
//	                                            after a Stop and without SessionEnd is ended
//	                                            there; one without either stays open
//
// Outcome: by the plan in force (tally.Session.Outcome): success with no plan
// or every task completed, partial_success with some completed, failure with
// none. Claude Code reports no verdict of its own.
//
// Event ids are the session id plus the hook's tool_use_id (or "start",
// "end"), so translating the same hooks again gives the same events.
// Everything else (Notification, PreCompact, SubagentStop, …) is ignored and
// counted.
package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/tally"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// Config says who the events come from.
type Config struct {
	Agent  string // agent name, "claude-code" by default
	Source string
	Model  string // unless SessionStart names one
	Plan   plandialect.Config
	// Files: the plan files and file tools (Write, Edit, MultiEdit) whose
	// calls are plan operations; the zero value reads none.
	Files plandialect.FilesConfig
}

// Counts are a Translator's totals.
type Counts struct {
	Records   int64
	Events    int64
	Sessions  int64 // sessions started
	Ended     int64 // sessions ended (SessionEnd, or a Stop at the end of input)
	Open      int64 // sessions left open at the end of input
	Ignored   int64
	Malformed int64
	Quality   tally.Quality
}

// RecordError is a record skipped as malformed.
type RecordError = tally.RecordError

// hook is one hook call's input, as Claude Code passes it; Time is the
// envelope's, when the hook command added one.
type hook struct {
	SessionID   string          `json:"session_id"`
	Cwd         string          `json:"cwd"`
	Event       string          `json:"hook_event_name"`
	ToolName    string          `json:"tool_name"`
	ToolInput   json.RawMessage `json:"tool_input"`
	ToolUseID   string          `json:"tool_use_id"`
	Error       string          `json:"error"`
	IsInterrupt bool            `json:"is_interrupt"`
	Prompt      string          `json:"prompt"`
	Model       string          `json:"model"`
	Time        time.Time       `json:"-"`
}

// envelope is what the documented hook command writes: the hook's input
// and the time it ran.
type envelope struct {
	Time string          `json:"time"`
	Hook json.RawMessage `json:"hook"`
}

// Translator turns hook records into events. Not safe for concurrent use.
type Translator struct {
	cfg      Config
	sink     agent.Sink
	now      func() time.Time
	reg      *plandialect.Registry
	files    *tally.Files
	sessions map[string]*session
	order    []string // session ids, first seen first
	ended    map[string]bool
	n        Counts
}

type session struct {
	s        *tally.Session
	pending  bool // started, agent.session.started not emitted yet
	start    time.Time
	model    string
	goal     string
	pre      map[string]time.Time // PreToolUse times by tool_use_id
	stopped  bool
	stopAt   time.Time
	prompts  int64
	ordinal  int64 // hooks of the session, for ids of calls without tool_use_id
	lastTime time.Time
}

// NewTranslator returns a Translator sending to sink; now stamps records
// without a time.
func NewTranslator(cfg Config, sink agent.Sink, now func() time.Time) (*Translator, error) {
	reg, err := plandialect.New(cfg.Plan)
	if err != nil {
		return nil, err
	}
	files, err := tally.NewFiles(cfg.Files)
	if err != nil {
		return nil, err
	}
	t := &Translator{cfg: cfg, now: now, reg: reg, files: files, sessions: map[string]*session{}, ended: map[string]bool{}}
	t.sink = tally.CountingSink{Next: sink, N: &t.n.Events}
	return t, nil
}

// Stats returns the totals so far.
func (t *Translator) Stats() Counts {
	c := t.n
	for _, s := range t.sessions {
		c.Quality.Add(s.s.Quality())
	}
	return c
}

// Read translates the JSON objects of r, one after the other (lines or
// not), until r ends or ctx is done. A malformed record goes to onErr and
// is skipped; a record that is not JSON at all ends the input.
func (t *Translator) Read(ctx context.Context, r io.Reader, onErr func(*RecordError)) error {
	return tally.ReadRecords(ctx, r, t.Record, onErr, func() { t.n.Malformed++ })
}

// Record translates one record: a hook's input, or the envelope the
// documented hook command writes ({"time": RFC 3339, "hook": input}).
func (t *Translator) Record(ctx context.Context, raw []byte) error {
	t.n.Records++
	h, err := parse(raw)
	if err != nil {
		t.n.Malformed++
		return &RecordError{Err: err}
	}
	if h.Time.IsZero() {
		h.Time = t.now()
	}
	return t.hook(ctx, h)
}

func parse(raw []byte) (*hook, error) {
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var at time.Time
	if len(env.Hook) > 0 {
		raw = env.Hook
		at, _ = time.Parse(time.RFC3339Nano, env.Time) // a time that does not parse is no time
	}
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
	return h, nil
}

func (t *Translator) hook(ctx context.Context, h *hook) error {
	if t.ended[h.SessionID] {
		t.n.Ignored++ // after SessionEnd
		return nil
	}
	s := t.sessions[h.SessionID]
	if s == nil {
		s = &session{s: tally.New(t.sink, t.cfg.Source, h.SessionID, t.reg).WithFiles(t.files, h.Cwd), pending: true, start: h.Time,
			model: t.cfg.Model, pre: map[string]time.Time{}}
		t.sessions[h.SessionID] = s
		t.order = append(t.order, h.SessionID)
		t.n.Sessions++
	}
	s.ordinal++
	s.lastTime = h.Time
	switch h.Event {
	case "SessionStart":
		if h.Model != "" && s.pending {
			s.model = h.Model
		}
		return nil // started with the next hook, which may bring the goal
	case "UserPromptSubmit":
		s.prompts++
		if s.goal == "" {
			s.goal = h.Prompt
		}
		return t.open(ctx, s)
	case "PreToolUse":
		if h.ToolUseID != "" {
			s.pre[h.ToolUseID] = h.Time
		}
		return t.open(ctx, s)
	case "PostToolUse", "PostToolUseFailure":
		if err := t.open(ctx, s); err != nil {
			return err
		}
		return t.tool(ctx, s, h)
	case "Stop":
		s.stopped, s.stopAt = true, h.Time
		return t.open(ctx, s)
	case "SessionEnd":
		if err := t.open(ctx, s); err != nil {
			return err
		}
		return t.end(ctx, s, h.Time)
	}
	t.n.Ignored++
	return nil
}

// open emits the session's agent.session.started if it is still due.
func (t *Translator) open(ctx context.Context, s *session) error {
	if !s.pending {
		return nil
	}
	s.pending = false
	return s.s.Start(ctx, tally.At{ID: s.s.ID() + "/start", Time: s.start}, events.SessionStartedData{
		Goal: s.goal, Agent: t.cfg.Agent, AgentVersion: "unknown", Model: s.model, Tools: []string{},
	})
}

func (t *Translator) tool(ctx context.Context, s *session, h *hook) error {
	if h.ToolName == "" {
		t.n.Malformed++
		return &RecordError{Err: fmt.Errorf("%s without tool_name", h.Event)}
	}
	id := h.ToolUseID
	if id == "" {
		id = fmt.Sprintf("hook%d", s.ordinal)
	}
	c := tally.Call{Tool: h.ToolName, Args: h.ToolInput, OK: h.Event == "PostToolUse"}
	if !c.OK {
		c.Error = h.Error
		if h.IsInterrupt {
			c.Kind = "interrupted"
		}
		if c.Error == "" && c.Kind == "" {
			c.Error = "tool failed"
		}
	}
	if pre, ok := s.pre[h.ToolUseID]; ok && h.ToolUseID != "" {
		c.Duration = h.Time.Sub(pre)
		delete(s.pre, h.ToolUseID)
	}
	return s.s.Tool(ctx, tally.At{ID: s.s.ID() + "/" + id, Time: h.Time}, c)
}

func (t *Translator) end(ctx context.Context, s *session, at time.Time) error {
	id := s.s.ID()
	delete(t.sessions, id)
	t.ended[id] = true
	t.n.Ended++
	t.n.Quality.Add(s.s.Quality())
	return s.s.End(ctx, tally.At{ID: id + "/end", Time: at}, s.s.Outcome(), s.prompts, at.Sub(s.start))
}

// Close ends, at their last Stop, the sessions that stopped and never got a
// SessionEnd; the others stay open (Counts.Open).
func (t *Translator) Close(ctx context.Context) error {
	var errs []error
	for _, id := range t.order {
		s := t.sessions[id]
		if s == nil {
			continue
		}
		if !s.stopped {
			t.n.Open++
			continue
		}
		errs = append(errs, t.end(ctx, s, s.stopAt))
	}
	return errors.Join(errs...)
}
