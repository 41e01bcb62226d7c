package claudecode

// Claude Code's transcripts (~/.claude/projects/<project>/<session>.jsonl):
// one JSON object a line, as testdata/realcli/README.md ("Transcript")
// describes what 2.1.332 writes. One evosignal session per request, as for
// the hooks, its id <sessionId>/<promptId>:
//
//	user line, string content, not isMeta   a prompt: a request begins (goal = the prompt);
//	(or text blocks with a new promptId)    the request in force, if any, ends at its last line
//	assistant line                          agent.session.started of its request (model the
//	                                        message's, agent version the line's) with its first
//	                                        one; one iteration and its usage per message.id;
//	                                        its tool_use blocks wait for their results
//	user line with tool_result blocks       the call: plan and task tools through the core,
//	                                        any other agent.tool.called, failed when is_error
//	                                        (the result's text the error); toolUseResult is
//	                                        the call's result (TaskCreate's task id)
//	assistant line that ends the turn       agent.session.ended, at that line: its
//	(stop_reason end_turn, stop_sequence     stop_reason says the model answered without a
//	or refusal, no tool_use)                call, so Claude Code stops there
//	isSidechain lines                       sub-agent work: not the parent request's; counted
//	                                        (lines, calls, failed, tokens) in the summary
//	any other line type                     skipped, counted by type
//
// Times are the lines' timestamps (a call's is its result's; its duration
// from its tool_use line), event ids the request id plus the tool_use id
// (or "start", "end"), so the same transcript gives the same events. The
// end of the input ends nothing: a request whose final answer is not in the
// file yet (the transcript is still being written, or Claude Code was
// stopped mid-turn) stays open (docs/claude-code.md, "Transcripts"), so
// that what bridge -follow publishes of a growing file is what a later,
// longer read gives.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/adapter/hooks"
	"github.com/evosignal/evosignal/internal/adapter/records"
	"github.com/evosignal/evosignal/internal/events"
)

// Usage is the tokens of model messages, as their message.usage counts
// them (once per message.id).
type Usage struct {
	Input, Output, CacheRead, CacheCreation int64
}

func (u *Usage) add(o Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheCreation += o.CacheCreation
}

func (u Usage) String() string {
	return fmt.Sprintf("input %d, output %d, cache read %d, cache creation %d", u.Input, u.Output, u.CacheRead, u.CacheCreation)
}

// TranscriptCounts are a Transcript's totals.
type TranscriptCounts struct {
	Files     int64 // inputs read (Read calls)
	Records   int64 // lines read
	Events    int64
	Malformed int64
	Requests  int64 // requests begun
	Ended     int64 // requests ended by their final answer or the next prompt
	Open      int64 // requests not ended (no final answer in the input yet)
	Evicted   int64 // requests dropped as abandoned (hooks.Counts.Evicted)
	// Skipped: lines of the types the analyses have no use for
	// (attachment, api-request, queue-operation, …), by type.
	Skipped map[string]int64
	// Ignored: user and assistant lines of no use: meta lines, results of
	// calls the input does not hold, lines before any prompt or after their
	// request ended.
	Ignored int64
	// Unanswered: tool calls whose result was not in the input when their
	// request ended; not emitted.
	Unanswered int64
	// Sidechain: sub-agent work (isSidechain lines): not the parent
	// request's calls.
	Sidechain Sidechain
	// Usage: the tokens of the requests' model messages (sidechains apart).
	Usage   Usage
	Quality foreign.Quality
}

// Sidechain counts a translation's sub-agent work.
type Sidechain struct {
	Lines, Calls, Failed int64
	Usage                Usage
}

