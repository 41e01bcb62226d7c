// Package codex is the adapter of Codex CLI rollouts: the JSON lines Codex
// writes for every thread under $CODEX_HOME/sessions/YYYY/MM/DD/
// (rollout-<time>-<thread>.jsonl; a resumed thread appends to its file).
// One evosignal session per request: a turn of the thread (event_msg
// task_started … task_complete), its session id <thread>/<turn id>, so
// that the thread stays readable in every event's subject. docs/codex.md
// has the mapping:
//
//	task_started … task_complete          one session: agent.session.started (goal the
//	                                      user's prompt, model turn_context's, agent
//	                                      version session_meta's cli_version) …
//	                                      agent.session.ended
//	function_call update_plan             the plan-dialect core (dialect codex):
//	                                      agent.plan.created, agent.plan.updated,
//	                                      agent.task.completed
//	any other function_call,              agent.tool.called when its output comes, failed
//	custom_tool_call                      when its command exited non-zero (the output's
//	                                      tail as the error) or its output says so
//	custom_tool_call exec (code mode)     its script's nested tools.update_plan calls
//	                                      whose argument is a JSON literal go through
//	                                      the core; the commands it ran (item_completed
//	                                      CommandExecution) are agent.tool.called
//	task_complete / turn_aborted / error  outcome: success when every planned task was
//	                                      completed, else unknown (foreign.Session.Outcome) /
//	                                      aborted / failure
//
// Times are the lines' timestamps; event ids are the session id plus the
// call id (or "start", "end"), so the same rollout gives the same events.
package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/adapter/records"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// Config says who the events come from: Agent and Source; Model, the
// model of a request whose turn_context names none; Plan, the plan tools.
type Config struct {
	Agent, Source, Model string
	Plan                 plandialect.Config
	// MaxRecord bounds a line's bytes (records.DefaultMax when not
	// positive); a longer one is skipped as malformed.
	MaxRecord int
}

// Counts are a Translator's totals.
type Counts struct {
	Records, Events, Malformed int64
	Files                      int64 // inputs read (Read calls)
	Threads                    int64 // session_meta lines that named a thread
	Requests, Ended, Open      int64
	Ignored                    int64 // lines of no use to the analyses
	Scripts                    int64 // code-mode exec calls (not emitted: their nested calls are)
	// ScriptPlansUnread: nested update_plan calls of code-mode scripts whose
	// argument is not a JSON literal; not read, the plan kept.
	ScriptPlansUnread int64
	// ScriptPlansFailed: nested update_plan calls of scripts that did not
	// complete; whether they ran is unknown, so they are not read.
	ScriptPlansFailed int64
	// NoExitCode: commands whose output states no exit code (still
	// running when the output was written); taken as succeeded.
	NoExitCode int64
	// Tokens: the threads' total_tokens, as their last token_count says.
	Tokens  int64
	Quality foreign.Quality
}

// LineError is a rollout line skipped as malformed; Line is its 1-based
// number in its file.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Translator turns rollout lines into events. Not safe for concurrent use.
type Translator struct {
	cfg  Config
	reg  *plandialect.Registry
	sink agent.Sink
	n    Counts

	// of the file being read
	line    int
	thread  string
	version string
	tokens  int64 // the thread's last total_tokens
	req     *request
	ordinal int // requests of the file so far
}

// request is one turn of a thread: one evosignal session.
type request struct {
	s         *foreign.Session
	start     time.Time
	model     string
	goal      string
	failed    bool
	calls     map[string]*call   // by call_id, until their output
	commands  map[string]*item   // CommandExecution items by id, for their call's output
	script    *script            // the code-mode script running
	scriptOf  map[string]*script // by call_id
	responses int                // token_counts: model responses so far
}

// call is a function or custom tool call waiting for its output.
type call struct {
	name string
	args []byte
	at   time.Time
}

// script is a code-mode exec call: its nested calls as written, and the
// commands it ran, as they came.
type script struct {
	id       string
	at       time.Time
	sites    []site
	commands []command
}

type command struct {
	it *item
	at time.Time
}

// NewTranslator returns a Translator sending to sink.
func NewTranslator(cfg Config, sink agent.Sink) (*Translator, error) {
	reg, err := plandialect.New(cfg.Plan)
	if err != nil {
		return nil, err
	}
	t := &Translator{cfg: cfg, reg: reg}
	t.sink = foreign.CountingSink{Next: sink, N: &t.n.Events}
	return t, nil
}

