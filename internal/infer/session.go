package infer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/evosignal/evosignal/internal/events"
)

// Session is one session as the inference sees it — its real tool calls —
// with the explicit replans it made, for scoring.
type Session struct {
	ID    string
	Agent string
	Calls []Call
	// Replans are the positions of its explicit replans (agent.plan.updated,
	// valid or not): the number of real calls before each. Hidden from the
	// inference, which sees Calls only.
	Replans []int
}

// FromEvents groups events into sessions, in order of their first event,
// each session's events in Seq order, and hides their plans: plan events,
// task completions and control calls are left out of Calls, and tool calls
// keep only their tool, outcome and error kind. A plan.updated becomes a
// position in Replans.
func FromEvents(evs []*events.Event) ([]Session, error) {
	bySession := map[string][]*events.Event{}
	var order []string
	for _, e := range evs {
		if _, seen := bySession[e.Subject]; !seen {
			order = append(order, e.Subject)
		}
		bySession[e.Subject] = append(bySession[e.Subject], e)
	}
	out := make([]Session, 0, len(order))
	for _, id := range order {
		es := bySession[id]
		slices.SortStableFunc(es, func(a, b *events.Event) int { return cmp.Compare(a.Seq, b.Seq) })
		s := Session{ID: id, Agent: es[0].Agent()}
		for _, e := range es {
			switch e.Type {
			case events.ToolCalled:
				var d events.ToolCalledData
				if err := json.Unmarshal(e.Data, &d); err != nil {
					return nil, fmt.Errorf("session %s seq %d: decode tool call: %w", id, e.Seq, err)
				}
				if !d.Control {
					s.Calls = append(s.Calls, Call{Tool: d.Tool, OK: d.OK, ErrorKind: d.ErrorKind})
				}
			case events.PlanUpdated:
				s.Replans = append(s.Replans, len(s.Calls))
			}
		}
		out = append(out, s)
	}
	return out, nil
}
