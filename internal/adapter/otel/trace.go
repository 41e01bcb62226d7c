package otel

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// traceQuality is what a mapped trace lacked beyond the plan calls'
// quality.
type traceQuality struct {
	foreign.Quality
	// PlanSpansUnread: plan spans (planning boundaries) whose plan could
	// not be read: no plan-tool call under them, and no checklist in their
	// model call's output (content capture off, or prose).
	PlanSpansUnread int64
}

// mapTrace maps the spans of one trace as one session and returns the
// number of events sent and what the trace lacked.
func mapTrace(ctx context.Context, reg *plandialect.Registry, files *foreign.Files, sink agent.Sink, spans []*span, logs []*logRec, created *counters) (int64, traceQuality, error) {
	spans = slices.Clone(spans)
	// Start order; a run's span first among equals, then span id, so that
	// the same spans map the same way however they were exported.
	slices.SortFunc(spans, func(a, b *span) int {
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(rank(a), rank(b)), strings.Compare(a.id, b.id))
	})
	t := newTree(spans)
	run := t.run()
	var q traceQuality

	lg := joinLogs(logs)
	name := cmp.Or(run.agentName, t.firstOf(kindAgent, func(s *span) string { return s.agentName }), run.service)
	sessionID := cmp.Or(run.conversation, t.firstOf(kindOther, func(s *span) string { return s.conversation }), lg.conversation, run.trace)
	if req := cmp.Or(run.request, t.firstOf(kindOther, func(s *span) string { return s.request }), lg.request); req != "" && sessionID != run.trace {
		// A request of a conversation: <conversation>/<request>, as the
		// agent's own files give it (Claude Code's prompt, Codex's turn).
		sessionID += "/" + req
	}
	model := cmp.Or(run.model, t.firstOf(kindModel, func(s *span) string { return s.model }))
	goal := cmp.Or(run.goal, t.firstOf(kindModel, func(s *span) string { return s.goal }), lg.prompt)
	var tools []string
	for _, s := range spans {
		if s.kind == kindTool && s.tool != "" && !slices.Contains(tools, s.tool) {
			tools = append(tools, s.tool)
		}
	}
	a := agentName(name)
	sess := foreign.New(sink, a+"/otel", sessionID, reg).WithFiles(files, "")
	key := func(s *span) string { return s.trace + "-" + s.id }
	done := func(err error) (int64, traceQuality, error) {
		q.Quality = sess.Quality()
		return sess.Emitted(), q, err
	}

	err := sess.Start(ctx, foreign.At{ID: key(run) + "/start", Time: run.start, Seq: micros(run.start)}, events.SessionStartedData{
		Goal:         goal,
		Agent:        a,
		AgentVersion: cmp.Or(run.agentVersion, run.version, "unknown"),
		Model:        cmp.Or(model, "unknown"),
		Tools:        tools,
	})
	if err != nil {
		return done(err)
	}
	for _, s := range spans {
		switch s.kind {
		case kindModel:
			if t.within(s, func(p *span) bool { return p.kind == kindModel }) {
				continue // the outer model span counts the call
			}
			u := t.usageOf(s)
			m := foreign.Model{Name: s.model, Input: ptr(u.input, u.hasIn), Output: ptr(u.output, u.hasOut), Cached: ptr(u.cached, u.hasCached), Duration: s.duration()}
			if err := sess.Model(ctx, foreign.At{ID: key(s), Time: s.end, Seq: micros(s.start)}, m); err != nil {
				return done(err)
			}
		case kindTool:
			if s.tool == "" || t.within(s, func(p *span) bool { return p.kind == kindTool && p.tool == s.tool }) {
				continue // a tool span inside its own call's span
			}
			args := s.args
			if args == nil {
				args = t.innerArgs(s)
			}
			c := foreign.Call{Tool: s.tool, Args: args, OK: !s.failed, Error: cmp.Or(s.errMsg, s.errType), Kind: s.errType, Duration: s.duration()}
			if f := t.failedPart(s); c.OK && f != nil {
				c.OK, c.Error, c.Kind = false, cmp.Or(f.errMsg, f.errType), f.errType
			}
			if r := lg.calls[s.callID]; s.callID != "" && r != nil {
				if c.Args == nil {
					c.Args = r.args
				}
				if r.okKnown && !r.ok && c.OK {
					c.OK, c.Error = false, r.errMsg
				}
			}
			if d, ok := reg.LookupStep(c.Tool); ok && d.Name() == plandialect.ClaudeCodeTaskCreate && c.OK && c.Args != nil && c.Result == nil {
				// Claude Code's telemetry lacks the created task's id,
				// which the CLI gives as the session's next number.
				c.Result = fmt.Appendf(nil, `{"task":{"id":"%d"}}`, created.next(cmp.Or(run.conversation, sessionID)))
			}
			if err := sess.Tool(ctx, foreign.At{ID: key(s), Time: s.end, Seq: micros(s.start)}, c); err != nil {
				return done(err)
			}
		case kindPlan:
			if t.holds(s, func(c *span) bool {
				_, ok := reg.Lookup(c.tool)
				_, step := reg.LookupStep(c.tool)
				return c.kind == kindTool && (ok || step)
			}) {
				continue // its plan-tool calls state the plan
			}
			p, ok := t.planOf(s)
			if !ok {
				q.PlanSpansUnread++
				continue
			}
			if err := sess.Planned(ctx, foreign.At{ID: key(s) + "/plan", Time: s.end, Seq: micros(s.start)}, p); err != nil {
				return done(err)
			}
		}
	}
	var outcome events.Outcome // judged by the plan
	if run.failed {
		outcome = failure(run.errType)
	}
	err = sess.End(ctx, foreign.At{ID: key(run) + "/end", Time: run.end, Seq: micros(run.end)}, outcome)
	return done(err)
}

