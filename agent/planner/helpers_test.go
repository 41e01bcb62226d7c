package planner

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

const (
	testSource  = "skilllite/host-a/worker-3"
	testSession = "sess-planner-test"
)

var testTools = []string{"read_file", "write_file", "run_command", "grep", "search_web"}

// memSink collects the events sent to it, in order.
type memSink struct {
	mu   sync.Mutex
	evs  []*events.Event
	seen int // events already returned by take
	fail error
}

func (m *memSink) Send(_ context.Context, e *events.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.evs = append(m.evs, e)
	return nil
}

var _ agent.Sink = (*memSink)(nil)

// take returns the events sent since the last take.
func (m *memSink) take() []*events.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	evs := m.evs[m.seen:]
	m.seen = len(m.evs)
	return evs
}

func (m *memSink) all() []*events.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*events.Event(nil), m.evs...)
}

// clock is a manual clock; it moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2025, 6, 12, 10, 0, 0, 0, time.UTC)}
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a planner on an in-memory sink with a manual clock.
type fixture struct {
	p     *Planner
	sink  *memSink
	clock *clock
}

func newFixture(tb testing.TB, cfg Config) *fixture {
	tb.Helper()
	f := &fixture{sink: &memSink{}, clock: newClock()}
	s := agent.NewSession(f.sink, testSource, testSession).WithClock(f.clock.now)
	if cfg.Clock == nil {
		cfg.Clock = f.clock.now
	}
	p, err := New(s, cfg)
	if err != nil {
		tb.Fatalf("New() error = %v", err)
	}
	f.p = p
	return f
}

// plannedFixture returns a fixture started with info and planned with tasks, its
// events taken.
func plannedFixture(tb testing.TB, cfg Config, info StartInfo, tasks ...agent.Task) *fixture {
	tb.Helper()
	f := newFixture(tb, cfg)
	ctx := tb.Context()
	if err := f.p.Start(ctx, info); err != nil {
		tb.Fatalf("Start() error = %v", err)
	}
	if _, err := f.p.NewPlanFromTasks(ctx, tasks); err != nil {
		tb.Fatalf("NewPlanFromTasks() error = %v", err)
	}
	f.sink.take()
	return f
}

func toolsConfig() Config { return Config{Tools: testTools} }

// wire returns evs as "type data" lines after the trip an event makes:
// json.Marshal, events.Decode (the contract), Payload, and the payload
// marshalled again.
func wire(tb testing.TB, evs []*events.Event) []string {
	tb.Helper()
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			tb.Fatalf("json.Marshal(%s #%d) error = %v", e.Type, e.Seq, err)
		}
		got, err := events.Decode(b)
		if err != nil {
			tb.Fatalf("events.Decode(%s) error = %v", b, err)
		}
		p, err := got.Payload()
		if err != nil {
			tb.Fatalf("Payload(%s) error = %v", b, err)
		}
		out = append(out, line(tb, got.Type, p))
	}
	return out
}

// ev is the wire line of an event of type typ with data.
func ev(tb testing.TB, typ events.Type, data any) string {
	tb.Helper()
	return line(tb, typ, data)
}

func line(tb testing.TB, typ events.Type, data any) string {
	tb.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		tb.Fatalf("json.Marshal(%v) error = %v", data, err)
	}
	return string(typ) + " " + string(b)
}

// checkEvents compares the wire lines of evs with want.
func checkEvents(tb testing.TB, evs []*events.Event, want []string) {
	tb.Helper()
	got := wire(tb, evs)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		tb.Errorf("events:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// checkSeqs checks that evs number the session from 1, without gaps.
func checkSeqs(tb testing.TB, evs []*events.Event) {
	tb.Helper()
	for i, e := range evs {
		if e.Seq != int64(i+1) || e.Subject != testSession || e.Source != testSource {
			tb.Fatalf("event %d: seq %d subject %q source %q, want seq %d of %s from %s", i, e.Seq, e.Subject, e.Source, i+1, testSession, testSource)
		}
	}
}

func task(id int64, desc, hint string) agent.Task {
	t := agent.Task{ID: id, Description: desc}
	if hint != "" {
		t.ToolHint = &hint
	}
	return t
}

func typed(t agent.Task, taskType string) agent.Task {
	t.TaskType = taskType
	return t
}

func done(t agent.Task) agent.Task {
	t.Completed = true
	return t
}

func tasksJSON(tb testing.TB, tasks []agent.Task) string {
	tb.Helper()
	if tasks == nil {
		tasks = []agent.Task{}
	}
	b, err := json.Marshal(tasks)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// call is a tool.called payload for a real call.
func call(taskID int64, tool, hint string, ok bool, kind, msg string, ms int64) agent.ToolCalled {
	d := agent.ToolCalled{Tool: tool, OK: ok, ErrorKind: kind, Error: msg, DurationMS: ms}
	if taskID != 0 {
		d.TaskID = &taskID
	}
	if hint != "" {
		d.Hint = &hint
	}
	return d
}

// control is a tool.called payload for a control call.
func control(taskID int64, tool, hint string, ok bool, kind, msg string) agent.ToolCalled {
	d := call(taskID, tool, hint, ok, kind, msg, 0)
	d.Control = true
	return d
}

func mustNil(tb testing.TB, what string, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("%s error = %v", what, err)
	}
}

var errSink = errors.New("sink down")
