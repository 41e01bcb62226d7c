package export

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/evosignal/evosignal/queries"
)

// The clocks the marks follow: the commit time of a batch, as the events
// and the dead letters record it.
const (
	clockEvents      = "events.ingested_at"
	clockDeadLetters = "dead_letters.received_at"

	eventsTable      = "events"
	deadLettersTable = "dead_letters"
)

// Table is one exported table: its folder name (the table's name), the
// clock of its marks, and how its rows belong to the commits of that clock.
// Its rows come from queries/export/table.sql.tmpl, filled with Name and
// rows.
type Table struct {
	Name  string
	Clock string
	rows  tableRows
}

// tableRows are the parts of a table's export query that are its own:
// which form of queries/export/table.sql.tmpl it takes, and the names that
// fill it. The zero value is a table whose rows are each derived from one
// event, by (source, event_id).
type tableRows struct {
	// Committed is the column in which the table records its own commit
	// time (events, dead_letters); its rows are dated by the column Day and
	// written in the order of the columns Order.
	Committed, Day string
	Order          []string
	// ParentSeq is set for a child of plan events (plan_tasks,
	// replan_dropped): a row points at its parent by (session, ParentSeq),
	// the event of one of ParentTypes with that session and seq.
	ParentSeq   string
	ParentTypes []string
}

// ofEvent are the rows of a table derived from events, one row of an event
// (or several) pointing at it by (source, event_id).
var ofEvent = tableRows{}

// Tables are the tables exported, in the order they are written. Their
// names and the parts of their queries are fixed here: they name the output
// folders and fill the export query, and nothing else ever does.
var Tables = []Table{
	{Name: eventsTable, Clock: clockEvents, rows: tableRows{
		Committed: "ingested_at", Day: "time", Order: []string{"time", "session", "seq"}}},
	{Name: "session_starts", Clock: clockEvents, rows: ofEvent},
	{Name: "session_ends", Clock: clockEvents, rows: ofEvent},
	{Name: "plans", Clock: clockEvents, rows: ofEvent},
	{Name: "plan_tasks", Clock: clockEvents, rows: tableRows{
		ParentSeq: "plan_seq", ParentTypes: []string{"agent.plan.created", "agent.plan.updated"}}},
	{Name: "replans", Clock: clockEvents, rows: ofEvent},
	{Name: "replan_dropped", Clock: clockEvents, rows: tableRows{ParentSeq: "replan_seq", ParentTypes: []string{"agent.plan.updated"}}},
	{Name: "hints_stripped", Clock: clockEvents, rows: ofEvent},
	{Name: "tool_calls", Clock: clockEvents, rows: ofEvent},
	{Name: "task_completions", Clock: clockEvents, rows: ofEvent},
	{Name: "depth_limits", Clock: clockEvents, rows: ofEvent},
	{Name: "model_calls", Clock: clockEvents, rows: ofEvent},
	{Name: "tool_call_args", Clock: clockEvents, rows: ofEvent},
	{Name: "session_usage", Clock: clockEvents, rows: ofEvent},
	{Name: "session_assignments", Clock: clockEvents, rows: ofEvent},
	{Name: "session_rule_assignments", Clock: clockEvents, rows: ofEvent},
	{Name: deadLettersTable, Clock: clockDeadLetters, rows: tableRows{
		Committed: "received_at", Day: "received_at", Order: []string{"received_at", "file", "line", "stream_seq"}}},
}

func isTable(name string) bool {
	for _, t := range Tables {
		if t.Name == name {
			return true
		}
	}
	return false
}

