package infer

import (
	"slices"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
)

func TestFromEventsHidesPlans(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	seq := map[string]int64{}
	var evs []*events.Event
	add := func(session string, typ events.Type, data any) {
		t.Helper()
		seq[session]++
		e, err := events.New("agentsim/test", session, seq[session], typ, at, data)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	one := int64(1)
	hint := "grep"
	const a, b = "0190c8a0-0000-7000-8000-000000000001", "0190c8a0-0000-7000-8000-000000000002"
	add(a, events.SessionStarted, events.SessionStartedData{Goal: "g", Agent: "agentsim", AgentVersion: "1", Model: "m", Tools: []string{"grep"}})
	add(b, events.SessionStarted, events.SessionStartedData{Goal: "g", Agent: "agentsim", AgentVersion: "1", Model: "m", Tools: []string{"grep"}})
	add(a, events.PlanCreated, events.PlanCreatedData{Tasks: []events.Task{{ID: 1, Description: "d"}}, Origin: events.OriginModel})
	add(a, events.ToolCalled, events.ToolCalledData{TaskID: &one, Tool: "grep", Hint: &hint, ErrorKind: "timeout"})
	add(a, events.ToolCalled, events.ToolCalledData{TaskID: &one, Tool: "grep", Hint: &hint, ErrorKind: "timeout"})
	add(b, events.ToolCalled, events.ToolCalledData{Tool: "bash", OK: true})
	add(a, events.ToolCalled, events.ToolCalledData{Tool: "update_task_plan", OK: true, Control: true})
	add(a, events.PlanUpdated, events.PlanUpdatedData{Replan: 1, Valid: true, Tasks: []events.Task{{ID: 2, Description: "d"}}, Kept: []int64{}, Dropped: []events.Task{}, Trigger: events.TriggerToolFailures})
	add(a, events.ToolCalled, events.ToolCalledData{TaskID: &one, Tool: "search_web", OK: true})
	add(a, events.ToolCalled, events.ToolCalledData{TaskID: &one, Tool: "complete_task", OK: true, Control: true})
	add(a, events.TaskCompleted, events.TaskCompletedData{TaskID: 2, Completion: events.CompletionSuccess})

	ss, err := FromEvents(evs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0].ID != a || ss[1].ID != b {
		t.Fatalf("FromEvents: sessions %+v, want %s then %s", ss, a, b)
	}
	want := []Call{{Tool: "grep", ErrorKind: "timeout"}, {Tool: "grep", ErrorKind: "timeout"}, {Tool: "search_web", OK: true}}
	if !slices.Equal(ss[0].Calls, want) || !slices.Equal(ss[0].Replans, []int{2}) {
		t.Fatalf("session a: calls %+v replans %v, want %+v and [2]", ss[0].Calls, ss[0].Replans, want)
	}
	if got := (Rule{MinFailures: 1}).Infer(ss[0].Calls); !slices.Equal(ats(got), ss[0].Replans) {
		t.Fatalf("Infer(session a) at %v, want %v", ats(got), ss[0].Replans)
	}
}