// joined is what a trace's log records add to it.
type joined struct {
	calls                         map[string]*logRec // tool results by call id
	conversation, request, prompt string
}

func joinLogs(logs []*logRec) joined {
	j := joined{calls: map[string]*logRec{}}
	for _, r := range logs {
		j.conversation = cmp.Or(j.conversation, r.conversation)
		j.request = cmp.Or(j.request, r.request)
		switch r.name {
		case logToolResult:
			if r.callID != "" && j.calls[r.callID] == nil {
				j.calls[r.callID] = r
			}
		case logUserPrompt:
			j.prompt = cmp.Or(j.prompt, r.prompt)
		}
	}
	return j
}

// failedPart returns a failed span under tool span s that carries its call
// id (Claude Code's tool.execution holds the call's outcome), nil when none.
func (t *tree) failedPart(s *span) *span {
	if s.callID == "" {
		return nil
	}
	for _, d := range t.descendants(s) {
		if d.failed && d.callID == s.callID && d.kind == kindOther {
			return d
		}
	}
	return nil
}

// ptr is &n when the count was reported, else nil.
func ptr(n int64, reported bool) *int64 {
	if !reported {
		return nil
	}
	return &n
}

// rank orders spans that start together: the run's spans (agent,
// workflow) first.
func rank(s *span) int {
	switch s.kind {
	case kindAgent:
		return 0
	case kindWorkflow:
		return 1
	}
	return 2
}

// tree is one trace's spans with their parent links.
type tree struct {
	spans    []*span // in start order
	order    map[*span]int
	byID     map[string]*span
	children map[string][]*span
}

func newTree(spans []*span) *tree {
	t := &tree{spans: spans, order: map[*span]int{}, byID: map[string]*span{}, children: map[string][]*span{}}
	for i, s := range spans {
		t.byID[s.id] = s
		t.order[s] = i
	}
	for _, s := range spans {
		if s.parent != "" {
			t.children[s.parent] = append(t.children[s.parent], s)
		}
	}
	return t
}