// exportTable writes the rows of t committed in (after, upto] under
// dir/<t.Name>/day=…/part-<run>-<uuid>.parquet and returns how many rows and
// files it wrote. Each file is synced before it returns.
// exportTable writes the rows of t committed in (after, upto] as the files
// of run under stage/<table>, and returns how many rows it wrote and the
// files.
func exportTable(ctx context.Context, tx *sql.Tx, stage string, t Table, run int64, after, upto time.Time, latest marks) (int64, []string, error) {
	target := filepath.Join(stage, t.Name)
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return 0, nil, fmt.Errorf("table %s: create staging folder: %w", t.Name, err)
	}
	res, err := tx.ExecContext(ctx, copyStatement(tableQuery(t, whole(t, after, upto, latest)), target, run),
		sql.Named("after", nullTime(after)), sql.Named("upto", upto))
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err() // the driver reports an interrupt in its own words
		}
		return 0, nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	rows, err := res.RowsAffected()
	if err != nil {
		return 0, nil, fmt.Errorf("table %s: rows written: %w", t.Name, err)
	}
	files, err := runFiles(target, run)
	if err != nil {
		return 0, nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return rows, files, nil
}

// copyStatement wraps the SELECT of query in a partitioned COPY to target.
//
// The target is not a bindable parameter in COPY, so it is spliced into the
// statement. It is built only from the output directory (validated and made
// absolute by prepareDir) and a fixed table name from Tables, never from
// other input, and quoted as a SQL string literal (quotes doubled; Validate
// rejects NUL). The file pattern holds only the run number, which the export
// makes itself. APPEND (which requires {uuid} in the pattern) never
// overwrites a file already there.
//
// The day is clamped to 0001-01-01 … 9999-12-31, so a time outside years
// 0001-9999 UTC (stored before the decoder refused such times) lands in the
// first or last day folder rather than one named like "0002-12-31 (BC)";
// the rows keep their own times.
func copyStatement(query, target string, run int64) string {
	q := strings.TrimRight(strings.TrimSpace(query), ";")
	return fmt.Sprintf("COPY (\nSELECT * REPLACE (least(greatest(day, DATE '0001-01-01'), DATE '9999-12-31') AS day) FROM (\n%s\n)\n) TO %s (FORMAT parquet, PARTITION_BY (day), FILENAME_PATTERN '%s{uuid}', APPEND)",
		q, sqlString(target), filePrefix(run))
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// whole says whether the window (after, upto] of t holds every row of the
// table: no mark yet, no -since, and upto the latest commit time of t's
// clock (no -until), as the run's transaction sees them. Every row of a
// typed table comes from an event stored in the same transaction, so then
// the join with the events of the window selects them all.
func whole(t Table, after, upto time.Time, latest marks) bool {
	l, ok := latest[t.Clock]
	return after.IsZero() && ok && upto.Equal(l)
}

// tableTemplate is the export query of every table,
// queries/export/table.sql.tmpl. ident puts in a name, refusing anything
// but a plain SQL identifier; lit puts in a string literal.
var tableTemplate = template.Must(template.New("table.sql.tmpl").Funcs(template.FuncMap{
	"ident": func(s string) (string, error) {
		if !plainName.MatchString(s) {
			return "", fmt.Errorf("%q is not a plain SQL name", s)
		}
		return s, nil
	},
	"lit": sqlString,
}).ParseFS(queries.FS, "export/table.sql.tmpl"))

// plainName is a name the export query takes as it is: lower case, digits
// and _, not starting with a digit.
var plainName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// tableQuery is the export query of t: queries/export/table.sql.tmpl filled
// with t's entry of Tables. For a window that holds the whole table
// (whole), a table derived from events is selected without the join with
// them, which selects every row then: the join's hash table of every
// event's key is the part of a first export that does not spill, and ran
// out of memory at 10M events. TestWholeTableQuery checks that both give
// the same rows. It panics on an error: Tables is constant, and the tests
// fill the query of every table.
func tableQuery(t Table, whole bool) string {
	var b strings.Builder
	data := struct {
		Name  string
		Rows  tableRows
		Whole bool
	}{t.Name, t.rows, whole}
	if err := tableTemplate.Execute(&b, data); err != nil {
		panic(fmt.Sprintf("export: the query of table %s: %v", t.Name, err))
	}
	return b.String()
}
