package otel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// Defaults of Config.
const (
	DefaultLinger   = 30 * time.Second
	DefaultMaxSpans = 200_000
	DefaultRemember = 100_000
	// DefaultMaxBytes bounds the buffered spans' size: 256 MiB, a sixth of
	// the ingester's memory budget (docs/operations.md, "Memory limit").
	DefaultMaxBytes = 256 << 20
	// DefaultMaxIdle is how long a trace without a GenAI span (no agent,
	// workflow, model, tool or plan span) may wait for its next span before
	// it is dropped.
	DefaultMaxIdle = 10 * time.Minute
	// DefaultSettle is how long a complete trace waits for a span that
	// was still on its way (an exporter sending spans concurrently, one a
	// request, may deliver a child after its root) before it is mapped.
	DefaultSettle = time.Second
)

// Config configures a Mapper.
type Config struct {
	Plan plandialect.Config
	// Files: the plan files and file tools whose execute_tool spans are plan
	// operations (docs/plan-dialects.md, "Markdown plan files"); the zero
	// value reads none.
	Files plandialect.FilesConfig
	// Settle: a complete trace (docs/otel.md, "Order and completeness")
	// whose spans came in more than one input is mapped once nothing of it
	// arrived for this long (Sweep). A trace that came whole in one input,
	// or any with Settle 0, is mapped at once.
	Settle time.Duration
	// Linger: a trace with a GenAI span whose root span has not arrived
	// (its root is another service's, or still running) is mapped this long
	// after its last span arrived (Sweep).
	Linger time.Duration
	// MaxSpans and MaxBytes bound the spans held for traces not mapped yet
	// (their count, and their size as span.size estimates it); beyond
	// either the least recently active trace is dropped (Stats.Evicted).
	MaxSpans int
	MaxBytes int64
	// MaxIdle: a trace without a GenAI span whose last span arrived this
	// long ago is dropped by Sweep (Stats.Expired).
	MaxIdle time.Duration
	// Permanent, when set, tells a sink error that will never go away (an
	// event the stream never takes): the trace is dropped and counted
	// (Stats.Undeliverable) instead of kept to be mapped again.
	Permanent func(error) bool
	// Remember is how many mapped traces are remembered, so that their late
	// or re-sent spans are dropped instead of starting a new trace.
	Remember int
}

// DefaultConfig returns the defaults: the built-in plan tools, the default
// plan files and file tools, linger 30s, 200,000 buffered spans of 256 MiB
// at most, 10 minutes idle at most, 100,000 remembered traces.
func DefaultConfig() Config {
	return Config{Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig(), Settle: DefaultSettle, Linger: DefaultLinger,
		MaxSpans: DefaultMaxSpans, MaxBytes: DefaultMaxBytes, MaxIdle: DefaultMaxIdle, Remember: DefaultRemember}
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	errs := []error{c.Plan.Validate(), c.Files.Validate()}
	if c.Settle < 0 {
		errs = append(errs, fmt.Errorf("settle %v is negative", c.Settle))
	}
	if c.Linger <= 0 {
		errs = append(errs, fmt.Errorf("linger %v is not positive", c.Linger))
	}
	if c.MaxSpans < 1 {
		errs = append(errs, fmt.Errorf("max spans %d is below 1", c.MaxSpans))
	}
	if c.MaxBytes < 1 {
		errs = append(errs, fmt.Errorf("max buffered bytes %d is below 1", c.MaxBytes))
	}
	if c.MaxIdle <= 0 {
		errs = append(errs, fmt.Errorf("max idle %v is not positive", c.MaxIdle))
	}
	if c.Remember < 1 {
		errs = append(errs, fmt.Errorf("remember %d is below 1", c.Remember))
	}
	return errors.Join(errs...)
}

