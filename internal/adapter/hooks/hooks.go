// Package hooks is the base of the adapters that read an agent's hook
// inputs (Claude Code's, Cursor's): JSON objects one after the other, each
// a hook call's input, bare or in the envelope {"time": RFC 3339, "hook":
// input} that the documented hook commands write. It keeps the sessions by
// the agent's session id, in first-seen order, each a foreign.Session that
// emits through the plan-dialect core, and the totals every hook adapter
// reports; what a hook means is the agent's adapter's to say.
package hooks

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/adapter/records"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// Config says who the events come from and which files are plans.
type Config struct {
	Agent  string // agent name
	Source string
	Model  string // unless the hooks name one
	Plan   plandialect.Config
	// Files: the plan files and file tools whose calls are plan
	// operations; the zero value reads none.
	Files plandialect.FilesConfig
	// MaxRecord bounds a record's bytes (records.DefaultMax when not
	// positive); MaxOpen the sessions open at once (DefaultMaxOpen when
	// not positive): see Base.Session.
	MaxRecord, MaxOpen int
}

// Counts are a hook translator's totals.
type Counts struct {
	Records  int64
	Events   int64
	Sessions int64 // sessions started
	Ended    int64 // sessions ended
	Open     int64 // sessions left open at the end of input
	// Evicted: sessions dropped as abandoned, open when Config.MaxOpen
	// newer ones had started: not ended, no outcome made up for them.
	Evicted   int64
	Ignored   int64
	Malformed int64
	// FileTimed and ClockTimed count the records without a time: stamped
	// with the input file's modification time (the same on every run over
	// the same file), or, read from a stream, with the clock.
	FileTimed, ClockTimed int64
	Quality               foreign.Quality
}

// Notes returns what the untimed records mean, none when every record
// had its time.
func (c Counts) Notes() []string {
	var n []string
	if c.FileTimed > 0 {
		n = append(n, fmt.Sprintf("%d hook records carry no time and were stamped with their file's modification time: bridging the same file again gives the same events, but their durations are 0; the hook command of the agent's docs records the time", c.FileTimed))
	}
	if c.ClockTimed > 0 {
		n = append(n, fmt.Sprintf("%d hook records carry no time and, read from a stream, were stamped with the clock: bridging them again gives other times, which the store refuses as conflicting duplicates; bridge the file with -in FILE, or record the time with the hook command of the agent's docs", c.ClockTimed))
	}
	if c.Evicted > 0 {
		n = append(n, fmt.Sprintf("%d sessions were still open when -max-open newer ones had begun and were dropped as abandoned: their events so far were sent, but no agent.session.ended was made up for them (their outcome is unknown, as for a session left open), and later records of them were ignored", c.Evicted))
	}
	return append(n, c.Quality.Notes()...)
}

// RecordError is a record skipped as malformed.
type RecordError = foreign.RecordError

// Session is one session of hook inputs; Own is what the agent's adapter
// keeps of it besides.
type Session[X any] struct {
	*foreign.Session
	pending bool // started, agent.session.started not emitted yet
	StartAt time.Time
	Model   string
	Goal    string
	Ordinal int64 // hooks of the session so far
	Stopped bool  // a turn ended (Stop), and no prompt since where the agent says so
	StopAt  time.Time
	Own     X
	elem    *list.Element // in Base.order
	key     string        // its id in Base.Sessions (its Session's ID may differ: hashed, split)
}

// Key is the id s was opened with (Base.Session).
func (s *Session[X]) Key() string { return s.key }

// Base is what every hook translator has: the configuration, the sink, the
// sessions and the totals. Not safe for concurrent use.
type Base[X any] struct {
	Cfg   Config
	sink  agent.Sink
	Now   func() time.Time
	reg   *plandialect.Registry
	files *foreign.Files
	// Sessions are the open sessions, by id: at most Cfg.MaxOpen (Session
	// drops the one first seen for a new one past it), first seen first in
	// order.
	Sessions map[string]*Session[X]
	order    *list.List
	// Done remembers the ids of the sessions ended (Forget) or dropped, a
	// bounded number of them, so that a late record of one is ignored.
	Done *Done
	// OnEvict, when not nil, is called with each session dropped as
	// abandoned, for the adapter's own state of it.
	OnEvict func(*Session[X])
	N       Counts
	// stamp is the time of the records without one in the input being
	// read: its file's modification time; zero for a stream (Now).
	stamp time.Time
}

// NewBase returns a Base sending to sink; now stamps records without a
// time.
func NewBase[X any](cfg Config, sink agent.Sink, now func() time.Time) (*Base[X], error) {
	reg, err := plandialect.New(cfg.Plan)
	if err != nil {
		return nil, err
	}
	files, err := foreign.NewFiles(cfg.Files)
	if err != nil {
		return nil, err
	}
	b := &Base[X]{Cfg: cfg, Now: now, reg: reg, files: files, Sessions: map[string]*Session[X]{}, order: list.New(),
		Done: NewDone(doneFactor * cfg.maxOpen())}
	b.sink = foreign.CountingSink{Next: sink, N: &b.N.Events}
	return b, nil
}

// Stats returns the totals so far, the data quality of the open sessions
// included.
func (b *Base[X]) Stats() Counts {
	c := b.N
	for _, s := range b.Sessions {
		c.Quality.Add(s.Quality())
	}
	return c
}