// LineError is a transcript line skipped as malformed; Line is its 1-based
// number in its file.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Transcript turns Claude Code transcripts into events. Not safe for
// concurrent use.
type Transcript struct {
	b       *hooks.Base[request]
	n       TranscriptCounts
	current map[string]string // the key of the request in force (or last ended), by sessionId
	prompts map[string]int    // prompts without a promptId, by sessionId
	usage   map[string]Usage  // by request key, while the key is open or Done (OnEnd)
	line    int               // of the file being read
	sideMsg map[string]bool   // sidechain message ids whose usage was counted, in the file
	finals  map[string]string // the message that ended each request ended so, by key
	onEnd   func(key string, u Usage)
}

// request is what a transcript's request keeps besides the base's.
type request struct {
	sid      string // Claude Code's sessionId
	key      string
	version  string
	calls    map[string]*toolUse // tool_use blocks waiting for their result, by id
	messages map[string]bool     // message ids seen (usage and iterations once each)
	last     time.Time           // its last line's time
	final    string              // the message id that ended it
}

type toolUse struct {
	name  string
	input []byte
	at    time.Time
}

type tsession = hooks.Session[request]

// NewTranscript returns a Transcript sending to sink.
func NewTranscript(cfg Config, sink agent.Sink) (*Transcript, error) {
	b, err := hooks.NewBase[request](cfg, sink, time.Now) // every line used has its time
	if err != nil {
		return nil, err
	}
	t := &Transcript{b: b, current: map[string]string{}, prompts: map[string]int{},
		usage: map[string]Usage{}, finals: map[string]string{}, n: TranscriptCounts{Skipped: map[string]int64{}}}
	b.OnEvict = func(s *tsession) { t.forgetSession(s.Own.sid, s.Key()) }
	b.Done.OnForget = func(key string) {
		delete(t.usage, key)
		delete(t.finals, key)
	}
	return t, nil
}

// OnEnd makes f called with each request's usage when the request ends.
func (t *Transcript) OnEnd(f func(key string, u Usage)) { t.onEnd = f }

// Stats returns the totals so far.
func (t *Transcript) Stats() TranscriptCounts {
	c := t.n
	c.Skipped = maps.Clone(t.n.Skipped)
	b := t.b.Stats()
	c.Events, c.Quality = b.Events, b.Quality
	c.Open = int64(len(t.b.Sessions))
	c.Evicted = b.Evicted
	return c
}

// Usage returns the tokens of request key's model messages so far.
func (t *Transcript) Usage(key string) Usage { return t.usage[key] }

// Read translates the transcript r, a file of its own, until it ends or
// ctx is done. A malformed line, or one longer than Config.MaxRecord, goes
// to onErr and is skipped.
func (t *Transcript) Read(ctx context.Context, r io.Reader, onErr func(*LineError)) error {
	t.n.Files++
	t.line = 0
	t.sideMsg = map[string]bool{}
	lr := records.NewLines(r, t.b.Cfg.MaxRecord)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := lr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, records.ErrTooLong):
			t.line++
			t.n.Records++
			t.n.Malformed++
			err = &LineError{Line: t.line, Err: fmt.Errorf("longer than %d bytes: %w", lr.Max(), err)}
		case err != nil:
			return fmt.Errorf("read transcript line %d: %w", lr.N()+1, err)
		default:
			if line = bytes.TrimSpace(line); len(line) == 0 {
				t.line++
				continue
			}
			err = t.Line(ctx, line)
		}
		if le := (*LineError)(nil); errors.As(err, &le) {
			onErr(le)
			continue
		}
		if err != nil {
			return err
		}
	}
}

// Close ends nothing: a request without its final answer stays open
// (TranscriptCounts.Open).
func (t *Transcript) Close(context.Context) error { return nil }

// tline is the part of a transcript line the translation reads.
type tline struct {
	Type        string          `json:"type"`
	SessionID   string          `json:"sessionId"`
	UUID        string          `json:"uuid"`
	Timestamp   string          `json:"timestamp"`
	IsSidechain bool            `json:"isSidechain"`
	IsMeta      bool            `json:"isMeta"`
	Compact     bool            `json:"isCompactSummary"`
	PromptID    string          `json:"promptId"`
	Cwd         string          `json:"cwd"`
	Version     string          `json:"version"`
	Message     *message        `json:"message"`
	Result      json.RawMessage `json:"toolUseResult"`
	at          time.Time
}

