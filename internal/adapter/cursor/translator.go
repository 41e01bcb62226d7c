// Package cursor is the adapter of Cursor's agent hooks: it reads the JSON
// objects Cursor hands its hook commands (one per hook call, as a hook in
// .cursor/hooks.json appends them to a file; see testdata/README.md) and
// translates them into evosignal events, one session per conversation_id.
// Cursor has no plan tool in its hooks; its plans are Markdown files (Plan
// Mode's .cursor/plans/*.plan.md, a task_plan.md or todo.md the agent keeps),
// read by the plan-dialect core's Markdown dialect:
//
//	the conversation's first hook         agent.session.started (goal = the first
//	                                      beforeSubmitPrompt's prompt, model = the hook's model)
//	beforeSubmitPrompt                    the goal; counted as iterations
//	afterFileEdit on a plan file          the plan-dialect core: agent.plan.created,
//	                                      agent.plan.updated, agent.task.completed; a control call
//	beforeReadFile of a plan file         the same (the whole content seen: a plan a
//	                                      person edited in Plan Mode shows up here)
//	afterFileEdit on another file         agent.tool.called edit_file
//	beforeReadFile of another file        agent.tool.called read_file
//	afterShellExecution                   agent.tool.called shell, duration from duration
//	afterMCPExecution                     agent.tool.called <tool_name>, duration from duration
//	stop                                  the end of a generation; the conversation is ended
//	                                      at its last stop when the input ends
//
// Outcome: a last stop with status "aborted" → aborted, "error" → failure;
// otherwise by the plan in force (tally.Session.Outcome). Hooks report no
// failure of a tool, so every call is ok. Anything else (beforeShellExecution,
// beforeMCPExecution, afterAgentResponse, afterAgentThought, …) is ignored
// and counted.
//
// Event ids are the conversation id plus the hook's ordinal in the
// conversation, so translating the same hooks again gives the same events.
package cursor

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

// Config says who the events come from and which files are plans.
type Config struct {
	Agent  string // agent name, "cursor" by default
	Source string
	Model  string // unless the hooks name one
	Plan   plandialect.Config
	Files  plandialect.FilesConfig // plan files; afterFileEdit and beforeReadFile must be among its tools
}

// Counts are a Translator's totals.
type Counts struct {
	Records   int64
	Events    int64
	Sessions  int64 // conversations started
	Ended     int64 // ended at their last stop
	Open      int64 // without a stop at the end of input
	Ignored   int64
	Malformed int64
	Quality   tally.Quality
}

// RecordError is a record skipped as malformed.
type RecordError = tally.RecordError

// hook is one hook call's input; Time is the envelope's.
type hook struct {
	Conversation string          `json:"conversation_id"`
	Generation   string          `json:"generation_id"`
	Event        string          `json:"hook_event_name"`
	Roots        []string        `json:"workspace_roots"`
	Model        string          `json:"model"`
	Prompt       string          `json:"prompt"`
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	Duration     float64         `json:"duration"` // ms
	Status       string          `json:"status"`
	Time         time.Time       `json:"-"`
	raw          []byte
}

// Translator turns hook records into events. Not safe for concurrent use.
type Translator struct {
	cfg      Config
	sink     agent.Sink
	now      func() time.Time
	reg      *plandialect.Registry
	files    *tally.Files
	sessions map[string]*session
	order    []string
	n        Counts
}