// Read hands the JSON objects of r, one after the other (lines or not), to
// record until r ends or ctx is done (records.ReadValues: a JSON array is
// its elements, each at most Cfg.MaxRecord bytes). A *RecordError from
// record goes to onErr, numbered, and is skipped; so does a stretch of
// input that is not JSON, or too long, counted as one malformed record, and
// reading goes on at the next line that parses.
//
// Records without a time take r's modification time when r is a regular
// file (so that the same file always gives the same events), else Now.
func (b *Base[X]) Read(ctx context.Context, r io.Reader, record func(context.Context, []byte) error, onErr func(*RecordError)) error {
	b.stamp = time.Time{}
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok { // *os.File, or a wrapper of one
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			b.stamp = fi.ModTime().UTC()
		}
	}
	n := 0
	return records.ReadValues(ctx, r, b.Cfg.MaxRecord, func(ctx context.Context, line int, raw []byte) error {
		n++
		err := record(ctx, raw)
		if re := (*RecordError)(nil); errors.As(err, &re) {
			re.Record, re.Line = n, line
			onErr(re)
			return nil
		}
		return err
	}, func(bad *records.Bad) {
		n++
		b.N.Records++
		b.N.Malformed++
		onErr(&RecordError{Record: n, Line: bad.Line, Err: bad.Err})
	})
}

// Record translates one record of b: parse reads the hook input (the
// envelope taken off) stamped with its time (the envelope's, else the
// file's, else Now), and
// hook translates what parse read. A record that is not a JSON object, one
// parse refuses and a *RecordError from hook are counted malformed.
func Record[X, H any](ctx context.Context, b *Base[X], raw []byte, parse func(input []byte, at time.Time) (H, error), hook func(context.Context, H) error) error {
	b.N.Records++
	err := func() error {
		input, at, err := Unwrap(raw)
		if err != nil {
			return &RecordError{Err: err}
		}
		switch {
		case !at.IsZero():
		case !b.stamp.IsZero():
			at = b.stamp
			b.N.FileTimed++
		default:
			at = b.Now()
			b.N.ClockTimed++
		}
		h, err := parse(input, at)
		if err != nil {
			return &RecordError{Err: err}
		}
		return hook(ctx, h)
	}()
	if re := (*RecordError)(nil); errors.As(err, &re) {
		b.N.Malformed++
	}
	return err
}

// Unwrap returns the hook input of a record, and the envelope's time when
// the record is an envelope (zero when it has none, or one that does not
// parse).
func Unwrap(raw []byte) ([]byte, time.Time, error) {
	var env struct {
		Time string          `json:"time"`
		Hook json.RawMessage `json:"hook"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, time.Time{}, fmt.Errorf("not a JSON object: %w", err)
	}
	if len(env.Hook) == 0 {
		return raw, time.Time{}, nil
	}
	at, _ := time.Parse(time.RFC3339Nano, env.Time) // a time that does not parse is no time
	return env.Hook, at, nil
}

// Session returns the session id, started at at when it is new (its first
// hook); dir resolves its plan files' relative paths. A new session past
// Cfg.MaxOpen drops the open one first seen as abandoned (O(1)): its
// quality counted, no end emitted, its id Done.
func (b *Base[X]) Session(id, dir string, at time.Time) *Session[X] {
	s := b.Sessions[id]
	if s == nil {
		if len(b.Sessions) >= b.Cfg.maxOpen() {
			b.evict(b.order.Front().Value.(*Session[X]))
		}
		s = &Session[X]{Session: foreign.New(b.sink, b.Cfg.Source, id, b.reg).WithFiles(b.files, dir), pending: true, StartAt: at, Model: b.Cfg.Model, key: id}
		s.elem = b.order.PushBack(s)
		b.Sessions[id] = s
		b.N.Sessions++
	}
	return s
}

func (b *Base[X]) evict(s *Session[X]) {
	if b.OnEvict != nil {
		b.OnEvict(s)
	}
	b.N.Evicted++
	b.N.Quality.Add(s.Quality())
	b.Forget(s)
}

// Forget removes s from the open sessions (it ended) and remembers its id
// as Done.
func (b *Base[X]) Forget(s *Session[X]) {
	delete(b.Sessions, s.key)
	b.order.Remove(s.elem)
	b.Done.Add(s.key)
}

// MaxOpen is the bound of open sessions (Config.MaxOpen, or its default).
func (b *Base[X]) MaxOpen() int { return b.Cfg.maxOpen() }

// Oldest returns the open session first seen, nil when none is open.
func (b *Base[X]) Oldest() *Session[X] {
	if e := b.order.Front(); e != nil {
		return e.Value.(*Session[X])
	}
	return nil
}

// InOrder returns the open sessions, first seen first.
func (b *Base[X]) InOrder() []*Session[X] {
	out := make([]*Session[X], 0, b.order.Len())
	for e := b.order.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*Session[X]))
	}
	return out
}

// Pending reports whether s's agent.session.started is still due.
func (s *Session[X]) Pending() bool { return s.pending }

// Open emits s's agent.session.started if it is still due.
func (b *Base[X]) Open(ctx context.Context, s *Session[X]) error {
	if !s.pending {
		return nil
	}
	s.pending = false
	return s.Session.Start(ctx, foreign.At{ID: s.ID() + "/start", Time: s.StartAt}, events.SessionStartedData{
		Goal: s.Goal, Agent: b.Cfg.Agent, AgentVersion: "unknown", Model: s.Model, Tools: []string{},
	})
}
