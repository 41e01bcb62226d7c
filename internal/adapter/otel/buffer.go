package otel

import (
	"container/list"
	"time"
)

// spanOverhead is what a buffered span costs beyond its strings and
// arguments: the span struct, its times, the id map's entry, the slice slot.
const spanOverhead = 512

// size is what s costs while buffered, in bytes (an estimate that errs
// high: the strings and arguments it holds plus spanOverhead).
func (s *span) size() int64 {
	n := len(s.trace) + len(s.id) + len(s.parent) + len(s.name) + len(s.convention) + len(s.conversation) +
		len(s.agentName) + len(s.agentVersion) + len(s.model) + len(s.goal) + len(s.output) + len(s.tool) +
		len(s.callID) + len(s.args) + len(s.errMsg) + len(s.errType) + len(s.service) + len(s.version)
	return int64(n) + spanOverhead
}

// traceBuf is one trace not mapped yet.
type traceBuf struct {
	id    string
	spans []*span
	logs  []*logRec // the log records joined to it
	ids   map[string]bool
	bytes int64         // the spans' size
	last  time.Time     // when its last span arrived
	first time.Time     // when its earliest span started
	agent bool          // has a mappable span (an agent, workflow, model, tool or plan span)
	root  bool          // has a span without parent
	idle  *list.Element // in pending.idle
	aged  *list.Element // in pending.agents; nil without a mappable span
	ready *list.Element // in pending.settled; nil unless complete
	// inputs is the number of inputs (requests, file records) that
	// brought its spans and log records: a trace that came whole in one
	// is mapped without settling.
	inputs int
}

// pending is the traces waiting to be mapped, byte- and span-accounted,
// each in O(1): idle orders all of them by their last span's arrival (the
// front is the least recently active, evicted first), agents orders those
// with a mappable span the same way (the front lingered longest).
type pending struct {
	m       map[string]*traceBuf
	idle    list.List
	agents  list.List
	settled list.List // the complete traces, least recently active first
	spans   int
	bytes   int64
}

func newPending() *pending { return &pending{m: map[string]*traceBuf{}} }

func (p *pending) len() int { return len(p.m) }

// get returns the trace of id, created if new.
func (p *pending) get(id string) *traceBuf {
	b := p.m[id]
	if b == nil {
		b = &traceBuf{id: id, ids: map[string]bool{}}
		b.idle = p.idle.PushBack(b)
		p.m[id] = b
	}
	return b
}

// touch records activity on b at now: it moves to the back of its lists.
func (p *pending) touch(b *traceBuf, now time.Time) {
	b.last = now
	p.idle.MoveToBack(b.idle)
	if b.aged != nil {
		p.agents.MoveToBack(b.aged)
	}
	if b.ready != nil {
		p.settled.MoveToBack(b.ready)
	}
}

// settling puts b on the settled list (ready) or takes it off.
func (p *pending) settling(b *traceBuf, ready bool) {
	switch {
	case ready && b.ready == nil:
		b.ready = p.settled.PushBack(b)
	case !ready && b.ready != nil:
		p.settled.Remove(b.ready)
		b.ready = nil
	}
}

// add appends s to b, arrived at now; false when b holds s already.
func (p *pending) add(b *traceBuf, s *span, now time.Time) bool {
	p.touch(b, now)
	if b.ids[s.id] {
		return false
	}
	b.ids[s.id] = true
	b.spans = append(b.spans, s)
	n := s.size()
	b.bytes += n
	p.bytes += n
	p.spans++
	b.root = b.root || s.parent == ""
	if b.first.IsZero() || s.start.Before(b.first) {
		b.first = s.start
	}
	if s.kind.mappable() {
		b.agent = true
		if b.aged == nil {
			b.aged = p.agents.PushBack(b)
		}
	}
	return true
}