// Stats returns the totals so far.
func (t *Translator) Stats() Counts {
	c := t.n
	c.Tokens += t.tokens
	if t.req != nil {
		c.Quality.Add(t.req.s.Quality())
	}
	return c
}

// BeginFile starts a new input: the lines that follow are another rollout.
// A request the previous file left open stays open (Counts.Open).
func (t *Translator) BeginFile() {
	t.endFile()
	t.n.Files++
	t.line, t.thread, t.version, t.ordinal = 0, "", "", 0
}

func (t *Translator) endFile() {
	if t.req != nil {
		t.n.Open++
		t.n.Quality.Add(t.req.s.Quality())
		t.req = nil
	}
	t.n.Tokens += t.tokens
	t.tokens = 0
}

// Close ends the input; requests left open stay open.
func (t *Translator) Close(context.Context) error {
	t.endFile()
	return nil
}

// Line translates one line of the file being read. A line that is not a
// rollout line is a *LineError (counted malformed); any other error stops
// the reading.
func (t *Translator) Line(ctx context.Context, b []byte) error {
	t.line++
	t.n.Records++
	l, err := DecodeLine(b)
	if err == nil && l.Type != "session_meta" && t.thread == "" {
		err = errors.New("before the rollout's session_meta: the thread is unknown")
	}
	if err != nil {
		t.n.Malformed++
		return &LineError{Line: t.line, Err: err}
	}
	p := &l.Payload
	switch l.Type {
	case "session_meta":
		if t.thread != "" || p.ID == "" {
			t.n.Ignored++ // a thread's later meta (a fork's history)
			return nil
		}
		t.thread, t.version = p.ID, p.CLIVersion
		t.n.Threads++
		return nil
	case "turn_context":
		if r := t.current(l); r.model == "" {
			r.model = p.Model
		}
		return nil
	case "response_item":
		return t.responseItem(ctx, l)
	case "event_msg":
		return t.eventMsg(ctx, l)
	}
	t.n.Ignored++
	return nil
}

// tooLong counts the next line, longer than max bytes, as malformed.
func (t *Translator) tooLong(max int) error {
	t.line++
	t.n.Records++
	t.n.Malformed++
	return &LineError{Line: t.line, Err: fmt.Errorf("longer than %d bytes: %w", max, records.ErrTooLong)}
}

// current returns the request open, opening one (numbered in the file)
// for a turn's line that came without task_started.
func (t *Translator) current(l Line) *request {
	if t.req == nil {
		t.open(l, "")
	}
	return t.req
}

func (t *Translator) open(l Line, turn string) {
	t.ordinal++
	if turn == "" {
		turn = fmt.Sprintf("request-%d", t.ordinal)
	}
	t.n.Requests++
	t.req = &request{
		s:     foreign.New(t.sink, t.cfg.Source, t.thread+"/"+turn, t.reg),
		start: l.Time, calls: map[string]*call{}, commands: map[string]*item{}, scriptOf: map[string]*script{},
	}
}

func (t *Translator) responseItem(ctx context.Context, l Line) error {
	p := &l.Payload
	switch p.Type {
	case "function_call", "custom_tool_call":
		r := t.current(l)
		id := t.callID(p.CallID)
		if p.Type == "custom_tool_call" && p.Name == CodeModeTool {
			sc := &script{id: id, at: l.Time, sites: sites(p.Input, t.isPlan)}
			r.script, r.scriptOf[id] = sc, sc
			t.n.Scripts++
			return nil
		}
		c := &call{name: p.Name, at: l.Time}
		if _, isPlan := t.reg.Lookup(p.Name); isPlan {
			c.args = []byte(p.Arguments)
			if p.Type == "custom_tool_call" {
				c.args = []byte(p.Input)
			}
		}
		r.calls[id] = c
		return nil
	case "function_call_output", "custom_tool_call_output":
		r := t.current(l)
		id := t.callID(p.CallID)
		if sc := r.scriptOf[id]; sc != nil {
			delete(r.scriptOf, id)
			if r.script == sc {
				r.script = nil
			}
			return t.scriptDone(ctx, r, sc, l)
		}
		c := r.calls[id]
		if c == nil {
			t.n.Ignored++ // the output of a call this file does not hold
			return nil
		}
		delete(r.calls, id)
		return t.called(ctx, r, id, c, l)
	case "message":
		if p.Role == "user" && t.req != nil && t.req.goal == "" {
			// only when no UserMessage item names the prompt first; the
			// context Codex injects is tagged (<environment_context>, …)
			if text := texts(p.Content); text != "" && !strings.HasPrefix(text, "<") {
				t.req.goal = text
			}
		}
	}
	t.n.Ignored++
	return nil
}

