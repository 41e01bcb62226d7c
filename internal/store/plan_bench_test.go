package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
)

// planEvents returns plans valid agent.plan.updated events of tasks tasks
// each, in sessions of their own, the first half of each plan's tasks
// completed and kept: the rows of plan_tasks grow with plans × tasks.
func planEvents(tb testing.TB, plans, tasks int) []Item {
	tb.Helper()
	hint := "read_file"
	items := make([]Item, plans)
	for p := range plans {
		ts := make([]events.Task, tasks)
		kept := make([]int64, 0, tasks/2)
		for i := range ts {
			ts[i] = events.Task{ID: int64(i + 1), Description: fmt.Sprintf("Read part %d of the handler", i+1), ToolHint: &hint}
			if i < tasks/2 {
				ts[i].Completed = true
				kept = append(kept, int64(i+1))
			}
		}
		e, err := events.New("coder/h/w1", fmt.Sprintf("s%d", p), 2, events.PlanUpdated,
			time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
			events.PlanUpdatedData{Replan: 1, Trigger: events.TriggerModel, Tasks: ts, Kept: kept, Dropped: []events.Task{}, Valid: true})
		if err != nil {
			tb.Fatal(err)
		}
		items[p] = Item{Event: e}
	}
	return items
}

// BenchmarkPlanSize writes the same number of plan_tasks rows (4,000 a
// batch) as one plan of 4,000 tasks and as 100 plans of 40: the cost of a
// batch follows its rows, not the size of its largest plan.
func BenchmarkPlanSize(b *testing.B) {
	for _, c := range []struct{ plans, tasks int }{{1, 4000}, {100, 40}} {
		b.Run(fmt.Sprintf("plans=%d/tasks=%d", c.plans, c.tasks), func(b *testing.B) {
			s := openTemp(b)
			for b.Loop() {
				b.StopTimer()
				items := planEvents(b, c.plans, c.tasks)
				b.StartTimer()
				if _, err := s.Write(b.Context(), Batch{Origin: FromFile, Items: items}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
