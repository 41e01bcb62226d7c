// Package adaptertest checks what an agent adapter emits: decodes its
// events against the contract, checks the sessions' envelope, and shows
// events one line each for tests to compare.
package adaptertest

import (
	"bytes"
	"cmp"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/evosignal/evosignal/internal/events"
)

// DecodeLines decodes JSON lines of events; each must pass events.Decode.
func DecodeLines(tb testing.TB, b []byte) []*events.Event {
	tb.Helper()
	var evs []*events.Event
	for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		e, err := events.Decode(line)
		if err != nil {
			tb.Fatalf("event line %d does not pass the contract: %v\n%s", i+1, err, line)
		}
		evs = append(evs, e)
	}
	return evs
}

// CheckSessions checks the envelope of a stream of sessions: each session
// (subject) is a UUID, numbered from seq 1 without gaps, starts with
// agent.session.started and ends with agent.session.ended; every event has
// an id of its own and the source.
func CheckSessions(tb testing.TB, evs []*events.Event, source string) {
	tb.Helper()
	seq := map[string]int64{}
	ids := map[string]bool{}
	var open string
	for i, e := range evs {
		if e.Source != source {
			tb.Errorf("event %d: source %q, want %q", i+1, e.Source, source)
		}
		if _, err := uuid.Parse(e.ID); err != nil || ids[e.ID] {
			tb.Errorf("event %d: id %q is not a UUID of its own", i+1, e.ID)
		}
		ids[e.ID] = true
		if e.Type == events.SessionStarted {
			if open != "" {
				tb.Errorf("event %d: session %s starts while %s is open", i+1, e.Subject, open)
			}
			if _, ok := seq[e.Subject]; ok {
				tb.Errorf("event %d: session id %s used twice", i+1, e.Subject)
			}
			if _, err := uuid.Parse(e.Subject); err != nil {
				tb.Errorf("event %d: session id %q is not a UUID", i+1, e.Subject)
			}
			open = e.Subject
		}
		if e.Subject != open {
			tb.Errorf("event %d (%s): session %s, want the open one %q", i+1, e.Type, e.Subject, open)
		}
		seq[e.Subject]++
		if e.Seq != seq[e.Subject] {
			tb.Errorf("event %d: seq %d, want %d", i+1, e.Seq, seq[e.Subject])
		}
		if e.Type == events.SessionEnded {
			open = ""
		}
	}
	if open != "" {
		tb.Errorf("session %s never ends", open)
	}
}

// Render shows an event's type and key fields on one line.
func Render(tb testing.TB, e *events.Event) string {
	tb.Helper()
	p, err := e.Payload()
	if err != nil {
		tb.Fatalf("payload of %s: %v", e.Type, err)
	}
	switch d := p.(type) {
	case *events.SessionStartedData:
		return fmt.Sprintf("started goal=%q agent=%s model=%s tools=%s", d.Goal, d.Agent, d.Model, strings.Join(d.Tools, ","))
	case *events.PlanCreatedData:
		return fmt.Sprintf("plan.created %s tasks=%s", d.Origin, taskIDs(d.Tasks))
	case *events.PlanUpdatedData:
		s := fmt.Sprintf("plan.updated #%d %s", d.Replan, d.Trigger)
		if d.Reason != "" {
			s += fmt.Sprintf(" reason=%q", d.Reason)
		}
		if !d.Valid {
			return s + fmt.Sprintf(" rejected error=%q over_cap=%v", d.Error, d.OverCap)
		}
		return s + fmt.Sprintf(" tasks=%s kept=%s dropped=%s over_cap=%v", taskIDs(d.Tasks), ids(d.Kept), taskIDs(d.Dropped), d.OverCap)
	case *events.ToolCalledData:
		task, hint := "-", "-"
		if d.TaskID != nil {
			task = fmt.Sprint(*d.TaskID)
		}
		if d.Hint != nil {
			hint = *d.Hint
		}
		s := fmt.Sprintf("tool %s task=%s hint=%s", d.Tool, task, hint)
		if d.OK {
			s += " ok"
		} else {
			s += fmt.Sprintf(" failed error=%q", d.Error)
			if d.ErrorKind != "" {
				s += " kind=" + d.ErrorKind
			}
		}
		if d.Control {
			s += " control"
		}
		if d.DurationMS != 0 {
			s += fmt.Sprintf(" ms=%d", d.DurationMS)
		}
		return s
	case *events.TaskCompletedData:
		s := fmt.Sprintf("task.completed %d %s calls=%d", d.TaskID, d.Completion, d.ToolCalls)
		if d.Reported != "" {
			s += " reported=" + string(d.Reported)
		}
		if d.Summary != "" {
			s += fmt.Sprintf(" summary=%q", d.Summary)
		}
		return s
	case *events.HintStrippedData:
		return fmt.Sprintf("hint.stripped task=%d hint=%s %s %s", d.TaskID, d.ToolHint, d.Phase, d.Reason)
	case *events.DepthLimitReachedData:
		return fmt.Sprintf("depth_limit task=%d calls=%d limit=%d", d.TaskID, d.ToolCalls, d.Limit)
	case *events.SessionEndedData:
		s := fmt.Sprintf("ended %s replans=%d calls=%d failed=%d iterations=%d ms=%d",
			d.Outcome, d.Replans, d.ToolCalls, d.FailedToolCalls, d.Iterations, d.DurationMS)
		if u := d.Usage; u != nil {
			s += fmt.Sprintf(" usage=%d:%s/%s/%s", u.ModelCalls, count(u.InputTokens), count(u.OutputTokens), count(u.CachedInputTokens))
		}
		return s
	case *events.ModelCalledData:
		task := "-"
		if d.TaskID != nil {
			task = fmt.Sprint(*d.TaskID)
		}
		s := fmt.Sprintf("model %s task=%s tokens=%s/%s/%s", cmp.Or(d.Model, "-"), task,
			count(d.InputTokens), count(d.OutputTokens), count(d.CachedInputTokens))
		if d.DurationMS != 0 {
			s += fmt.Sprintf(" ms=%d", d.DurationMS)
		}
		return s
	}
	return string(e.Type)
}

func taskIDs(ts []events.Task) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, t := range ts {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, t.ID)
		if t.Completed {
			b.WriteByte('*')
		}
	}
	return b.String() + "]"
}

func ids(xs []int64) string { return fmt.Sprint(xs) }

// count is a token count as Render shows it: "-" when not reported.
func count(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}
