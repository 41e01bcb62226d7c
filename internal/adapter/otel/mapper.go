package otel

import (
	"context"
	"errors"
	"fmt"
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
)

// Config configures a Mapper.
type Config struct {
	Plan plandialect.Config
	// Files: the plan files and file tools whose execute_tool spans are plan
	// operations (docs/plan-dialects.md, "Markdown plan files"); the zero
	// value reads none.
	Files plandialect.FilesConfig
	// Linger: a trace with an invoke_agent span but no root invoke_agent
	// span (the agent ran under another span, e.g. an HTTP handler's) is
	// mapped this long after its last span arrived (Sweep).
	Linger time.Duration
	// MaxSpans bounds the spans held for traces not mapped yet; beyond it the
	// oldest trace is dropped (Stats.Evicted).
	MaxSpans int
	// Remember is how many mapped traces are remembered, so that their late
	// or re-sent spans are dropped instead of starting a new trace.
	Remember int
}

// DefaultConfig returns the defaults: the built-in plan tools, the default
// plan files and file tools, linger 30s, 200,000 buffered spans, 100,000
// remembered traces.
func DefaultConfig() Config {
	return Config{Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig(), Linger: DefaultLinger, MaxSpans: DefaultMaxSpans, Remember: DefaultRemember}
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	errs := []error{c.Plan.Validate(), c.Files.Validate()}
	if c.Linger <= 0 {
		errs = append(errs, fmt.Errorf("linger %v is not positive", c.Linger))
	}
	if c.MaxSpans < 1 {
		errs = append(errs, fmt.Errorf("max spans %d is below 1", c.MaxSpans))
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
	// Unmapped: traces dropped without an invoke_agent span (Flush).
	Unmapped int64
	// Evicted: traces dropped unmapped because MaxSpans was reached.
	Evicted int64
	Quality foreign.Quality
}

// Notes returns the data-quality sentences of s.
func (s Stats) Notes() []string {
	n := s.Quality.Notes()
	if s.Unmapped > 0 {
		n = append(n, fmt.Sprintf("%d traces had no invoke_agent span and were not mapped", s.Unmapped))
	}
	if s.Evicted > 0 {
		n = append(n, fmt.Sprintf("%d traces were dropped unmapped: more spans waited than the buffer holds", s.Evicted))
	}
	if s.AfterMapped > 0 {
		n = append(n, fmt.Sprintf("%d spans arrived after their trace was mapped (re-sent or late) and were dropped", s.AfterMapped))
	}
	return n
}

// Mapper turns OTLP traces of the GenAI semantic conventions into evosignal
// events for a sink. It holds each trace's spans until the trace's agent run
// is complete (see docs/otel.md, "Order and completeness"), then maps the
// trace as one session. Safe for concurrent use; Send is called under its
// lock, so events reach the sink in order.
type Mapper struct {
	cfg   Config
	reg   *plandialect.Registry
	files *foreign.Files
	sink  agent.Sink

	mu      sync.Mutex
	pending map[string]*traceBuf
	order   []string // pending trace ids, oldest first
	held    int      // spans pending
	done    map[string]bool
	ring    []string // mapped trace ids, oldest first
	stats   Stats
}

type traceBuf struct {
	spans []*span
	ids   map[string]bool
	last  time.Time // when its last span arrived
	agent bool      // has an invoke_agent span
	root  bool      // has an invoke_agent span without parent
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
	return &Mapper{cfg: cfg, reg: reg, files: files, sink: sink, pending: map[string]*traceBuf{}, done: map[string]bool{}}, nil
}

// Stats returns the totals so far.
func (m *Mapper) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// Consume takes the spans of td, received at now, and maps every trace
// whose root invoke_agent span has arrived. It returns the number of spans
// it rejected (no trace or span id); an error comes from the sink, and the
// traces not mapped because of it stay pending.
func (m *Mapper) Consume(ctx context.Context, td ptrace.Traces, now time.Time) (rejected int64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rs := range td.ResourceSpans().All() {
		res := rs.Resource().Attributes()
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				m.stats.Spans++
				s, ok := readSpan(sp, res)
				if !ok {
					rejected++
					continue
				}
				m.add(s, now)
			}
		}
	}
	m.stats.Rejected += rejected
	var ready []string
	for _, id := range m.order {
		if m.pending[id].root {
			ready = append(ready, id)
		}
	}
	return rejected, m.mapTraces(ctx, ready)
}

func (m *Mapper) add(s *span, now time.Time) {
	if m.done[s.trace] {
		m.stats.AfterMapped++
		return
	}
	b := m.pending[s.trace]
	if b == nil {
		b = &traceBuf{ids: map[string]bool{}}
		m.pending[s.trace] = b
		m.order = append(m.order, s.trace)
	}
	b.last = now
	if b.ids[s.id] {
		return // the same span sent twice before its trace was mapped
	}
	b.ids[s.id] = true
	b.spans = append(b.spans, s)
	m.held++
	if s.op == opInvokeAgent {
		b.agent = true
		b.root = b.root || s.parent == ""
	}
	for m.held > m.cfg.MaxSpans && len(m.order) > 0 {
		m.forget(m.order[0])
		m.stats.Evicted++
	}
}

// forget drops a pending trace.
func (m *Mapper) forget(id string) {
	m.held -= len(m.pending[id].spans)
	delete(m.pending, id)
	m.order = slices.DeleteFunc(m.order, func(x string) bool { return x == id })
}

// Sweep maps the traces with an invoke_agent span whose last span arrived
// at least Linger before now.
func (m *Mapper) Sweep(ctx context.Context, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ready []string
	for _, id := range m.order {
		if b := m.pending[id]; b.agent && now.Sub(b.last) >= m.cfg.Linger {
			ready = append(ready, id)
		}
	}
	return m.mapTraces(ctx, ready)
}

// Flush maps every pending trace with an invoke_agent span and drops the
// others (Stats.Unmapped): the input is complete.
func (m *Mapper) Flush(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ready []string
	for _, id := range slices.Clone(m.order) {
		if m.pending[id].agent {
			ready = append(ready, id)
			continue
		}
		m.forget(id)
		m.stats.Unmapped++
	}
	return m.mapTraces(ctx, ready)
}

func (m *Mapper) mapTraces(ctx context.Context, ids []string) error {
	for _, id := range ids {
		n, q, err := mapTrace(ctx, m.reg, m.files, m.sink, m.pending[id].spans)
		m.stats.Events += n
		if err != nil {
			return fmt.Errorf("map trace %s: %w", id, err)
		}
		m.stats.Quality.Add(q)
		m.stats.Sessions++
		m.forget(id)
		m.done[id] = true
		m.ring = append(m.ring, id)
		if len(m.ring) > m.cfg.Remember {
			delete(m.done, m.ring[0])
			m.ring = m.ring[1:]
		}
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