// Stats are a Mapper's totals.
type Stats struct {
	Spans    int64 // spans received
	Rejected int64 // spans without a trace or span id
	Sessions int64 // traces mapped (one session each)
	Events   int64 // events emitted
	// AfterMapped: spans of a trace already mapped (re-sent, or late), dropped.
	AfterMapped int64
	// Unmapped: traces dropped without a GenAI span: at Flush, or when
	// their root span arrived.
	Unmapped int64
	// Evicted: traces dropped unmapped because MaxSpans or MaxBytes was
	// reached, holding EvictedSpans spans of EvictedBytes bytes.
	Evicted, EvictedSpans, EvictedBytes int64
	// Expired: traces without a GenAI span dropped after MaxIdle.
	Expired int64
	// Cut: sessions mapped from a trace whose earlier spans were evicted
	// or expired: they lack what those spans held.
	Cut int64
	// Undeliverable: traces dropped because the sink refused an event of
	// theirs for good (Config.Permanent).
	Undeliverable int64
	// Abandoned: traces with a GenAI span that Flush did not map
	// before its context ended (a stop's grace period).
	Abandoned int64
	// Waiting: traces buffered now, holding WaitingSpans spans of
	// WaitingBytes bytes.
	Waiting, WaitingSpans, WaitingBytes int64
	Quality                             foreign.Quality
	// LogRecords: log records received; LogsRead of them were read (tool
	// results, prompts), LogsUnjoined of those had no trace id to join,
	// LogsAfterMapped came after their trace was mapped.
	LogRecords, LogsRead, LogsUnjoined, LogsAfterMapped int64
	// PlanSpansUnread: plan spans whose plan could not be read (no
	// plan-tool call under them, no checklist in their content).
	PlanSpansUnread int64
	// Conventions counts the spans read by each convention
	// (conventionGenAI, …), for the report.
	Conventions map[string]int64
}

// Notes returns the data-quality sentences of s: what the data lacked.
// Traces without a GenAI span (Stats.Unmapped: an HTTP server's, a CLI's
// plumbing) lack nothing; the report's summary counts them.
func (s Stats) Notes() []string {
	n := s.Quality.Notes()
	if s.Evicted > 0 {
		n = append(n, fmt.Sprintf("%d traces (%d spans, %d bytes) were dropped unmapped: more waited than the buffer holds", s.Evicted, s.EvictedSpans, s.EvictedBytes))
	}
	if s.Expired > 0 {
		n = append(n, fmt.Sprintf("%d traces without a GenAI span were dropped after waiting too long for their next span", s.Expired))
	}
	if s.Cut > 0 {
		n = append(n, fmt.Sprintf("%d sessions were mapped from traces whose earlier spans had been dropped (buffer full or idle too long): they lack those spans' tool calls and plans", s.Cut))
	}
	if s.Undeliverable > 0 {
		n = append(n, fmt.Sprintf("%d traces were dropped: the stream refused an event of theirs for good (docs/operations.md, \"Limits\")", s.Undeliverable))
	}
	if s.Abandoned > 0 {
		n = append(n, fmt.Sprintf("%d traces with a GenAI span were dropped unmapped at stop: the grace period ended first", s.Abandoned))
	}
	if s.PlanSpansUnread > 0 {
		n = append(n, fmt.Sprintf("%d plan spans (planning boundaries) carried no plan that could be read: no plan-tool call under them and no checklist in their model call's output; they were not counted as plans or replans (with content capture off, gen_ai.output.messages is not recorded)", s.PlanSpansUnread))
	}
	if s.LogsUnjoined > 0 {
		n = append(n, fmt.Sprintf("%d log records of tool calls or prompts carried no trace id and could not be joined to their spans", s.LogsUnjoined))
	}
	if s.LogsAfterMapped > 0 {
		n = append(n, fmt.Sprintf("%d log records arrived after their trace was mapped and were dropped: what they held (a tool call's arguments, the prompt) is missing from those sessions", s.LogsAfterMapped))
	}
	if s.AfterMapped > 0 {
		n = append(n, fmt.Sprintf("%d spans arrived after their trace was mapped (re-sent or late) and were dropped", s.AfterMapped))
	}
	return n
}

// Mapper turns OTLP traces into evosignal events for a sink, reading each
// span by the convention it follows (conventions.go). It holds each trace's
// spans until the trace is complete (see docs/otel.md, "Order and completeness"), then maps the
// trace as one session. Safe for concurrent use; Send is called under its
// lock, so events reach the sink in order. Every operation on the buffer is
// O(1) per span or trace, whatever waits.
type Mapper struct {
	cfg   Config
	reg   *plandialect.Registry
	files *foreign.Files
	sink  agent.Sink

	mu      sync.Mutex
	pending *pending
	done    *ring // mapped traces
	cut     *ring // traces dropped unmapped
	// created counts each conversation's TaskCreate calls: Claude Code
	// numbers its tasks 1, 2, … in the order they are created, across the
	// session's prompts, and exports the id only in the call's output,
	// which its telemetry does not carry.
	created *counters
	stats   Stats
}

