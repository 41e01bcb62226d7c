package store

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/sim"
	"github.com/evosignal/evosignal/queries"
)

// rawEvent decodes an event of typ whose data is the JSON text data, so
// that a test can send what events.New cannot write: optional members
// present and empty, escapes, numbers in other forms.
func rawEvent(tb testing.TB, source, session string, seq int64, typ events.Type, data string) *events.Event {
	tb.Helper()
	raw := fmt.Sprintf(`{"specversion":"1.0","id":"c-%x-%d","source":%q,"type":%q,"time":"2026-11-29T10:00:%02d.123456789Z","subject":%q,"datacontenttype":"application/json","seq":%d,"data":%s}`,
		session, seq, source, typ, seq%60, session, seq, data)
	e, err := events.Decode([]byte(raw))
	if err != nil {
		tb.Fatalf("decode %s: %v", raw, err)
	}
	return e
}

// cornerEvents are events that try each column's corners: optional string
// members absent, present and empty, present; null hints and task ids;
// task types; unicode and escapes; empty, repeated and large lists; kept
// ids that name no task; invalid replans; an extension and a dataschema.
func cornerEvents(tb testing.TB) []*events.Event {
	tb.Helper()
	const src, ses = "coder/h/corner", "corner-ß-☃"
	big := make([]string, 300)
	for i := range big {
		big[i] = fmt.Sprintf(`{"id":%d,"description":"big %d","tool_hint":null,"completed":%t}`, i+1, i, i%3 == 0)
	}
	bigTasks := "[" + strings.Join(big, ",") + "]"
	cases := []struct {
		typ  events.Type
		data string
	}{
		{events.SessionStarted, `{"goal":"","agent":"coder","agent_version":"","model":"m","tools":[]}`},
		{events.SessionStarted, `{"goal":"g \"q\" \\ \n\t é 日本 😀","agent":"coder","agent_version":"1","model":"m","tools":["grep","ünï"],"task_type":"","ruleset":"","rules":[]}`},
		{events.SessionStarted, `{"goal":"g","agent":"coder","agent_version":"1","model":"m","tools":["grep"],"task_type":"search","ruleset":"r7","rules":["r1","r2","r1"]}`},
		{events.SessionStarted, `{"goal":"g","agent":"coder","agent_version":"1","model":"m","tools":["grep"],"ruleset":"r8","rules":["r1"],"assignment":{"ruleset":"r8","arm":"rules","holdout":0.1,"unit":"session","unit_id":"s-1"}}`},
		{events.SessionStarted, `{"goal":"g","agent":"coder","agent_version":"1","model":"m","tools":[],"assignment":{"unit":"workspace","holdout":5e-1,"arm":"holdout","ruleset":"r8"}}`},
		{events.SessionStarted, `{"goal":"g","agent":"coder","agent_version":"1","model":"m","tools":["grep"],"ruleset":"r9","rules":["r2"],"assignment":{"ruleset":"r9","arm":"rules","holdout":0.1,"unit":"session","rules":[{"holdout":2e-1,"arm":"holdout","id":"r1"},{"id":"r2","arm":"rules","holdout":0.30000000000000004}]}}`},
		{events.PlanCreated, `{"tasks":[],"origin":"empty"}`},
		{events.PlanCreated, `{"tasks":[],"origin":"fallback","parse_error":""}`},
		{events.PlanCreated, `{"tasks":[{"id":1,"description":"","tool_hint":null,"completed":false},{"id":1,"description":"é\u00e9","tool_hint":"grep","completed":true,"task_type":"edit"}],"origin":"model","parse_error":"bad json ☃"}`},
		{events.PlanCreated, `{"tasks":` + bigTasks + `,"origin":"model"}`},
		{events.PlanUpdated, `{"replan":1,"trigger":"model","tasks":[{"id":1,"description":"a","tool_hint":null,"completed":true},{"id":2,"description":"b","tool_hint":"x","completed":false,"task_type":"t"}],"kept":[1,1,99],"dropped":[{"id":3,"description":"c","tool_hint":null,"completed":false,"task_type":"u"}],"over_cap":false,"valid":true}`},
		{events.PlanUpdated, `{"replan":2,"trigger":"user","reason":"","tasks":[],"kept":[],"dropped":[],"over_cap":true,"valid":true,"error":""}`},
		{events.PlanUpdated, `{"replan":3,"trigger":"no_progress","reason":"why","tasks":[{"id":4,"description":"d","tool_hint":null,"completed":false}],"kept":[4],"dropped":[{"id":1,"description":"a","tool_hint":"g","completed":true}],"over_cap":true,"valid":false,"error":"too many"}`},
		{events.PlanUpdated, `{"replan":4.0,"trigger":"depth_limit","tasks":` + bigTasks + `,"kept":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,300,301],"dropped":` + bigTasks + `,"over_cap":false,"valid":true}`},
		{events.PlanUpdated, `{"replan":5,"trigger":"tool_failures","tasks":[{"id":9,"description":"x","tool_hint":null,"completed":false}],"kept":[],"dropped":[],"over_cap":false,"valid":false}`},
		{events.HintStripped, `{"task_id":1,"tool_hint":"grep","phase":"plan","reason":"unavailable"}`},
		{events.HintStripped, `{"task_id":2,"tool_hint":"x","phase":"replan","reason":"rule","rule_id":""}`},
		{events.HintStripped, `{"task_id":3,"tool_hint":"x","phase":"replan","reason":"rule","rule_id":"r-1"}`},
		{events.ToolCalled, `{"task_id":null,"tool":"grep","hint":null,"ok":true,"duration_ms":0,"control":false}`},
		{events.ToolCalled, `{"task_id":1e0,"tool":"grep","hint":"grep","ok":false,"error_kind":"","error":"","duration_ms":1.0,"control":true}`},
		{events.ToolCalled, `{"task_id":9007199254740991,"tool":"grep","hint":"g","ok":false,"error_kind":"timeout","error":"☃ \u0041","duration_ms":9007199254740991,"control":false}`},
		{events.TaskCompleted, `{"task_id":1,"completion":"success","tool_calls":0}`},
		{events.TaskCompleted, `{"task_id":1,"completion":"failure","reported":"success","tool_calls":3,"summary":""}`},
		{events.TaskCompleted, `{"task_id":2,"completion":"partial_success","reported":"partial_success","tool_calls":3,"summary":"done ✓ nul:\u0000 end"}`},
		{events.DepthLimitReached, `{"task_id":1,"tool_calls":0,"limit":1}`},
		{events.SessionEnded, `{"outcome":"success","replans":0,"tool_calls":0,"failed_tool_calls":0,"iterations":0,"duration_ms":0}`},
		{events.SessionEnded, `{"outcome":"timeout","replans":2,"tool_calls":5,"failed_tool_calls":1,"iterations":7,"duration_ms":12345,"feedback":"neg"}`},
	}
	var out []*events.Event
	for i, c := range cases {
		out = append(out, rawEvent(tb, src, ses, int64(i+1), c.typ, c.data))
	}
	// Two plans under one (session, seq), from two sources.
	out = append(out, rawEvent(tb, "coder/h/other", ses, 8, events.PlanUpdated,
		`{"replan":1,"trigger":"model","tasks":[{"id":1,"description":"a","tool_hint":null,"completed":true}],"kept":[],"dropped":[],"over_cap":false,"valid":true}`))
	ext := rawEvent(tb, src, "corner-ext", 1, events.DepthLimitReached, `{"task_id":1,"tool_calls":2,"limit":2}`)
	ext.Extensions = map[string]any{"traceparent": "00-ab-01"}
	ext.DataSchema = "https://schema.evosignal.dev/v1/agent.depth_limit.reached.json"
	return append(out, ext)
}