// run is the span that bounds the session: the outermost agent span, else
// the outermost workflow span, else the trace's root span, else its first.
func (t *tree) run() *span {
	for _, k := range []kind{kindAgent, kindWorkflow} {
		var first *span
		for _, s := range t.spans {
			if s.kind != k || t.within(s, func(p *span) bool { return p.kind == k }) {
				continue
			}
			if s.parent == "" {
				return s
			}
			if first == nil {
				first = s
			}
		}
		if first != nil {
			return first
		}
	}
	for _, s := range t.spans {
		if s.parent == "" {
			return s
		}
	}
	return t.spans[0]
}

// firstOf returns the first non-empty value of the spans of kind k
// (kindOther: of any mappable span), in start order.
func (t *tree) firstOf(k kind, v func(*span) string) string {
	for _, s := range t.spans {
		if (k == kindOther && s.kind.mappable() || s.kind == k) && v(s) != "" {
			return v(s)
		}
	}
	return ""
}

// within reports whether an ancestor of s satisfies f.
func (t *tree) within(s *span, f func(*span) bool) bool {
	for i, p := 0, t.byID[s.parent]; p != nil && i < len(t.spans); i, p = i+1, t.byID[p.parent] {
		if f(p) {
			return true
		}
	}
	return false
}

// holds reports whether a descendant of s satisfies f.
func (t *tree) holds(s *span, f func(*span) bool) bool {
	return slices.ContainsFunc(t.descendants(s), f)
}

// descendants returns the spans under s in start order (a walk of its
// subtree: the cost is the subtree's size).
func (t *tree) descendants(s *span) []*span {
	var out []*span
	seen := map[*span]bool{s: true}
	stack := slices.Clone(t.children[s.id])
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
		stack = append(stack, t.children[c.id]...)
	}
	slices.SortFunc(out, func(a, b *span) int { return t.order[a] - t.order[b] })
	return out
}

// usageOf is what model call s used: its own counts, else those of the
// first span under it that has some (a framework's model span over its
// client library's; Codex's handle_responses).
func (t *tree) usageOf(s *span) usage {
	if s.usage.has {
		return s.usage
	}
	for _, d := range t.descendants(s) {
		if d.usage.has {
			return d.usage
		}
	}
	return s.usage
}

// innerArgs returns the arguments of a tool span of the same tool under
// s, nil when none has them.
func (t *tree) innerArgs(s *span) []byte {
	for _, d := range t.descendants(s) {
		if d.kind == kindTool && d.tool == s.tool && d.args != nil {
			return d.args
		}
	}
	return nil
}

// planOf reads the plan of plan span s from its content: its own output,
// else the output of the model calls under it, as a Markdown checklist.
func (t *tree) planOf(s *span) (plandialect.Plan, bool) {
	texts := []string{s.output}
	for _, d := range t.descendants(s) {
		if d.kind == kindModel {
			texts = append(texts, d.output)
		}
	}
	for _, text := range texts {
		if strings.TrimSpace(text) == "" {
			continue
		}
		if p, err := (plandialect.MarkdownDialect{}).Parse([]byte(text)); err == nil && len(p.Tasks) > 0 {
			return p, true
		}
	}
	return plandialect.Plan{}, false
}

// failure is the outcome of a failed agent run by its error.type: timeout
// for a timeout, aborted for a cancellation, else failure.
func failure(errType string) events.Outcome {
	t := strings.ToLower(errType)
	switch {
	case strings.Contains(t, "timeout"), strings.Contains(t, "deadline"):
		return events.OutcomeTimeout
	case strings.Contains(t, "cancel"), strings.Contains(t, "abort"), strings.Contains(t, "interrupt"):
		return events.OutcomeAborted
	}
	return events.OutcomeFailure
}

// micros is t in microseconds since the Unix epoch: the seq an event of a
// span asks for (below 2^53 until the year 2255); 0 for times before 1970.
func micros(t time.Time) int64 { return max(t.UnixMicro(), 0) }
