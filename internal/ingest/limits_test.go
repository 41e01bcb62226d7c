package ingest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
)

// planLines returns JSON lines of plan events: a plan of each size in
// sizes, and a replan of one task that drops dropped tasks.
func planLines(tb testing.TB, sizes []int, dropped int) []byte {
	tb.Helper()
	tasks := func(n int) []events.Task {
		ts := make([]events.Task, n)
		for i := range ts {
			ts[i] = events.Task{ID: int64(i + 1), Description: "t"}
		}
		return ts
	}
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	add := func(e *events.Event, err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		j, err := json.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	for i, n := range sizes {
		add(events.New("coder/h/w1", fmt.Sprintf("s%d", i), 1, events.PlanCreated, at,
			events.PlanCreatedData{Tasks: tasks(n), Origin: events.OriginModel}))
	}
	add(events.New("coder/h/w1", "drops", 2, events.PlanUpdated, at, events.PlanUpdatedData{
		Replan: 1, Trigger: events.TriggerModel, Tasks: tasks(1), Kept: []int64{}, Dropped: tasks(dropped), Valid: true}))
	return b.Bytes()
}

// A plan listing or dropping more tasks than MaxPlanTasks is dead-lettered
// as plan_too_large, with its size and the limit in the reason; one at the
// limit is stored.
func TestPlanOverTheCapIsDeadLettered(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "cap.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := ingest.DefaultConfig()
	if cfg.MaxPlanTasks != 1000 {
		t.Fatalf("default MaxPlanTasks = %d, want 1000", cfg.MaxPlanTasks)
	}
	in, err := ingest.New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := in.LoadFile(ctx, bytes.NewReader(planLines(t, []int{1001, 1000, 3}, 1001)), "plans.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.Result{Accepted: 2, DeadLetters: 2}); res != want {
		t.Fatalf("LoadFile = %+v, want %+v", res, want)
	}
	rows, err := st.DB().QueryContext(ctx, `SELECT line, reason_code, reason, type FROM dead_letters ORDER BY line`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var line int
		var code, reason, typ string
		if err := rows.Scan(&line, &code, &reason, &typ); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s %s: %s", line, code, typ, reason))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1 plan_too_large agent.plan.created: the plan lists 1001 tasks, over the limit of 1000 tasks per plan (ingest -max-plan-tasks)",
		"4 plan_too_large agent.plan.updated: the plan drops 1001 tasks, over the limit of 1000 tasks per plan (ingest -max-plan-tasks)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("dead letters:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var n int
	if err := st.DB().QueryRow(`SELECT count(*) FROM plan_tasks`).Scan(&n); err != nil || n != 1003 {
		t.Fatalf("plan_tasks = %d (%v), want 1003 (the plans of 1,000 and 3 tasks)", n, err)
	}
}

func TestMaxPlanTasksMustBePositive(t *testing.T) {
	cfg := ingest.DefaultConfig()
	cfg.MaxPlanTasks = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "max plan tasks") {
		t.Fatalf("Validate with MaxPlanTasks 0 = %v, want an error naming it", err)
	}
}