// simEvents returns the events of sessions of the default simulation.
func simEvents(tb testing.TB, sessions int) []*events.Event {
	tb.Helper()
	var evs collect
	if _, err := sim.Run(tb.Context(), sim.Config{Scenario: sim.Default(), Seed: 5, Sessions: sessions, Concurrency: 1, Ordered: true}, &evs); err != nil {
		tb.Fatal(err)
	}
	return evs
}

// equivalenceBatches returns batches of the sample sessions, the synthetic
// and simulated ones and the corners, with duplicates within a batch and
// across batches, conflicting duplicates and dead letters mixed in.
func equivalenceBatches(tb testing.TB) []Batch {
	tb.Helper()
	var items []Item
	items = append(items, derivationEvents(tb)...) // samples, synth, plan corners
	for _, e := range simEvents(tb, 40) {
		items = append(items, Item{Event: e})
	}
	for _, e := range cornerEvents(tb) {
		items = append(items, Item{Event: e})
	}
	var batches []Batch
	for i, n := 0, 0; i < len(items); i, n = i+n, n%113+7 {
		part := slices.Clone(items[i:min(i+n, len(items))])
		if len(part) > 2 {
			// The same event twice in one batch, one already stored, a
			// conflicting duplicate, a dead letter.
			part = append(part, part[0], part[len(part)/2])
			if i > 0 {
				part = append(part, items[i-1])
				conflict := *items[i-1].Event
				conflict.Data = []byte(`{"task_id":1,"tool_calls":1,"limit":1}`)
				conflict.Type = events.DepthLimitReached
				part = append(part, Item{Event: &conflict})
			}
			part = append(part, Item{Raw: []byte(`{"specversion":`), Dead: &Dead{Code: "malformed_json", Reason: "unexpected end"}})
		}
		batches = append(batches, Batch{Origin: FromFile, Items: part})
	}
	return batches
}