type session struct {
	s       *tally.Session
	pending bool
	start   time.Time
	model   string
	goal    string
	prompts int64
	ordinal int64
	stopped bool
	stopAt  time.Time
	status  string // the last stop's
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
	if cfg.Agent == "" {
		cfg.Agent = "cursor"
	}
	t := &Translator{cfg: cfg, now: now, reg: reg, files: files, sessions: map[string]*session{}}
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

// Read translates the JSON objects of r until r ends or ctx is done. A
// malformed record goes to onErr and is skipped; a record that is not JSON
// at all ends the input.
func (t *Translator) Read(ctx context.Context, r io.Reader, onErr func(*RecordError)) error {
	return tally.ReadRecords(ctx, r, t.Record, onErr, func() { t.n.Malformed++ })
}

// Record translates one record: a hook's input, or the envelope
// {"time": RFC 3339, "hook": input}.
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
	var env struct {
		Time string          `json:"time"`
		Hook json.RawMessage `json:"hook"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var at time.Time
	if len(env.Hook) > 0 {
		raw = env.Hook
		at, _ = time.Parse(time.RFC3339Nano, env.Time) // a time that does not parse is no time
	}
	h := &hook{Time: at, raw: raw}
	if err := json.Unmarshal(raw, h); err != nil {
		return nil, fmt.Errorf("hook input: %w", err)
	}
	switch {
	case h.Conversation == "":
		return nil, errors.New("hook input: no conversation_id")
	case h.Event == "":
		return nil, errors.New("hook input: no hook_event_name")
	}
	return h, nil
}

func (t *Translator) hook(ctx context.Context, h *hook) error {
	s := t.sessions[h.Conversation]
	if s == nil {
		dir := ""
		if len(h.Roots) > 0 {
			dir = h.Roots[0]
		}
		s = &session{s: tally.New(t.sink, t.cfg.Source, h.Conversation, t.reg).WithFiles(t.files, dir),
			pending: true, start: h.Time, model: t.cfg.Model}
		t.sessions[h.Conversation] = s
		t.order = append(t.order, h.Conversation)
		t.n.Sessions++
	}
	s.ordinal++
	if h.Model != "" && s.pending {
		s.model = h.Model
	}
	at := tally.At{ID: fmt.Sprintf("%s/h%d", s.s.ID(), s.ordinal), Time: h.Time}
	dur := time.Duration(h.Duration * float64(time.Millisecond))
	switch h.Event {
	case "beforeSubmitPrompt":
		s.prompts++
		s.stopped = false
		if s.goal == "" {
			s.goal = h.Prompt
		}
		return t.open(ctx, s)
	case "afterFileEdit":
		return t.tool(ctx, s, at, tally.Call{Tool: h.Event, Name: "edit_file", Args: h.raw, OK: true})
	case "beforeReadFile":
		return t.tool(ctx, s, at, tally.Call{Tool: h.Event, Name: "read_file", Args: h.raw, OK: true})
	case "afterShellExecution":
		return t.tool(ctx, s, at, tally.Call{Tool: "shell", Args: h.raw, OK: true, Duration: dur})
	case "afterMCPExecution":
		if h.ToolName == "" {
			t.n.Malformed++
			return &RecordError{Err: errors.New("afterMCPExecution without tool_name")}
		}
		return t.tool(ctx, s, at, tally.Call{Tool: h.ToolName, Args: mcpArgs(h.ToolInput), OK: true, Duration: dur})
	case "stop":
		s.stopped, s.stopAt, s.status = true, h.Time, h.Status
		return t.open(ctx, s)
	}
	t.n.Ignored++
	return t.open(ctx, s)
}

// mcpArgs returns an MCP call's tool_input, which Cursor sends as a JSON
// string, as the JSON it holds.
func mcpArgs(in json.RawMessage) []byte {
	var s string
	if json.Unmarshal(in, &s) == nil {
		return []byte(s)
	}
	if len(bytes.TrimSpace(in)) == 0 {
		return nil
	}
	return in
}

func (t *Translator) open(ctx context.Context, s *session) error {
	if !s.pending {
		return nil
	}
	s.pending = false
	return s.s.Start(ctx, tally.At{ID: s.s.ID() + "/start", Time: s.start}, events.SessionStartedData{
		Goal: s.goal, Agent: t.cfg.Agent, AgentVersion: "unknown", Model: s.model, Tools: []string{},
	})
}

func (t *Translator) tool(ctx context.Context, s *session, at tally.At, c tally.Call) error {
	if err := t.open(ctx, s); err != nil {
		return err
	}
	return s.s.Tool(ctx, at, c)
}

// Close ends every conversation that stopped at its last stop; the others
// stay open (Counts.Open).
func (t *Translator) Close(ctx context.Context) error {
	var errs []error
	for _, id := range t.order {
		s := t.sessions[id]
		if !s.stopped {
			t.n.Open++
			continue
		}
		if err := t.open(ctx, s); err != nil {
			errs = append(errs, err)
			continue
		}
		outcome := s.s.Outcome()
		switch s.status {
		case "aborted":
			outcome = events.OutcomeAborted
		case "error":
			outcome = events.OutcomeFailure
		}
		t.n.Ended++
		errs = append(errs, s.s.End(ctx, tally.At{ID: s.s.ID() + "/end", Time: s.stopAt}, outcome, s.prompts, s.stopAt.Sub(s.start)))
	}
	for _, s := range t.sessions {
		t.n.Quality.Add(s.s.Quality())
	}
	t.sessions, t.order = map[string]*session{}, nil
	return errors.Join(errs...)
}