func (t *Translator) isPlan(tool string) bool {
	_, ok := t.reg.Lookup(tool)
	return ok
}

// callID is a call's id, or one made of the line's number when it has
// none.
func (t *Translator) callID(id string) string {
	if id == "" {
		return fmt.Sprintf("line%d", t.line)
	}
	return id
}

func (t *Translator) eventMsg(ctx context.Context, l Line) error {
	p := &l.Payload
	switch p.Type {
	case "task_started":
		if t.req != nil {
			if err := t.end(ctx, t.req, l.Time, t.req.outcome()); err != nil {
				return err
			}
		}
		t.open(l, p.TurnID)
		return nil
	case "task_complete":
		if t.req == nil {
			t.n.Ignored++
			return nil
		}
		return t.end(ctx, t.req, l.Time, t.req.outcome())
	case "turn_aborted":
		if t.req == nil {
			t.n.Ignored++
			return nil
		}
		return t.end(ctx, t.req, l.Time, events.OutcomeAborted)
	case "error":
		t.current(l).failed = true
		return nil
	case "user_message":
		if r := t.current(l); r.goal == "" {
			r.goal = p.Message
		}
		return nil
	case "token_count":
		return t.tokenCount(ctx, l)
	case "item_completed":
		return t.itemCompleted(ctx, l)
	}
	t.n.Ignored++
	return nil
}

// tokenCount reads a token_count: one model response, whose tokens are
// its last_token_usage (input_tokens holds the cached ones, as the
// contract's input does). Codex does not time a response: duration 0.
func (t *Translator) tokenCount(ctx context.Context, l Line) error {
	type usage struct {
		Input  *int64 `json:"input_tokens"`
		Cached *int64 `json:"cached_input_tokens"`
		Output *int64 `json:"output_tokens"`
		Total  int64  `json:"total_tokens"`
	}
	var info struct {
		Total *usage `json:"total_token_usage"`
		Last  *usage `json:"last_token_usage"`
	}
	if len(l.Payload.Info) == 0 || string(l.Payload.Info) == "null" || json.Unmarshal(l.Payload.Info, &info) != nil {
		t.n.Ignored++ // a rate-limit update, no model response
		return nil
	}
	if info.Total != nil {
		t.tokens = info.Total.Total
	}
	r := t.current(l)
	if err := t.begin(ctx, r); err != nil {
		return err
	}
	r.responses++
	m := foreign.Model{Name: nonEmpty(r.model, t.cfg.Model)}
	if u := info.Last; u != nil {
		m.Input, m.Output, m.Cached = u.Input, u.Output, u.Cached
	}
	return r.s.Model(ctx, foreign.At{ID: fmt.Sprintf("%s/response/%d", r.s.ID(), r.responses), Time: l.Time}, m)
}

func (t *Translator) itemCompleted(ctx context.Context, l Line) error {
	it := l.Payload.Item
	if it == nil {
		t.n.Ignored++
		return nil
	}
	switch it.Type {
	case "UserMessage":
		if r := t.current(l); r.goal == "" {
			r.goal = texts(it.Content)
		}
		return nil
	case "CommandExecution":
		r := t.current(l)
		switch {
		case r.calls[it.ID] != nil:
			r.commands[it.ID] = it // its call's output comes next
		case r.script != nil:
			r.script.commands = append(r.script.commands, command{it: it, at: l.Time})
		default:
			return t.command(ctx, r, command{it: it, at: l.Time})
		}
		return nil
	}
	t.n.Ignored++
	return nil
}

func texts(cs []content) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Text)
	}
	return b.String()
}

// outcome is a request's outcome when it ends without an abort: failure
// after an error, else "" (foreign.Session.End judges it by the plan).
func (r *request) outcome() events.Outcome {
	if r.failed {
		return events.OutcomeFailure
	}
	return ""
}

