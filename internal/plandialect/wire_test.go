package plandialect

import (
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
)

// TestResultEventsValid runs a session through the tracker and builds the
// events an adapter would emit from each Result; every one must pass the v1
// contract (events.New decodes what it builds).
func TestResultEventsValid(t *testing.T) {
	tr := newTracker(t, DefaultConfig())
	calls := []Plan{
		todos(),
		todos("[~] "+R, "[ ] "+F),
		todos("[x] "+R, "[~] "+F),
		todos("[x] "+R, "[ ] "+T),
		todos("[x] "+R, "[x] "+T, "[ ] "+D),
		revision("fixture first", "Write fixture @file_write", "Run tests @command"),
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	seq := int64(0)
	emit := func(typ events.Type, data any) {
		t.Helper()
		seq++
		if _, err := events.New("claude-code/test", "sess-1", seq, typ, at, data); err != nil {
			t.Fatalf("event %d (%s): %v", seq, typ, err)
		}
	}
	kinds := map[Kind]int{}
	for i, p := range calls {
		r, err := tr.Apply(p)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		kinds[r.Kind]++
		switch r.Kind {
		case Created:
			emit(events.PlanCreated, r.PlanCreated())
		case Replanned:
			emit(events.PlanUpdated, r.PlanUpdated(events.TriggerModel))
		}
		for _, id := range r.Completed {
			emit(events.TaskCompleted, events.TaskCompletedData{TaskID: id, Completion: events.CompletionSuccess})
		}
	}
	if kinds[Created] != 1 || kinds[Replanned] != 4 || kinds[Progressed] != 1 {
		t.Fatalf("kinds = %v, want 1 created, 4 replanned, 1 progressed", kinds)
	}
}

func TestPlanCreatedEmpty(t *testing.T) {
	if c := (Result{Kind: Created}).PlanCreated(); c.Origin != events.OriginEmpty {
		t.Fatalf("PlanCreated of an empty plan: origin %q, want empty", c.Origin)
	}
}

func TestSnapshotOfAndEvent(t *testing.T) {
	hint := "file_read"
	in := []events.Task{
		{ID: 4, Description: "Read config", ToolHint: &hint, Completed: true},
		{ID: 7, Description: "Run tests"},
	}
	p := SnapshotOf(in)
	if got, want := plan(p), `ids=true revision=false reason="" tasks=4x:Read config@file_read,7:Run tests`; got != want {
		t.Fatalf("SnapshotOf = %s, want %s", got, want)
	}
	out := EventTasks(p.Tasks)
	for i := range in {
		a, b := in[i], out[i]
		if a.ID != b.ID || a.Description != b.Description || a.Completed != b.Completed || (a.ToolHint == nil) != (b.ToolHint == nil) ||
			(a.ToolHint != nil && *a.ToolHint != *b.ToolHint) {
			t.Fatalf("EventTasks(SnapshotOf(x))[%d] = %+v, want %+v", i, b, a)
		}
	}
	if got := (Task{ID: 1, Description: "x", Status: InProgress}).Event(); got.Completed || got.ToolHint != nil {
		t.Fatalf("Event of an in-progress task without hint = %+v, want not completed, null hint", got)
	}
}
