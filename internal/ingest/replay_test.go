package ingest

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/store"
)

// replayLine is a message, the reason code the ingester with tight limits
// (plans of at most 5 tasks, events of at most 2,000 bytes) dead-letters
// it with ("" if it stores it), and what a replay after the fixes does
// with that dead letter: its outcome, and its reason code if still dead.
type replayLine struct {
	raw           []byte
	code, outcome string
}

func replayLines(tb testing.TB) []replayLine {
	tb.Helper()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	marshal := func(e *events.Event, err error) []byte {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		b, err := json.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	id := int64(1)
	tool := func(seq int64, errText string) []byte {
		return marshal(events.New("coder/h/w1", "r1", seq, events.ToolCalled, at,
			events.ToolCalledData{TaskID: &id, Tool: "grep", OK: errText == "", Error: errText, DurationMS: 3}))
	}
	tasks := make([]events.Task, 6)
	for i := range tasks {
		tasks[i] = events.Task{ID: int64(i + 1), Description: "t"}
	}
	start := func(seq int64) []byte {
		return marshal(events.New("coder/h/w1", "r2", seq, events.SessionStarted, at,
			events.SessionStartedData{Goal: "g", Agent: "coder", AgentVersion: "1", Model: "m", Tools: []string{"grep"}}))
	}
	invoked := invokedType(tool(1, ""))
	return []replayLine{
		{invoked, "unknown_type", store.ReplayStored},
		{invoked, "unknown_type", store.ReplayDuplicate}, // the same message twice
		{marshal(events.New("coder/h/w1", "r1", 2, events.PlanCreated, at, events.PlanCreatedData{Tasks: tasks, Origin: events.OriginModel})),
			ReasonPlanTooLarge, store.ReplayStored},
		{tool(3, strings.Repeat("e", 2500)), ReasonOversize, store.ReplayStored},
		{bytes.Replace(tool(4, strings.Repeat("e", 2500)), []byte(strings.Repeat("e", 2500)), []byte(strings.Repeat("e", 5000)), 1),
			ReasonOversize, store.ReplayStillDead + " schema_violation"}, // error over 4,096 characters
		{[]byte(`{"specversion": "1.0", "id": `), "malformed_json", store.ReplayStillDead + " malformed_json"},
		{start(1), "", ""},
		{start(2), store.ReasonStoreRejected, store.ReplayStored}, // a second start of r2: the unique index refuses it
	}
}

// invokedType renames an agent.tool.called message's type to
// agent.tool.invoked, a type the v1 contract does not know.
func invokedType(raw []byte) []byte {
	return bytes.Replace(raw, []byte(`"agent.tool.called"`), []byte(`"agent.tool.invoked"`), 1)
}

// Dead letters are replayed after the fixes that make them valid (raised
// limits, a contract that knows their type, a schema change that lets the
// database take them): those now valid are stored exactly once, with
// their provenance, and marked; the others stay, with the replay's reason.
// A dry run writes nothing; a second replay stores nothing new.
func TestReplayDeadLetters(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "replay.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := st.DB()
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	// Before: tight limits, and a database that takes one start per session.
	exec(`CREATE UNIQUE INDEX one_start ON session_starts (session)`)
	before := DefaultConfig()
	before.MaxPlanTasks, before.MaxEventBytes = 5, 2000
	in, err := New(before, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := replayLines(t)
	var file []byte
	for _, l := range lines {
		file = append(append(file, l.raw...), '\n')
	}
	if _, err := in.LoadFile(ctx, bytes.NewReader(file), "before.jsonl"); err != nil {
		t.Fatal(err)
	}
	// Two dead letters that came through NATS: one of an unknown type, one
	// published on another agent's subject.
	id := int64(1)
	other, err := events.New("coder/h/w1", "r3", 1, events.ToolCalled, time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC),
		events.ToolCalledData{TaskID: &id, Tool: "sed", OK: true, DurationMS: 1})
	if err != nil {
		t.Fatal(err)
	}
	otherRaw, _ := json.Marshal(other)
	invokedRaw := bytes.Replace(invokedType(otherRaw), []byte(other.ID), []byte("nats-1"), 1)
	natsItems := []store.Item{classify(invokedRaw, "evo.coder", before), classify(otherRaw, "evo.intruder", before)}
	natsItems[0].StreamSeq, natsItems[1].StreamSeq = 41, 42
	if _, err := st.Write(ctx, store.Batch{Origin: store.FromNATS, Stream: "EVO", Position: 42, Items: natsItems}); err != nil {
		t.Fatal(err)
	}
	lines = append(lines, replayLine{invokedRaw, "unknown_type", store.ReplayStored},
		replayLine{otherRaw, ReasonSourceMismatch, store.ReplayStillDead + " " + ReasonSourceMismatch})

	var codes, outcomes []string
	for _, l := range lines {
		if l.code != "" {
			codes, outcomes = append(codes, l.code), append(outcomes, l.outcome)
		}
	}
	var stored []string
	rows, err := db.QueryContext(ctx, `SELECT reason_code FROM dead_letters ORDER BY dead_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, c)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stored, codes) {
		t.Fatalf("dead letters before the replay: %q, want %q", stored, codes)
	}
	events0 := count(`SELECT count(*) FROM events`)

	// The fixes: default limits, a contract that knows agent.tool.invoked
	// as agent.tool.called, and no unique index.
	decode = func(raw []byte) (*events.Event, error) {
		return events.Decode(bytes.Replace(raw, []byte(`"agent.tool.invoked"`), []byte(`"agent.tool.called"`), 1))
	}
	t.Cleanup(func() { decode = events.Decode })
	exec(`DROP INDEX one_start`)
	after := DefaultConfig()
	after.BatchSize = 4 // pages of dead letters
	in, err = New(after, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	outcome := func(r Replayed) string { return strings.TrimSuffix(r.Result+" "+r.Code, " ") }
	var wantRes ReplayResult
	for _, o := range outcomes {
		wantRes.add(strings.Fields(o)[0])
	}

	// A dry run says what a replay would do, and writes nothing.
	var dry []string
	res, err := in.ReplayDeadLetters(ctx, true, func(r Replayed) { dry = append(dry, outcome(r)) })
	if err != nil {
		t.Fatal(err)
	}
	if res != wantRes || !slices.Equal(dry, outcomes) {
		t.Fatalf("dry run = %+v %q, want %+v %q", res, dry, wantRes, outcomes)
	}
	if n := count(`SELECT count(*) FROM events`); n != events0 {
		t.Fatalf("events after a dry run = %d, want %d", n, events0)
	}
	if n := count(`SELECT count(*) FROM dead_letter_replays`); n != 0 {
		t.Fatalf("%d dead letters marked by a dry run", n)
	}

	var got []string
	var ids []int64
	res, err = in.ReplayDeadLetters(ctx, false, func(r Replayed) {
		got = append(got, outcome(r))
		ids = append(ids, r.DeadLetter.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res != wantRes || !slices.Equal(got, outcomes) {
		t.Fatalf("replay = %+v %q, want %+v %q", res, got, wantRes, outcomes)
	}
	if !slices.IsSorted(ids) || len(ids) != len(codes) {
		t.Fatalf("replayed dead letters %v, want each once, in order", ids)
	}
	for q, want := range map[string]int{
		`SELECT count(*) FROM events`:                                                                   events0 + wantRes.Stored,
		`SELECT count(*) FROM dead_letters`:                                                             len(codes),
		`SELECT count(DISTINCT dead_id) FROM dead_letter_replays`:                                       len(codes),
		`SELECT count(*) FROM (SELECT DISTINCT source, id FROM events)`:                                 events0 + wantRes.Stored,
		`SELECT count(*) FROM plan_tasks WHERE session = 'r1'`:                                          6,
		`SELECT count(*) FROM session_starts WHERE session = 'r2'`:                                      2,
		`SELECT count(*) FROM tool_calls WHERE session IN ('r1', 'r3')`:                                 3,
		`SELECT count(*) FROM events WHERE type = 'agent.tool.invoked'`:                                 0,
		`SELECT count(*) FROM events WHERE id = 'nats-1' AND subject = 'evo.coder' AND stream_seq = 41`: 1,
		`SELECT count(*) FROM dead_letters JOIN dead_letter_replays r USING (dead_id) WHERE result = 'still_dead' AND reason_code = 'schema_violation' AND reason LIKE '%/data/error%' AND previous_code = 'oversize'`: 1,
		`SELECT count(*) FROM ingest_batches WHERE origin = 'replay'`: 3, // pages of 4, 4 and 1
	} {
		if n := count(q); n != want {
			t.Errorf("%s = %d, want %d", q, n, want)
		}
	}

	// Again: only the ones still dead are run, and stay dead.
	got = nil
	res, err = in.ReplayDeadLetters(ctx, false, func(r Replayed) { got = append(got, outcome(r)) })
	if err != nil {
		t.Fatal(err)
	}
	var still []string
	for _, o := range outcomes {
		if strings.HasPrefix(o, store.ReplayStillDead) {
			still = append(still, o)
		}
	}
	if want := (ReplayResult{DeadLetters: len(still), StillDead: len(still)}); res != want || !slices.Equal(got, still) {
		t.Fatalf("second replay = %+v %q, want %+v %q", res, got, want, still)
	}
	if n := count(`SELECT count(*) FROM events`); n != events0+wantRes.Stored {
		t.Fatalf("events after a second replay = %d, want %d", n, events0+wantRes.Stored)
	}
	if n := count(`SELECT count(*) FROM dead_letter_replays`); n != len(codes)+len(still) {
		t.Fatalf("dead_letter_replays = %d rows, want %d (every dead letter once, then those still dead again)", n, len(codes)+len(still))
	}
}