// The Go write path stores the rows the SQL derivation (queries/derive,
// which Rebuild runs) gives from the same events, table for table, row for
// row, and the event log holds each event's data as it was sent.
func TestGoPathMatchesSQLDerivation(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	for _, b := range equivalenceBatches(t) {
		if _, err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	for q, min := range map[string]int64{
		`SELECT count(*) FROM dead_letters WHERE reason_code = 'conflicting_duplicate'`: 5,
		`SELECT count(*) FROM dead_letters WHERE reason_code = 'malformed_json'`:        5,
		`SELECT count(*) FROM ingest_batches WHERE duplicates > 0`:                      5,
		`SELECT count(*) FROM session_assignments`:                                      2,
		`SELECT count(*) FROM session_rule_assignments`:                                 2,
	} {
		if got := count(t, s, q); got < min {
			t.Errorf("%s = %d, want at least %d: the batches lack their duplicates or dead letters", q, got, min)
		}
	}
	compareWithSQL(t, s)
}

// compareWithSQL derives every typed table again with queries/derive from
// the events table, in a transaction it rolls back, and fails the test
// unless each holds the same rows (EXCEPT ALL both ways, and counts) as
// the store wrote, and every table has rows to compare.
func compareWithSQL(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	derive, err := queries.Derive()
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, d := range derive {
		tables = append(tables, strings.TrimSuffix(path.Base(d.File), ".sql"))
	}
	var written []string
	for _, tt := range typedTables {
		written = append(written, tt.name)
	}
	written = append(written, "facts_pending")
	if !slices.Equal(sorted(written), tables) {
		t.Fatalf("the Go path writes %v, queries/derive derives %v: want the same tables", sorted(written), tables)
	}
	c, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(queries.MustRead("ingest/rebuild_view.sql"))
	exec("BEGIN TRANSACTION")
	defer c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	for i, d := range derive {
		table := tables[i]
		exec(`CREATE TEMP TABLE go_` + table + ` AS SELECT * FROM ` + table)
		exec(`DELETE FROM ` + table)
		exec(d.SQL)
		var goRows, sqlRows, onlyGo, onlySQL int64
		if err := c.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM go_`+table+`),
			(SELECT count(*) FROM `+table+`),
			(SELECT count(*) FROM (SELECT * FROM go_`+table+` EXCEPT ALL SELECT * FROM `+table+`)),
			(SELECT count(*) FROM (SELECT * FROM `+table+` EXCEPT ALL SELECT * FROM go_`+table+`))`).
			Scan(&goRows, &sqlRows, &onlyGo, &onlySQL); err != nil {
			t.Fatalf("compare %s: %v", table, err)
		}
		if goRows != sqlRows || onlyGo != 0 || onlySQL != 0 || goRows == 0 {
			t.Errorf("%s: %d rows written, %d derived in SQL; %d only written, %d only derived; want the same rows, some",
				table, goRows, sqlRows, onlyGo, onlySQL)
			if onlyGo > 0 {
				var row string
				c.QueryRowContext(ctx, `SELECT (x)::VARCHAR FROM (SELECT * FROM go_`+table+` EXCEPT ALL SELECT * FROM `+table+`) x LIMIT 1`).Scan(&row)
				t.Logf("%s: only written, e.g. %s", table, row)
			}
			if onlySQL > 0 {
				var row string
				c.QueryRowContext(ctx, `SELECT (x)::VARCHAR FROM (SELECT * FROM `+table+` EXCEPT ALL SELECT * FROM go_`+table+`) x LIMIT 1`).Scan(&row)
				t.Logf("%s: only derived, e.g. %s", table, row)
			}
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// The event log holds each accepted event's data and attributes as it was
// decoded, byte for byte.
func TestEventsStoredAsSent(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	evs := cornerEvents(t)
	items := make([]Item, len(evs))
	for i, e := range evs {
		items[i] = Item{Event: e}
	}
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: items}); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		var data, session, typ string
		var ext *string
		var seq int64
		var at time.Time
		if err := s.DB().QueryRowContext(ctx, `SELECT data::VARCHAR, ext::VARCHAR, session, type, seq, time FROM events WHERE source = $1 AND id = $2`,
			e.Source, e.ID).Scan(&data, &ext, &session, &typ, &seq, &at); err != nil {
			t.Fatalf("event %s: %v", e.ID, err)
		}
		if data != string(e.Data) || session != e.Subject || typ != string(e.Type) || seq != e.Seq || !at.Equal(e.Time.Truncate(time.Microsecond)) {
			t.Errorf("event %s stored as %s %s %s %d %s, want %s %s %s %d %s", e.ID, data, session, typ, seq, at,
				e.Data, e.Subject, e.Type, e.Seq, e.Time)
		}
		if want, _ := extJSON(e); (ext == nil) != (e.Extensions == nil && e.DataSchema == "") || ext != nil && *ext != want {
			t.Errorf("event %s: ext %v, want %s", e.ID, ext, want)
		}
	}
}

// A constraint that refuses an event's row when an appender flushes (here a
// unique index on session_starts, which the appender reports without the
// error's kind) is the event's fault: WriteIsolating dead-letters that
// event alone and stores the rest of its batch.
func TestAppenderConstraintIsTheEvents(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	if _, err := s.DB().ExecContext(ctx, `CREATE UNIQUE INDEX one_start ON session_starts (session)`); err != nil {
		t.Fatal(err)
	}
	start := func(seq int64) *events.Event {
		return rawEvent(t, "coder/h/w1", "u1", seq, events.SessionStarted, `{"goal":"g","agent":"coder","agent_version":"1","model":"m","tools":[]}`)
	}
	again := start(3)
	_, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: start(1)}, {Event: again}}})
	if err == nil || FaultOf(err) != FaultEvent {
		t.Fatalf("Write of two starts of a session under a unique index = %v (fault %v), want an error of the event", err, FaultOf(err))
	}
	res, err := s.WriteIsolating(ctx, Batch{Origin: FromFile, Items: []Item{
		{Event: start(1)}, {Event: newEvent(t, "coder/h/w1", "u1", 2)}, {Event: again}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Accepted: 2, DeadLetters: 1}); res != want {
		t.Fatalf("WriteIsolating = %+v, want %+v", res, want)
	}
	var code, id string
	if err := s.DB().QueryRowContext(ctx, `SELECT reason_code, id FROM dead_letters`).Scan(&code, &id); err != nil {
		t.Fatal(err)
	}
	if code != ReasonStoreRejected || id != again.ID {
		t.Fatalf("dead letter %s of %s, want %s of %s", code, id, ReasonStoreRejected, again.ID)
	}
	if n := count(t, s, `SELECT count(*) FROM session_starts`); n != 1 {
		t.Fatalf("session_starts = %d rows, want 1", n)
	}
}

// The appender's errors: a constraint's text is the event's, any other the
// environment's, whatever the text.
func TestFlushError(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want Fault
	}{
		{"unique", `Failed to append: Duplicate key "session: u1" violates unique constraint.`, FaultEvent},
		{"unique in one batch", `Failed to append: PRIMARY KEY or UNIQUE constraint violation: duplicate key "u1"`, FaultEvent},
		{"primary key", `Failed to append: Duplicate key "id: 1" violates primary key constraint.`, FaultEvent},
		{"not null", `Failed to append: NOT NULL constraint failed: plans.kind`, FaultEvent},
		{"out of memory", `Failed to append: could not allocate block of size 256.0 KiB (1.9 GiB/1.9 GiB used)`, FaultEnvironment},
		{"io", `Failed to append: Could not write file "/x/db.wal": No space left on device`, FaultEnvironment},
		{"not an appender's", `Duplicate key "session: u1" violates unique constraint.`, FaultEnvironment},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fmt.Errorf("append batch: %w", flushError(fmt.Errorf("could not flush appender: %w", &duckdb.Error{Type: duckdb.ErrorTypeInvalid, Msg: tt.msg})))
			if got := FaultOf(err); got != tt.want {
				t.Fatalf("FaultOf(%v) = %v, want %v", err, got, tt.want)
			}
		})
	}
}

// A batch that fails after some of its appenders took rows (here the
// session_starts flush, refused by a unique index, after events flushed
// and while tool_calls and session_ends still hold theirs) leaves nothing
// behind: the next batch stores its own rows only.
func TestFailedBatchLeavesNoRows(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	if _, err := s.DB().ExecContext(ctx, `CREATE UNIQUE INDEX one_start ON session_starts (session)`); err != nil {
		t.Fatal(err)
	}
	start := func(seq int64) *events.Event {
		return rawEvent(t, "coder/h/w1", "f1", seq, events.SessionStarted, `{"goal":"g","agent":"coder","agent_version":"1","model":"m","tools":[]}`)
	}
	end := rawEvent(t, "coder/h/w1", "f1", 9, events.SessionEnded, `{"outcome":"success","replans":0,"tool_calls":0,"failed_tool_calls":0,"iterations":0,"duration_ms":0}`)
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: start(1)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{
		{Event: newEvent(t, "coder/h/w1", "f1", 2)}, {Event: start(3)}, {Event: end},
		{Raw: []byte(`{`), Dead: &Dead{Code: "malformed_json", Reason: "unexpected end"}}}}); err == nil {
		t.Fatal("Write of a second start under a unique index: no error")
	}
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: newEvent(t, "coder/h/w1", "f2", 4)}}}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM events`:                            2,
		`SELECT count(*) FROM tool_calls`:                        1,
		`SELECT count(*) FROM tool_calls WHERE session = 'f1'`:   0,
		`SELECT count(*) FROM session_starts`:                    1,
		`SELECT count(*) FROM session_ends`:                      0,
		`SELECT count(*) FROM dead_letters`:                      0,
		`SELECT count(*) FROM facts_pending`:                     2,
		`SELECT count(*) FROM ingest_batches WHERE accepted > 0`: 2,
	} {
		if got := count(t, s, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}