// New returns a Mapper sending to sink, or cfg's problems.
func New(cfg Config, sink agent.Sink) (*Mapper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("otel mapper config: %w", err)
	}
	reg, err := plandialect.New(cfg.Plan)
	if err != nil {
		return nil, err
	}
	files, err := foreign.NewFiles(cfg.Files)
	if err != nil {
		return nil, err
	}
	return &Mapper{cfg: cfg, reg: reg, files: files, sink: sink, pending: newPending(),
		done: newRing(cfg.Remember), cut: newRing(cfg.Remember), created: newCounters(cfg.Remember)}, nil
}

// Config returns the mapper's configuration.
func (m *Mapper) Config() Config { return m.cfg }

// Stats returns the totals so far.
func (m *Mapper) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Conventions = maps.Clone(s.Conventions)
	s.Waiting, s.WaitingSpans, s.WaitingBytes = int64(m.pending.len()), int64(m.pending.spans), m.pending.bytes
	return s
}

// Consumed is what one Consume or ConsumeLogs took.
type Consumed struct {
	Rejected int64 // spans without a trace or span id
	Unjoined int64 // log records read but without a trace id
	// Settling is the number of traces this input made complete that
	// came in several inputs: they are mapped once nothing of them arrived
	// for Config.Settle (Sweep).
	Settling int
}

// Consume takes the spans of td, received at now. A trace it makes
// complete (docs/otel.md, "Order and completeness") is mapped at once when
// it came whole in td or Config.Settle is 0, else it settles
// (Consumed.Settling) and Sweep maps it; a trace whose
// root span arrived without any GenAI span is dropped (Stats.Unmapped). An
// error comes from the sink, and the traces not mapped because of it stay
// pending.
func (m *Mapper) Consume(ctx context.Context, td ptrace.Traces, now time.Time) (Consumed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c Consumed
	var ready []*traceBuf
	queued := map[*traceBuf]bool{}
	for _, rs := range td.ResourceSpans().All() {
		res := rs.Resource().Attributes()
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				m.stats.Spans++
				s, ok := readSpan(sp, res)
				if !ok {
					c.Rejected++
					continue
				}
				if s.kind.mappable() {
					if m.stats.Conventions == nil {
						m.stats.Conventions = map[string]int64{}
					}
					m.stats.Conventions[s.convention]++
				}
				if b := m.add(s, now); b != nil && !queued[b] {
					queued[b] = true
					b.inputs++
					ready = append(ready, b)
				}
			}
		}
	}
	m.stats.Rejected += c.Rejected
	ready = slices.DeleteFunc(ready, func(b *traceBuf) bool {
		if m.pending.m[b.id] == b && b.root && !b.agent && len(b.logs) == 0 {
			m.drop(b) // complete, and nothing of it is read
			m.stats.Unmapped++
			return true
		}
		return false
	})
	return c, m.settle(ctx, ready, &c)
}

// settle sorts the traces an input touched: the complete ones are mapped
// at once (Settle 0) or put to settle, the others taken off the settling
// list (a span turned up whose parent has not).
func (m *Mapper) settle(ctx context.Context, touched []*traceBuf, c *Consumed) error {
	var now []*traceBuf
	for _, b := range touched {
		if m.pending.m[b.id] != b {
			continue
		}
		ready := b.complete()
		switch {
		case ready && (m.cfg.Settle == 0 || b.inputs == 1):
			// Settle 0, or the whole trace came in this one input: no
			// span of it is on its way elsewhere.
			now = append(now, b)
		case ready:
			m.pending.settling(b, true)
			c.Settling++
		default:
			m.pending.settling(b, false)
		}
	}
	return m.mapTraces(ctx, now, false)
}

// MapSettled maps the complete traces nothing of which arrived for
// Config.Settle before now (Sweep does too).
func (m *Mapper) MapSettled(ctx context.Context, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mapSettled(ctx, now)
}

func (m *Mapper) mapSettled(ctx context.Context, now time.Time) error {
	var ready []*traceBuf
	for e := m.pending.settled.Front(); e != nil; e = e.Next() {
		b := e.Value.(*traceBuf)
		if now.Sub(b.last) < m.cfg.Settle {
			break
		}
		ready = append(ready, b)
	}
	return m.mapTraces(ctx, ready, true)
}

// add buffers s and returns its trace, nil when s was dropped.
func (m *Mapper) add(s *span, now time.Time) *traceBuf {
	if m.done.has(s.trace) {
		m.stats.AfterMapped++
		return nil
	}
	b := m.pending.get(s.trace)
	if !m.pending.add(b, s, now) {
		return b // the same span sent twice before its trace was mapped
	}
	return m.bound(b)
}