type message struct {
	ID         string          `json:"id"`
	Model      string          `json:"model"`
	Content    json.RawMessage `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      *struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// block is one content block of a message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// Line translates one line of the file being read. A line that is not a
// transcript line is a *LineError (counted malformed); any other error
// stops the reading.
func (t *Transcript) Line(ctx context.Context, b []byte) error {
	t.line++
	t.n.Records++
	l, err := decodeLine(b)
	if err != nil {
		t.n.Malformed++
		return &LineError{Line: t.line, Err: err}
	}
	switch {
	case l.Type != "user" && l.Type != "assistant":
		t.n.Skipped[l.Type]++
		return nil
	case l.IsSidechain:
		t.sidechain(l)
		return nil
	case l.Type == "user":
		return t.user(ctx, l)
	}
	return t.assistant(ctx, l)
}

func decodeLine(b []byte) (*tline, error) {
	l := &tline{}
	if err := json.Unmarshal(b, l); err != nil {
		return nil, fmt.Errorf("not a transcript line: %w", err)
	}
	if l.Type == "" {
		return nil, errors.New("not a transcript line: no type")
	}
	if l.Type != "user" && l.Type != "assistant" {
		return l, nil
	}
	switch {
	case l.SessionID == "":
		return nil, fmt.Errorf("%s line without sessionId", l.Type)
	case l.Message == nil:
		return nil, fmt.Errorf("%s line without message", l.Type)
	}
	at, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("%s line: timestamp %q: %w", l.Type, l.Timestamp, err)
	}
	l.at = at
	if bytes.Equal(bytes.TrimSpace(l.Result), []byte("null")) {
		l.Result = nil
	}
	return l, nil
}

// blocks returns a message's content as blocks, and its text when the
// content is a string.
func blocks(content json.RawMessage) ([]block, string, bool) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return nil, s, true
	}
	var bs []block
	if json.Unmarshal(content, &bs) != nil {
		return nil, "", false
	}
	return bs, "", true
}

// text is a tool result's or a message's text: a string, or its text
// blocks one after the other.
func text(content json.RawMessage) string {
	bs, s, _ := blocks(content)
	for _, b := range bs {
		if b.Type == "text" {
			s += b.Text
		}
	}
	return s
}

// model is the message as a model call that took d: the contract's input
// tokens are all the prompt's (Claude Code's input_tokens are those not
// read from or written to the cache), the cached ones those read from it;
// no counts when the message has no usage.
func (m *message) model(d time.Duration) foreign.Model {
	f := foreign.Model{Name: m.Model, Duration: d}
	if u := m.Usage; u != nil {
		in, out, cached := u.Input+u.CacheRead+u.CacheCreation, u.Output, u.CacheRead
		f.Input, f.Output, f.Cached = &in, &out, &cached
	}
	return f
}

func (m *message) usage() Usage {
	if m.Usage == nil {
		return Usage{}
	}
	return Usage{Input: m.Usage.Input, Output: m.Usage.Output, CacheRead: m.Usage.CacheRead, CacheCreation: m.Usage.CacheCreation}
}

// sidechain counts a line of sub-agent work: its calls' results, and its
// message's usage once.
func (t *Transcript) sidechain(l *tline) {
	t.n.Sidechain.Lines++
	bs, _, _ := blocks(l.Message.Content)
	if l.Type == "assistant" {
		if id := l.Message.ID; id == "" || !t.sideMsg[id] {
			t.sideMsg[id] = true
			t.n.Sidechain.Usage.add(l.Message.usage())
		}
		return
	}
	for _, b := range bs {
		if b.Type == "tool_result" {
			t.n.Sidechain.Calls++
			if b.IsError {
				t.n.Sidechain.Failed++
			}
		}
	}
}

func (t *Transcript) user(ctx context.Context, l *tline) error {
	bs, s, ok := blocks(l.Message.Content)
	if !ok {
		t.n.Malformed++
		return &LineError{Line: t.line, Err: errors.New("user line: content neither a string nor blocks")}
	}
	var results []block
	prompt := s
	for _, b := range bs {
		switch b.Type {
		case "tool_result":
			results = append(results, b)
		case "text":
			prompt += b.Text
		}
	}
	switch {
	case len(results) > 0:
		return t.results(ctx, l, results)
	case l.IsMeta || l.Compact:
		t.n.Ignored++ // what Claude Code adds to the conversation itself
		return nil
	case bs != nil && l.PromptID == "":
		// Text blocks without a prompt's id: Claude Code's own notes
		// ("[Request interrupted by user]"), not a prompt.
		t.n.Ignored++
		return nil
	}
	return t.prompt(ctx, l, prompt)
}

// key is the request a prompt line begins: <sessionId>/<promptId>, else
// <sessionId> for the session's first prompt and <sessionId>/2, /3, … for
// the next ones, as for the hooks.
func (t *Transcript) key(l *tline) string {
	if l.PromptID != "" {
		return l.SessionID + "/" + l.PromptID
	}
	t.prompts[l.SessionID]++
	if n := t.prompts[l.SessionID]; n > 1 {
		return fmt.Sprintf("%s/%d", l.SessionID, n)
	}
	return l.SessionID
}

func (t *Transcript) prompt(ctx context.Context, l *tline, goal string) error {
	if l.PromptID != "" && t.current[l.SessionID] == l.SessionID+"/"+l.PromptID {
		t.n.Ignored++ // more text of the prompt in force
		return nil
	}
	key := t.key(l)
	if cur := t.current[l.SessionID]; cur != "" {
		if err := t.end(ctx, cur, time.Time{}); err != nil {
			return err
		}
	}
	t.current[l.SessionID] = key
	if t.b.Done.Has(key) || t.b.Sessions[key] != nil {
		t.n.Ignored++ // the prompt again (a copy of the conversation)
		return nil
	}
	s := t.b.Session(key, l.Cwd, l.at)
	s.Goal = goal
	s.Own = request{sid: l.SessionID, key: key, version: l.Version, calls: map[string]*toolUse{}, messages: map[string]bool{}, last: l.at}
	t.n.Requests++
	return nil
}

// request returns the request in force of l's session, nil (the line
// counted ignored) when there is none or it ended.
func (t *Transcript) request(l *tline) *tsession {
	key := t.current[l.SessionID]
	if l.Type == "user" && l.PromptID != "" {
		key = l.SessionID + "/" + l.PromptID
	}
	s := t.b.Sessions[key]
	if s == nil {
		t.n.Ignored++
	}
	return s
}

// open emits the request's agent.session.started if it is still due.
func (t *Transcript) open(ctx context.Context, s *tsession) error {
	if s.Started() {
		return nil
	}
	v := s.Own.version
	if v == "" {
		v = "unknown"
	}
	return s.Start(ctx, foreign.At{ID: s.ID() + "/start", Time: s.StartAt}, events.SessionStartedData{
		Goal: s.Goal, Agent: t.b.Cfg.Agent, AgentVersion: v, Model: s.Model, Tools: []string{},
	})
}

func (t *Transcript) assistant(ctx context.Context, l *tline) error {
	key := t.current[l.SessionID]
	s := t.b.Sessions[key]
	if s == nil {
		if !t.b.Done.Has(key) || l.Message.ID == "" || l.Message.ID != t.finalOf(key) {
			t.n.Ignored++ // before any prompt, or after its request ended
		}
		return nil
	}
	m := l.Message
	if !s.Started() && m.Model != "" && m.Model != "<synthetic>" { // <synthetic>: Claude Code's own message
		s.Model = m.Model
	}
	if err := t.open(ctx, s); err != nil {
		return err
	}
	since := s.Own.last
	s.Own.last = l.at
	if !s.Own.messages[m.ID] || m.ID == "" {
		s.Own.messages[m.ID] = true
		u := m.usage()
		t.n.Usage.add(u)
		ru := t.usage[key]
		ru.add(u)
		t.usage[key] = ru
		if m.Model == "<synthetic>" {
			s.Iterate() // Claude Code's own message: a turn, not a model call
		} else {
			id := m.ID
			if id == "" {
				id = fmt.Sprintf("line%d", t.line)
			}
			if err := s.Session.Model(ctx, foreign.At{ID: s.ID() + "/" + id, Time: l.at}, m.model(l.at.Sub(since))); err != nil {
				return err
			}
		}
	}
	bs, _, _ := blocks(m.Content)
	calls := false
	for _, b := range bs {
		if b.Type != "tool_use" {
			continue
		}
		calls = true
		id := b.ID
		if id == "" {
			id = fmt.Sprintf("line%d", t.line)
		}
		s.Own.calls[id] = &toolUse{name: b.Name, input: b.Input, at: l.at}
	}
	switch m.StopReason {
	case "end_turn", "stop_sequence", "refusal":
		if !calls {
			s.Own.final = m.ID
			return t.end(ctx, key, l.at)
		}
	}
	return nil
}

// finalOf is the message that ended request key, whose lines after the
// first (one per content block) belong to it.
func (t *Transcript) finalOf(key string) string { return t.finals[key] }

func (t *Transcript) results(ctx context.Context, l *tline, results []block) error {
	s := t.request(l)
	if s == nil {
		return nil
	}
	s.Own.last = l.at
	for _, b := range results {
		u := s.Own.calls[b.ToolUseID]
		if u == nil {
			t.n.Ignored++ // the result of a call this input does not hold
			continue
		}
		delete(s.Own.calls, b.ToolUseID)
		if err := t.open(ctx, s); err != nil {
			return err
		}
		c := foreign.Call{Tool: u.name, Args: u.input, OK: !b.IsError, Duration: l.at.Sub(u.at)}
		if len(results) == 1 {
			c.Result = l.Result
		}
		if len(c.Args) == 0 || bytes.Equal(c.Args, []byte("null")) {
			c.Args = nil
		}
		if b.IsError {
			c.Error = text(b.Content)
			if c.Error == "" {
				c.Error = "tool failed"
			}
		}
		if err := s.Tool(ctx, foreign.At{ID: s.ID() + "/" + b.ToolUseID, Time: l.at}, c); err != nil {
			return err
		}
	}
	return nil
}

// forgetSession forgets what is kept of Claude Code session sid when key,
// dropped as abandoned, is its request in force: a session of none but
// abandoned requests keeps nothing.
func (t *Transcript) forgetSession(sid, key string) {
	if t.current[sid] == key {
		delete(t.current, sid)
		delete(t.prompts, sid)
	}
}

// end ends request key at at (zero: at its last line).
func (t *Transcript) end(ctx context.Context, key string, at time.Time) error {
	s := t.b.Sessions[key]
	if s == nil {
		return nil
	}
	if at.IsZero() {
		at = s.Own.last
	}
	t.b.Forget(s)
	if s.Own.final != "" {
		t.finals[key] = s.Own.final
	}
	t.n.Ended++
	t.n.Unanswered += int64(len(s.Own.calls))
	if err := t.open(ctx, s); err != nil {
		return err
	}
	if err := s.Flush(ctx); err != nil { // before the outcome is judged
		return err
	}
	t.b.N.Quality.Add(s.Quality())
	if t.onEnd != nil {
		t.onEnd(key, t.usage[key])
	}
	return s.End(ctx, foreign.At{ID: s.ID() + "/end", Time: at}, "")
}