// begin emits the request's agent.session.started if it is still due.
func (t *Translator) begin(ctx context.Context, r *request) error {
	if r.s.Started() {
		return nil
	}
	return r.s.Start(ctx, foreign.At{ID: r.s.ID() + "/start", Time: r.start}, events.SessionStartedData{
		Goal: r.goal, Agent: t.cfg.Agent, AgentVersion: nonEmpty(t.version, "unknown"),
		Model: nonEmpty(r.model, t.cfg.Model), Tools: []string{},
	})
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (t *Translator) end(ctx context.Context, r *request, at time.Time, o events.Outcome) error {
	if err := t.begin(ctx, r); err != nil {
		return err
	}
	t.req = nil
	t.n.Ended++
	t.n.Quality.Add(r.s.Quality())
	return r.s.End(ctx, foreign.At{ID: r.s.ID() + "/end", Time: at}, o)
}

// called emits a function or custom tool call at its output.
func (t *Translator) called(ctx context.Context, r *request, id string, c *call, l Line) error {
	if err := t.begin(ctx, r); err != nil {
		return err
	}
	text, failed := outputText(l.Payload.Output)
	fc := foreign.Call{Tool: c.name, Args: c.args, OK: !failed, Duration: l.Time.Sub(c.at)}
	code, known := ExitCode(text)
	out := commandOutput(text)
	if it := r.commands[id]; it != nil {
		delete(r.commands, id)
		if it.ExitCode != nil {
			code, known = *it.ExitCode, true
		}
		out = it.AggregatedOut
	}
	switch {
	case known && code != 0:
		fc.OK = false
		fc.Kind, fc.Error = "exit_code", exitError(code, out)
	case !known && c.name == "exec_command":
		t.n.NoExitCode++
	case c.args != nil && strings.HasPrefix(text, "failed to parse"):
		fc.OK = false // a plan call Codex refused
	}
	if !fc.OK && fc.Error == "" {
		fc.Error = foreign.Tail(text)
	}
	return r.s.Tool(ctx, foreign.At{ID: r.s.ID() + "/" + id, Time: l.Time}, fc)
}

func exitError(code int, out string) string {
	if strings.TrimSpace(out) == "" {
		return fmt.Sprintf("exit code %d", code)
	}
	return foreign.Tail(out)
}

// command emits a command that ran outside a function call of its own: a
// code-mode script's nested exec_command.
func (t *Translator) command(ctx context.Context, r *request, c command) error {
	if err := t.begin(ctx, r); err != nil {
		return err
	}
	fc := foreign.Call{Tool: "exec_command", OK: true}
	if d := c.it.DurationLiteral; d != nil {
		fc.Duration = time.Duration(d.Secs)*time.Second + time.Duration(d.Nanos)
	}
	switch {
	case c.it.ExitCode != nil && *c.it.ExitCode != 0:
		fc.OK, fc.Kind, fc.Error = false, "exit_code", exitError(*c.it.ExitCode, c.it.AggregatedOut)
	case c.it.ExitCode == nil && c.it.Status == "failed":
		fc.OK, fc.Error = false, nonEmpty(foreign.Tail(c.it.AggregatedOut), "command failed")
	case c.it.ExitCode == nil:
		t.n.NoExitCode++
	}
	return r.s.Tool(ctx, foreign.At{ID: r.s.ID() + "/" + t.callID(c.it.ID), Time: c.at}, fc)
}

// scriptDone emits what a code-mode script did, in the order its text
// makes its calls: each nested plan call through the core, each nested
// exec_command as the next command the script ran; the commands left (a
// call in a loop ran more than once) after them. The exec call itself is
// not emitted: it is the wrapper of the calls it makes.
func (t *Translator) scriptDone(ctx context.Context, r *request, sc *script, l Line) error {
	if err := t.begin(ctx, r); err != nil {
		return err
	}
	text, failed := outputText(l.Payload.Output)
	completed := !failed && strings.HasPrefix(text, "Script completed")
	at, next := sc.at, 0
	for i, s := range sc.sites {
		if _, isPlan := t.reg.Lookup(s.Tool); isPlan {
			switch {
			case !completed:
				t.n.ScriptPlansFailed++
			case s.Args == nil:
				t.n.ScriptPlansUnread++
			default:
				id := fmt.Sprintf("%s/%s/%d", r.s.ID(), sc.id, i)
				if err := r.s.Tool(ctx, foreign.At{ID: id, Time: at}, foreign.Call{Tool: s.Tool, Args: s.Args, OK: true}); err != nil {
					return err
				}
			}
			continue
		}
		if (s.Tool == "exec_command" || s.Tool == "shell") && next < len(sc.commands) {
			c := sc.commands[next]
			next++
			if err := t.command(ctx, r, c); err != nil {
				return err
			}
			at = c.at
		}
	}
	for _, c := range sc.commands[next:] {
		if err := t.command(ctx, r, c); err != nil {
			return err
		}
	}
	return nil
}
