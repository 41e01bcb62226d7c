package otel

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/foreign"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// mapTrace maps the spans of one trace as one session and returns the
// number of events sent and what the plan calls lacked.
func mapTrace(ctx context.Context, reg *plandialect.Registry, files *foreign.Files, sink agent.Sink, spans []*span) (int64, foreign.Quality, error) {
	spans = slices.Clone(spans)
	// Start order; the agent span first among equals, then span id, so that
	// the same spans map the same way however they were exported.
	slices.SortFunc(spans, func(a, b *span) int {
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(rank(a), rank(b)), strings.Compare(a.id, b.id))
	})
	root := agentSpan(spans)
	name := cmp.Or(root.agentName, root.service)
	sessionID := root.conversation
	model := root.model
	var tools []string
	for _, s := range spans {
		sessionID = cmp.Or(sessionID, s.conversation)
		if inference[s.op] {
			model = cmp.Or(model, s.model)
		}
		if s.op == opExecuteTool && s.tool != "" && !slices.Contains(tools, s.tool) {
			tools = append(tools, s.tool)
		}
	}
	sessionID = cmp.Or(sessionID, root.trace) // foreign hashes one too long
	a := agentName(name)
	sess := foreign.New(sink, a+"/otel", sessionID, reg).WithFiles(files, "")
	key := func(s *span) string { return s.trace + "-" + s.id }

	err := sess.Start(ctx, foreign.At{ID: key(root) + "/start", Time: root.start, Seq: micros(root.start)}, events.SessionStartedData{
		Goal:         root.goal,
		Agent:        a,
		AgentVersion: cmp.Or(root.agentVersion, root.version, "unknown"),
		Model:        cmp.Or(model, "unknown"),
		Tools:        tools,
	})
	if err != nil {
		return sess.Emitted(), sess.Quality(), err
	}
	for _, s := range spans {
		switch {
		case inference[s.op]:
			sess.Iterate()
		case s.op == opExecuteTool && s.tool != "":
			c := foreign.Call{Tool: s.tool, Args: s.args, OK: !s.failed, Error: cmp.Or(s.errMsg, s.errType), Kind: s.errType, Duration: s.duration()}
			if err := sess.Tool(ctx, foreign.At{ID: key(s), Time: s.end, Seq: micros(s.start)}, c); err != nil {
				return sess.Emitted(), sess.Quality(), err
			}
		}
	}
	var outcome events.Outcome // judged by the plan
	if root.failed {
		outcome = failure(root.errType)
	}
	err = sess.End(ctx, foreign.At{ID: key(root) + "/end", Time: root.end, Seq: micros(root.end)}, outcome)
	return sess.Emitted(), sess.Quality(), err
}

func rank(s *span) int {
	if s.op == opInvokeAgent {
		return 0
	}
	return 1
}

// agentSpan returns the session's invoke_agent span: the one without a
// parent, else the first to start. spans hold at least one.
func agentSpan(spans []*span) *span {
	var first *span
	for _, s := range spans {
		if s.op != opInvokeAgent {
			continue
		}
		if s.parent == "" {
			return s
		}
		if first == nil {
			first = s
		}
	}
	return first
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