// addLog appends r to b, arrived at now; false when b holds r already.
func (p *pending) addLog(b *traceBuf, r *logRec, now time.Time) bool {
	p.touch(b, now)
	k := r.key()
	if b.ids[k] {
		return false
	}
	b.ids[k] = true
	b.logs = append(b.logs, r)
	n := r.size()
	b.bytes += n
	p.bytes += n
	p.spans++
	return true
}

// complete reports whether b can be mapped now: its root span arrived,
// it is the run (an agent or workflow span), no span's parent is missing,
// it holds a GenAI span, every tool span of a CLI that logs its calls'
// arguments (Claude Code, Codex) has its log record, and a run whose prompt
// is only logged has that record: a CLI's logs, exported apart from its
// spans, are joined.
// A trace that is never complete is mapped after Linger.
func (b *traceBuf) complete() bool {
	if !b.root || !b.agent {
		return false
	}
	ids := make(map[string]bool, len(b.spans))
	for _, s := range b.spans {
		ids[s.id] = true
	}
	for _, s := range b.spans {
		switch {
		case s.parent != "" && !ids[s.parent]:
			return false // a span whose parent has not arrived
		case s.parent == "" && s.kind != kindAgent && s.kind != kindWorkflow:
			// A root that is not the run (an HTTP handler's, Codex's
			// turn/start) may end before the run does: the trace is
			// mapped after Linger.
			return false
		}
	}
	logged := map[string]bool{}
	prompt := false
	for _, r := range b.logs {
		switch r.name {
		case logToolResult:
			logged[r.callID] = logged[r.callID] || r.args != nil
		case logUserPrompt:
			prompt = true
		}
	}
	for _, s := range b.spans {
		switch {
		case s.awaitsPrompt && !prompt:
			return false
		case s.kind == kindTool && s.logged && s.args == nil && s.callID != "" && !logged[s.callID]:
			return false
		}
	}
	return true
}

// remove drops b.
func (p *pending) remove(b *traceBuf) {
	p.idle.Remove(b.idle)
	if b.aged != nil {
		p.agents.Remove(b.aged)
	}
	if b.ready != nil {
		p.settled.Remove(b.ready)
	}
	delete(p.m, b.id)
	p.spans -= len(b.spans) + len(b.logs)
	p.bytes -= b.bytes
}

// oldest is the least recently active trace, nil when none waits.
func (p *pending) oldest() *traceBuf {
	if e := p.idle.Front(); e != nil {
		return e.Value.(*traceBuf)
	}
	return nil
}

// lingering is the trace with a mappable span that has been idle longest,
// nil when there is none.
func (p *pending) lingering() *traceBuf {
	if e := p.agents.Front(); e != nil {
		return e.Value.(*traceBuf)
	}
	return nil
}

// ring remembers the last n trace ids added, forgetting the oldest.
type ring struct {
	n   int
	set map[string]bool
	ids []string
}

func newRing(n int) *ring { return &ring{n: n, set: map[string]bool{}} }

func (r *ring) has(id string) bool { return r.set[id] }

func (r *ring) add(id string) {
	if r.set[id] {
		return
	}
	r.set[id] = true
	r.ids = append(r.ids, id)
	if len(r.ids) > r.n {
		delete(r.set, r.ids[0])
		r.ids = r.ids[1:]
	}
}

func (r *ring) remove(id string) { delete(r.set, id) } // its slot ages out

// counters keeps a count per key for the last n keys used (older keys are
// forgotten, their counts lost).
type counters struct {
	n    int
	m    map[string]int64
	keys []string
}

func newCounters(n int) *counters { return &counters{n: n, m: map[string]int64{}} }

// next adds one to key's count and returns it.
func (c *counters) next(key string) int64 {
	if _, ok := c.m[key]; !ok {
		c.keys = append(c.keys, key)
		if len(c.keys) > c.n {
			delete(c.m, c.keys[0])
			c.keys = c.keys[1:]
		}
	}
	c.m[key]++
	return c.m[key]
}
