package export

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// Table is one exported table: its folder name (the table's name) and the
// clock of its marks. Its rows come from queries/export/<Name>.sql.
type Table struct {
	Name  string
	Clock string
}

// Tables are the tables exported, in the order they are written. Their
// names are fixed here: they name the SQL files and the output folders, and
// nothing else ever does.
var Tables = []Table{
	{eventsTable, clockEvents},
	{"session_starts", clockEvents},
	{"session_ends", clockEvents},
	{"plans", clockEvents},
	{"plan_tasks", clockEvents},
	{"replans", clockEvents},
	{"replan_dropped", clockEvents},
	{"hints_stripped", clockEvents},
	{"tool_calls", clockEvents},
	{"task_completions", clockEvents},
	{"depth_limits", clockEvents},
	{deadLettersTable, clockDeadLetters},
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

// joinEvents is the clause of the typed tables' export queries that keeps
// the rows of the events committed in the window.
const joinEvents = "\nSEMI JOIN events e\n"

// tableQuery is the embedded export query of t; for a window that holds the
// whole table (whole), without its join with the events, which selects
// every row then: the join's hash table of every event's key is the part of
// a first export that does not spill, and ran out of memory at 10M events.
// TestWholeTableQuery checks that both give the same rows.
func tableQuery(t Table, whole bool) string {
	q := queries.MustRead("export/" + t.Name + ".sql")
	if !whole {
		return q
	}
	i := strings.Index(q, joinEvents)
	if i < 0 {
		return q
	}
	j := strings.Index(q[i:], "\nORDER BY ")
	if j < 0 {
		return q
	}
	return q[:i] + q[i+j:]
}
