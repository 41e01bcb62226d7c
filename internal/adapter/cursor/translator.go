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
// otherwise success when every task of the plan was completed, else unknown
// (foreign.Session.Outcome). Hooks report no
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
	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/adapter/hooks"
	"github.com/evosignal/evosignal/internal/events"
)

// Config says who the events come from and which files are plans: Agent
// "cursor" by default; Files' tools must include afterFileEdit and
// beforeReadFile.
type Config = hooks.Config

// Counts are a Translator's totals: Sessions counts conversations, Ended
// those ended at their last stop, Open those without a stop at the end of
// input.
type Counts = hooks.Counts

// RecordError is a record skipped as malformed.
type RecordError = hooks.RecordError

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
	*hooks.Base[own]
}

// own is what a conversation keeps besides the base's.
type own struct {
	status string // the last stop's
}

type session = hooks.Session[own]

// NewTranslator returns a Translator sending to sink; now stamps records
// without a time.
func NewTranslator(cfg Config, sink agent.Sink, now func() time.Time) (*Translator, error) {
	if cfg.Agent == "" {
		cfg.Agent = "cursor"
	}
	b, err := hooks.NewBase[own](cfg, sink, now)
	if err != nil {
		return nil, err
	}
	return &Translator{Base: b}, nil
}

// Read translates the JSON objects of r until r ends or ctx is done. A
// malformed record goes to onErr and is skipped; a record that is not JSON
// at all ends the input.
func (t *Translator) Read(ctx context.Context, r io.Reader, onErr func(*RecordError)) error {
	return t.Base.Read(ctx, r, t.Record, onErr)
}

// Record translates one record: a hook's input, or the envelope
// {"time": RFC 3339, "hook": input}.
func (t *Translator) Record(ctx context.Context, raw []byte) error {
	return hooks.Record(ctx, t.Base, raw, parse, t.hook)
}

func parse(raw []byte, at time.Time) (*hook, error) {
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
	dir := ""
	if len(h.Roots) > 0 {
		dir = h.Roots[0]
	}
	if t.Sessions[h.Conversation] == nil && len(t.Sessions) >= t.MaxOpen() {
		// A new conversation past -max-open: the one first seen makes
		// room, ended at its last stop as the end of input would end it
		// (Close), else dropped as abandoned (Session).
		if old := t.Oldest(); old.Stopped {
			if err := t.end(ctx, old); err != nil {
				return err
			}
		}
	}
	s := t.Session(h.Conversation, dir, h.Time)
	s.Ordinal++
	if h.Model != "" && s.Pending() {
		s.Model = h.Model
	}
	at := foreign.At{ID: fmt.Sprintf("%s/h%d", s.ID(), s.Ordinal), Time: h.Time}
	dur := time.Duration(h.Duration * float64(time.Millisecond))
	switch h.Event {
	case "beforeSubmitPrompt":
		s.Iterate() // a prompt
		s.Stopped = false
		if s.Goal == "" {
			s.Goal = h.Prompt
		}
		return t.Open(ctx, s)
	case "afterFileEdit":
		return t.tool(ctx, s, at, foreign.Call{Tool: h.Event, Name: "edit_file", Args: h.raw, OK: true})
	case "beforeReadFile":
		return t.tool(ctx, s, at, foreign.Call{Tool: h.Event, Name: "read_file", Args: h.raw, OK: true})
	case "afterShellExecution":
		return t.tool(ctx, s, at, foreign.Call{Tool: "shell", Args: h.raw, OK: true, Duration: dur})
	case "afterMCPExecution":
		if h.ToolName == "" {
			return &RecordError{Err: errors.New("afterMCPExecution without tool_name")}
		}
		return t.tool(ctx, s, at, foreign.Call{Tool: h.ToolName, Args: mcpArgs(h.ToolInput), OK: true, Duration: dur})
	case "stop":
		s.Stopped, s.StopAt, s.Own.status = true, h.Time, h.Status
		return t.Open(ctx, s)
	}
	t.N.Ignored++
	return t.Open(ctx, s)
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

func (t *Translator) tool(ctx context.Context, s *session, at foreign.At, c foreign.Call) error {
	if err := t.Open(ctx, s); err != nil {
		return err
	}
	return s.Tool(ctx, at, c)
}

// Close ends every conversation that stopped at its last stop; the others
// stay open (Counts.Open).
func (t *Translator) Close(ctx context.Context) error {
	var errs []error
	for _, s := range t.InOrder() {
		if !s.Stopped {
			t.N.Open++
			errs = append(errs, s.Flush(ctx)) // open, its last plan calls classified
			t.N.Quality.Add(s.Quality())
			t.Forget(s)
			continue
		}
		errs = append(errs, t.end(ctx, s))
	}
	return errors.Join(errs...)
}

// end ends conversation s at its last stop, which it had.
func (t *Translator) end(ctx context.Context, s *session) error {
	t.Forget(s)
	if err := t.Open(ctx, s); err != nil {
		return err
	}
	var outcome events.Outcome // judged by the plan
	switch s.Own.status {
	case "aborted":
		outcome = events.OutcomeAborted
	case "error":
		outcome = events.OutcomeFailure
	}
	t.N.Ended++
	err := s.End(ctx, foreign.At{ID: s.ID() + "/end", Time: s.StopAt}, outcome)
	t.N.Quality.Add(s.Quality())
	return err
}

// Name is the adapter's -agent value.
const Name = "cursor"

// NewAdapter returns the adapter of Cursor's hooks, for the bridge.
func NewAdapter() *hooks.Adapter {
	return hooks.NewAdapter(Name, help, "conversations", func(cfg Config, sink agent.Sink, env adapter.Env) (hooks.Translator, error) {
		return NewTranslator(cfg, sink, env.Now)
	})
}

const help = `  -agent cursor        Cursor hook inputs (internal/adapter/cursor/testdata/README.md);
                       one session per conversation_id, the plan read from plan files
                       (afterFileEdit, beforeReadFile)
`