// bound evicts the least recently active traces while the buffer is over
// its bounds, and returns b, nil when b was evicted.
func (m *Mapper) bound(b *traceBuf) *traceBuf {
	for m.pending.spans > m.cfg.MaxSpans || m.pending.bytes > m.cfg.MaxBytes {
		old := m.pending.oldest()
		m.stats.Evicted++
		m.stats.EvictedSpans += int64(len(old.spans) + len(old.logs))
		m.stats.EvictedBytes += old.bytes
		m.drop(old)
		if old == b {
			return nil
		}
	}
	return b
}

// drop forgets a pending trace unmapped; a session later mapped from its
// id is counted as cut.
func (m *Mapper) drop(b *traceBuf) {
	m.pending.remove(b)
	m.cut.add(b.id)
}

// Sweep maps the complete traces settled by now (MapSettled) and the
// traces with a GenAI span whose last span arrived at least Linger before
// now, and drops those without one idle for MaxIdle.
func (m *Mapper) Sweep(ctx context.Context, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.mapSettled(ctx, now); err != nil {
		return err
	}
	for e := m.pending.idle.Front(); e != nil; {
		b := e.Value.(*traceBuf)
		e = e.Next()
		if now.Sub(b.last) < m.cfg.MaxIdle {
			break
		}
		if !b.agent { // one with a GenAI span is mapped below, or after Linger
			m.stats.Expired++
			m.drop(b)
		}
	}
	var ready []*traceBuf
	for e := m.pending.agents.Front(); e != nil; e = e.Next() {
		b := e.Value.(*traceBuf)
		if now.Sub(b.last) < m.cfg.Linger {
			break
		}
		ready = append(ready, b)
	}
	return m.mapTraces(ctx, ready, true)
}

// Flush maps every pending trace with a GenAI span and drops the
// others (Stats.Unmapped): the input is complete. When ctx ends first, the
// traces not mapped yet are dropped and counted (Stats.Abandoned) and the
// error says so.
func (m *Mapper) Flush(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ready []*traceBuf
	for e := m.pending.idle.Front(); e != nil; {
		b := e.Value.(*traceBuf)
		e = e.Next()
		if b.agent {
			ready = append(ready, b)
			continue
		}
		m.drop(b)
		m.stats.Unmapped++
	}
	// In the order the runs started: a conversation's traces map in turn.
	slices.SortStableFunc(ready, func(a, b *traceBuf) int { return a.first.Compare(b.first) })
	err := m.mapTraces(ctx, ready, true)
	if err != nil && ctx.Err() != nil {
		n := 0
		for e := m.pending.agents.Front(); e != nil; {
			b := e.Value.(*traceBuf)
			e = e.Next()
			m.drop(b)
			n++
		}
		m.stats.Abandoned += int64(n)
		err = fmt.Errorf("%d traces with a GenAI span dropped unmapped: %w", n, err)
	}
	return err
}

// mapTraces maps bs. swept: no request waits for them (Sweep, Flush), so a
// trace the sink refuses for good is dropped and counted; else the error
// goes back to the request, and the trace stays.
func (m *Mapper) mapTraces(ctx context.Context, bs []*traceBuf, swept bool) error {
	for _, b := range bs {
		if m.pending.m[b.id] != b {
			continue // mapped or dropped since
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("map trace %s: %w", b.id, err)
		}
		if len(b.spans) == 0 {
			continue // log records only: they wait for their spans
		}
		n, q, err := mapTrace(ctx, m.reg, m.files, m.sink, b.spans, b.logs, m.created)
		m.stats.Events += n
		if err != nil && swept && m.cfg.Permanent != nil && m.cfg.Permanent(err) && ctx.Err() == nil {
			m.stats.Undeliverable++
			m.drop(b)
			continue
		}
		if err != nil {
			return fmt.Errorf("map trace %s: %w", b.id, err)
		}
		m.stats.Quality.Add(q.Quality)
		m.stats.PlanSpansUnread += q.PlanSpansUnread
		m.stats.Sessions++
		if m.cut.has(b.id) {
			m.stats.Cut++
			m.cut.remove(b.id)
		}
		m.pending.remove(b)
		m.done.add(b.id)
	}
	return nil
}

// agentName makes name an agent name (a NATS subject token): letters,
// digits, '_' and '-', every other character '-'; "unknown" when empty.
func agentName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, strings.TrimSpace(name))
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return "unknown"
	}
	return name
}
