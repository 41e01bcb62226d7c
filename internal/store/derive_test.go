package store

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/queries"
)

// hugePlans returns an agent.plan.created of n tasks and a valid
// agent.plan.updated of n tasks (half of them kept) that drops n tasks.
func hugePlans(tb testing.TB, n int) []Item {
	tb.Helper()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	tasks := make([]events.Task, n)
	kept := make([]int64, 0, n/2)
	for i := range tasks {
		tasks[i] = events.Task{ID: int64(i + 1), Description: "t"}
		if i < n/2 {
			tasks[i].Completed = true
			kept = append(kept, int64(i+1))
		}
	}
	created, err := events.New("coder/h/w1", "huge", 1, events.PlanCreated, at,
		events.PlanCreatedData{Tasks: tasks, Origin: events.OriginModel})
	if err != nil {
		tb.Fatal(err)
	}
	updated, err := events.New("coder/h/w1", "huge", 2, events.PlanUpdated, at,
		events.PlanUpdatedData{Replan: 1, Trigger: events.TriggerModel, Tasks: tasks, Kept: kept, Dropped: tasks, Valid: true})
	if err != nil {
		tb.Fatal(err)
	}
	return []Item{{Event: created}, {Event: updated}}
}

// The derivation of plan tasks is linear in a plan's size: plans of 4,000
// tasks (and a replan dropping 4,000) are derived within a 64 MB memory
// limit. The quadratic form (kept read per task, lateral unnests) ran out
// of memory at 100 MB for one such plan, and took seconds to do so.
func TestHugePlanDerivedInBoundedMemory(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	if _, err := s.DB().ExecContext(ctx, `SET GLOBAL memory_limit = '64MB'`); err != nil {
		t.Fatal(err)
	}
	res, err := s.Write(ctx, Batch{Origin: FromFile, Items: hugePlans(t, 4000)})
	if err != nil {
		t.Fatalf("Write of two 4,000-task plans under a 64 MB memory limit: %v", err)
	}
	if res.Accepted != 2 {
		t.Fatalf("Write = %+v, want 2 accepted", res)
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM plan_tasks`:                               8000,
		`SELECT count(*) FROM plan_tasks WHERE is_new`:                  4000 + 2000,
		`SELECT count(*) FROM replan_dropped`:                           4000,
		`SELECT count(*) FROM plan_tasks WHERE position <> task_id`:     0,
		`SELECT count(*) FROM replan_dropped WHERE position <> task_id`: 0,
	} {
		if got := count(t, s, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}

// derivationEvents returns the valid sample sessions, synthetic sessions
// and plans that try the corners of plan_tasks and replan_dropped:
// repeated task ids, repeated kept ids, kept ids of no task, an invalid
// replan, empty lists, and two plans under one (session, seq).
func derivationEvents(tb testing.TB) []Item {
	tb.Helper()
	var items []Item
	files, err := filepath.Glob("../../testdata/events/valid/*.jsonl")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no sample sessions: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			e, err := events.Decode(sc.Bytes())
			if err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			items = append(items, Item{Event: e})
		}
	}
	var evs collect
	g := synth.New(13, time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))
	for range 80 {
		if _, err := g.Session(tb.Context(), &evs); err != nil {
			tb.Fatal(err)
		}
	}
	for _, e := range evs {
		items = append(items, Item{Event: e})
	}
	hint, typ := "grep", "search"
	task := func(id int64, done bool) events.Task {
		return events.Task{ID: id, Description: "task", ToolHint: &hint, Completed: done, TaskType: typ}
	}
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		source string
		seq    int64
		typ    events.Type
		data   any
	}{
		{"coder/h/w1", 1, events.PlanCreated, events.PlanCreatedData{Tasks: []events.Task{task(1, false), task(1, false), task(2, false)}, Origin: events.OriginModel}},
		{"coder/h/w1", 2, events.PlanUpdated, events.PlanUpdatedData{Replan: 1, Trigger: events.TriggerModel,
			Tasks: []events.Task{task(1, true), task(1, true), task(2, false), task(3, false)}, Kept: []int64{1, 1, 9},
			Dropped: []events.Task{task(4, false), task(4, false)}, Valid: true}},
		{"coder/h/w1", 3, events.PlanUpdated, events.PlanUpdatedData{Replan: 2, Trigger: events.TriggerUser,
			Tasks: []events.Task{task(5, false)}, Kept: []int64{5}, Dropped: []events.Task{task(2, false)}, Valid: false}},
		{"coder/h/w1", 4, events.PlanUpdated, events.PlanUpdatedData{Replan: 3, Trigger: events.TriggerModel,
			Tasks: []events.Task{}, Kept: []int64{}, Dropped: []events.Task{}, Valid: true}},
		{"coder/h/w1", 5, events.PlanCreated, events.PlanCreatedData{Tasks: []events.Task{}, Origin: events.OriginEmpty}},
		// Two plans under one (session, seq), from two sources, keeping
		// different tasks.
		{"coder/h/w1", 6, events.PlanUpdated, events.PlanUpdatedData{Replan: 4, Trigger: events.TriggerModel,
			Tasks: []events.Task{task(1, true), task(2, true)}, Kept: []int64{1}, Dropped: []events.Task{}, Valid: true}},
		{"coder/h/w2", 6, events.PlanUpdated, events.PlanUpdatedData{Replan: 4, Trigger: events.TriggerModel,
			Tasks: []events.Task{task(1, true), task(2, true)}, Kept: []int64{2}, Dropped: []events.Task{task(7, false)}, Valid: true}},
	} {
		e, err := events.New(c.source, "corners", c.seq, c.typ, at, c.data)
		if err != nil {
			tb.Fatal(err)
		}
		items = append(items, Item{Event: e})
	}
	return items
}

// The linear derivation of plan_tasks and replan_dropped gives the rows the
// per-task form gave (testdata/*_per_task.sql), row for row.
func TestPlanDerivationMatchesThePerTaskForm(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	items := derivationEvents(t)
	for i := 0; i < len(items); i += 97 {
		if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: items[i:min(i+97, len(items))]}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, queries.MustRead("ingest/rebuild_view.sql")); err != nil {
		t.Fatal(err)
	}
	for table, file := range map[string]string{
		"plan_tasks":     "testdata/plan_tasks_per_task.sql",
		"replan_dropped": "testdata/replan_dropped_per_task.sql",
	} {
		old, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var n, missing, extra int64
		err = c.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM `+table+`),
			(SELECT count(*) FROM (`+string(old)+` EXCEPT ALL SELECT * FROM `+table+`)),
			(SELECT count(*) FROM (SELECT * FROM `+table+` EXCEPT ALL `+string(old)+`))`).Scan(&n, &missing, &extra)
		if err != nil {
			t.Fatalf("compare %s: %v", table, err)
		}
		if missing != 0 || extra != 0 || n < 100 {
			t.Errorf("%s: %d rows, %d of the per-task form's missing, %d not in it; want none missing or extra, and over 100 rows",
				table, n, missing, extra)
		}
	}
	// The corners are there: a kept task is not new, a repeated id is
	// derived twice, the two plans under one (session, seq) keep their own.
	for q, want := range map[string]int64{
		`SELECT count(*) FROM plan_tasks WHERE session = 'corners' AND plan_seq = 2 AND task_id = 1 AND NOT is_new`: 2,
		`SELECT count(*) FROM plan_tasks WHERE session = 'corners' AND plan_seq = 6 AND is_new`:                     2,
		`SELECT count(*) FROM plan_tasks WHERE session = 'corners' AND plan_seq = 3`:                                0,
		`SELECT count(*) FROM replan_dropped WHERE session = 'corners' AND replan_seq = 2`:                          2,
	} {
		if got := count(t, s, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}
