package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// mode is how a table is sealed.
type mode int

const (
	// appended: the rows of the events the lake does not have yet, by the
	// events' rowid. The event log is append-only (the store never deletes
	// nor updates an event), so an event's rowid never changes and the
	// shard's watermark is the end of the rowids sealed. One transaction
	// at a time appends to it (the store's mutex serialises its writes), so
	// the committed rowids are always a prefix: a seal that sees rowid n
	// sees every rowid below, and no later commit fills a gap under its
	// watermark. The typed tables are derived from the events one to one
	// (a rebuild re-derives the same rows), so theirs are the rows of the
	// same new events.
	appended mode = iota
	// replaced: the shard's whole table, replacing the files the shard
	// sealed before in one snapshot, when its contents changed (the
	// watermark is a digest of them). The stored facts are rewritten in
	// place by the ingester's refresh: a session's facts change with every
	// event it gets, and a session is never known to be final, so an
	// append-only copy would keep stale rows. The facts are one row per
	// session or per task: the task facts nearly one per event (0.86 at
	// 10M events), so each seal that sees them changed rewrites about as
	// many rows as the events (BENCHMARKS.md, "The lake at 10M events").
	replaced
	// marker: the seals table, one row per seal that committed
	// something, committed after every other table of the seal. Its
	// watermark of a shard is the number of the shard's last complete
	// seal: Attach reads no file of a seal after it (a seal stopped
	// half-way is not seen, docs/scale.md).
	marker
)

// sealedTable is a table of the database the lake holds.
type sealedTable struct {
	name string
	mode mode
	// rows selects the rows of the events being sealed, $new
	// (appended), or every row (replaced).
	rows string
}

// newEvents selects the keys of the events being sealed: those $new
// (a condition on events, sealRange's) selects.
const newEvents = `(SELECT source, id, session FROM events WHERE $new)`

// byEvent selects the rows of a typed table of one row per event.
func byEvent(t string) string {
	return `SELECT t.* FROM ` + t + ` t SEMI JOIN ` + newEvents + ` e ON t.source = e.source AND t.event_id = e.id`
}

// byParent selects the rows of a typed table whose rows belong to a row
// of parent (plan_tasks to plans, replan_dropped to replans), by session
// and the parent's seq.
func byParent(t, parent, seqCol string) string {
	return `SELECT t.* FROM ` + t + ` t SEMI JOIN (SELECT p.session, p.seq FROM ` + parent + ` p SEMI JOIN ` + newEvents +
		` e ON p.source = e.source AND p.event_id = e.id) k ON t.session = k.session AND t.` + seqCol + ` = k.seq`
}

// tables are the tables the analyzers read, through the views of
// queries/views and the SQL of queries/analyze: the event log, the typed
// tables and the stored facts with their bookkeeping. The facts come
// first and the events last: a seal that stops half-way has committed the
// facts of events the lake may not have yet rather than the reverse, and
// the next seal catches every table up from its own watermark.
var tables = []sealedTable{
	{"facts_classifier", replaced, `SELECT * FROM facts_classifier`},
	{"facts_pending", replaced, `SELECT * FROM facts_pending`},
	{"session_facts_stored", replaced, `SELECT * FROM session_facts_stored`},
	{"task_facts_stored", replaced, `SELECT * FROM task_facts_stored`},
	{"dead_letters", replaced, `SELECT * FROM dead_letters`},
	{"session_starts", appended, byEvent("session_starts")},
	{"session_ends", appended, byEvent("session_ends")},
	{"plans", appended, byEvent("plans")},
	{"plan_tasks", appended, byParent("plan_tasks", "plans", "plan_seq")},
	{"replans", appended, byEvent("replans")},
	{"replan_dropped", appended, byParent("replan_dropped", "replans", "replan_seq")},
	{"hints_stripped", appended, byEvent("hints_stripped")},
	{"tool_calls", appended, byEvent("tool_calls")},
	{"task_completions", appended, byEvent("task_completions")},
	{"depth_limits", appended, byEvent("depth_limits")},
	{"model_calls", appended, byEvent("model_calls")},
	{"tool_call_args", appended, byEvent("tool_call_args")},
	{"session_usage", appended, byEvent("session_usage")},
	{"session_assignments", appended, byEvent("session_assignments")},
	{"session_rule_assignments", appended, byEvent("session_rule_assignments")},
	{"events", appended, `SELECT * FROM events WHERE $new`},
	{sealsTable, marker, ""},
}

// sealsTable is the lake's own table of the seals (mode marker); Attach
// shows it as the view lake_seals.
const sealsTable = "seals"

// sealsColumns are the seals table's columns: the shard, the seal's number
// (1, 2, … per shard; a seal retried after one that stopped half-way takes
// the same number), its id (in its files' names), when it committed, the
// events it added, and the database it sealed.
var sealsColumns = [][2]string{
	{"shard", "VARCHAR"}, {"seal", "BIGINT"}, {"seal_id", "VARCHAR"},
	{"sealed_at", "TIMESTAMP WITH TIME ZONE"}, {"events", "BIGINT"}, {"database", "VARCHAR"},
}

// lakeTypes are the DuckDB types Iceberg has none for, and what a column
// of each is stored as. UBIGINT (key_hash, stream_seq) is stored as
// DECIMAL(20,0): every value exactly, in order, readable as the number by
// any engine (a BIGINT of the same bits would read negative above 2^63).
// JSON is its text. The original type is kept in the table's properties
// (typeProp) and restored by Attach.
var lakeTypes = map[string]string{
	"UBIGINT":   "DECIMAL(20,0)",
	"HUGEINT":   "DECIMAL(38,0)",
	"UINTEGER":  "BIGINT",
	"USMALLINT": "INTEGER",
	"UTINYINT":  "INTEGER",
	"SMALLINT":  "INTEGER",
	"TINYINT":   "INTEGER",
	"JSON":      "VARCHAR",
}

// typeProp prefixes the table property that keeps a column's DuckDB type
// when the lake stores another (lakeTypes).
const typeProp = "evosignal.type."

// columnsProp is the table property that keeps the database table's
// columns and their DuckDB types, in order (JSON: [[name, type], …]):
// what Attach makes of a table whose snapshot has no rows (iceberg-go
// plans no file of zero records).
const columnsProp = "evosignal.columns"

// sealProp prefixes the snapshot summary property holding a shard's
// watermark of the table: the end of the event rowids sealed (appended)
// or the digest of what was sealed (replaced). Every commit carries every
// shard's, copied from the snapshot it replaces.
const sealProp = "evosignal.seal."

// sealNoProp prefixes the snapshot summary property holding the number of
// the shard's seal that committed to the table last, carried by every
// commit as the watermarks are. A table holding a seal of the shard past
// the last complete one (the seals table's watermark) has a seal stopped
// half-way: the next seal completes it, even with nothing new to add.
const sealNoProp = "evosignal.seal-number."

// shardName is what a shard may be called: it names its data files.
var shardName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// TableSeal is what one seal committed to one table.
type TableSeal struct {
	Table string
	Rows  int64 // rows in the file added (replaced: the shard's earlier file removed)
	// Write is how long the table's Parquet file took to write (its
	// query included), Commit its commit to the lake; for logs, not in
	// POST /seal's answer.
	Write, Commit time.Duration `json:"-"`
}

// parquetOptions are the options of the seal's COPY to a Parquet file
// (tests write small row groups).
var parquetOptions = "FORMAT parquet"

// beforeCommit, when set (by tests), runs after a seal has written its
// Parquet files and before it commits any; afterCommit after each commit.
var (
	beforeCommit func()
	afterCommit  func(table string)
)

// HoldEnv is a test-only environment variable: TABLE:FILE makes every seal
// of the process, right after its commit to TABLE, create FILE and then
// wait for ever, holding the seal (and the process's seals) until the
// process is killed. The acceptance test of docs/scale.md
// (internal/workshop/scaletest) SIGKILLs an ingester in the middle of a
// seal so. Nothing else sets it.
const HoldEnv = "EVOSIGNAL_TEST_SEAL_HOLD"

func init() {
	table, file, ok := strings.Cut(os.Getenv(HoldEnv), ":")
	if !ok || table == "" || file == "" {
		return
	}
	afterCommit = func(t string) {
		if t != table {
			return
		}
		if err := os.WriteFile(file, []byte(t+"\n"), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", HoldEnv, err)
		}
		for {
			time.Sleep(time.Hour)
		}
	}
}

// Seal writes what db, the shard's DuckDB, holds and the lake does not yet
// into the lake, and commits it: for each table, the rows of the events
// sealed since the shard's last seal, or the shard's stored facts when they
// changed. A table with nothing new gets no commit. All files are written
// from one read transaction of db (one consistent state), then committed
// table by table; a seal stopped before a table's commit leaves that
// table's snapshot as it was (its files are orphans, never referenced), and
// the next seal writes them anew. Seal returns the tables it committed to.
func (l *Lake) Seal(ctx context.Context, db *sql.DB, shard string) ([]TableSeal, error) {
	if !shardName.MatchString(shard) {
		return nil, fmt.Errorf("lake: shard %q: want letters, digits, '_', '.', '-'", shard)
	}
	mu := l.mutex()
	mu.Lock()
	defer mu.Unlock()

	marks := map[string]string{} // a table's key: the lake has it
	var last int64               // the highest seal number of the shard a table holds
	for _, t := range tables {
		tbl, err := l.cat.LoadTable(ctx, ident(t.name))
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lake: %s: %w", t.name, err)
		}
		marks[t.name] = watermarks(tbl)[shard]
		if t.mode != marker {
			last = max(last, sealNumbers(tbl)[shard])
		}
	}
	var complete int64 // the shard's last complete seal
	if m := marks[sealsTable]; m != "" {
		var err error
		if complete, err = strconv.ParseInt(m, 10, 64); err != nil {
			return nil, fmt.Errorf("lake: %s: shard %s's watermark %q: %w", sealsTable, shard, m, err)
		}
	}

	written, err := l.write(ctx, db, shard, marks, complete, last > complete)
	defer l.discard(written)
	if err != nil {
		return nil, err
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	var done []TableSeal
	for _, w := range written {
		if err := ctx.Err(); err != nil {
			return done, fmt.Errorf("lake: seal %s: %w", shard, err)
		}
		t0 := time.Now()
		if err := l.commit(ctx, shard, w); err != nil {
			return done, fmt.Errorf("lake: seal %s into %s: %w", shard, w.table.name, err)
		}
		done = append(done, TableSeal{Table: w.table.name, Rows: w.rows, Write: w.took, Commit: time.Since(t0)})
		if afterCommit != nil {
			afterCommit(w.table.name)
		}
	}
	return done, nil
}

// written is a table's Parquet file of one seal, not committed yet.
type written struct {
	table      sealedTable
	loc        string // the file's URI in the warehouse
	local      string // the file on this machine: in a local warehouse, or the staged copy of one uploaded
	rows       int64
	from, mark string            // the shard's watermark it was written from, and the one it reaches
	seal       int64             // the seal's number
	types      map[string]string // column → DuckDB type, of the columns stored as another
	columns    [][2]string       // the database table's columns: name, DuckDB type
	create     bool              // the lake has no such table yet
	took       time.Duration     // writing the file, from the table's first query
}

// write writes, in one transaction of db (reading only), the Parquet file of each
// table with something new since marks (the shard's watermarks). complete
// is the shard's last complete seal; stopped, whether a seal after it
// committed to some table: then the seal is written at least to the seals
// table, which completes the stopped one.
func (l *Lake) write(ctx context.Context, db *sql.DB, shard string, marks map[string]string, complete int64, stopped bool) ([]written, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	defer c.Close()
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	defer tx.Rollback()

	var st dbState
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT id FROM database_identity), coalesce(max(rowid) + 1, 0), coalesce(max(stream_seq), 0) FROM events`).
		Scan(&st.identity, &st.hi, &st.seq); err != nil {
		return nil, fmt.Errorf("lake: events: %w", err)
	}
	// A replica behind the one that sealed the shard last seals nothing,
	// not even its facts, which are of fewer events than the lake's; only
	// the seals table's row that completes a stopped seal.
	cond, _, err := sealRange(shard, "events", marks["events"], st)
	if err != nil {
		return nil, err
	}
	behind := cond == ""
	if behind && !stopped {
		return nil, nil
	}
	seal := uuid.NewString()
	no := complete + 1 // the seal's number: after the shard's last complete seal
	file := fmt.Sprintf("%s-%d-%s.parquet", shard, no, seal)
	var out []written
	var events int64
	for _, t := range tables {
		if behind && t.mode != marker {
			continue
		}
		t0 := time.Now()
		from, exists := marks[t.name]
		w := written{table: t, from: from, create: !exists, seal: no}
		q := t.rows
		switch t.mode {
		case appended:
			cond, mark, err := sealRange(shard, t.name, from, st)
			if err != nil {
				return nil, err
			}
			if cond == "" {
				continue // this database is behind what the lake has of the shard
			}
			w.mark = mark
			if from == "" {
				// The shard's first seal of the table takes every event
				// this transaction sees, so every row of the table (an
				// event's typed rows commit with it): the whole table,
				// without joining it with the keys of every event (a hash
				// table of all of them, for each typed table: a third of
				// the first seal of 10M events, BENCHMARKS.md).
				q = `SELECT * FROM ` + t.name
			} else {
				q = strings.ReplaceAll(q, "$new", cond)
			}
		case replaced:
			if err := tx.QueryRowContext(ctx, `SELECT count(*) || ':' || coalesce(sum(hash(t)), 0) FROM `+t.name+` t`).Scan(&w.mark); err != nil {
				return nil, fmt.Errorf("lake: %s: %w", t.name, err)
			}
		case marker:
			if len(out) == 0 && !stopped {
				return nil, nil // nothing new: no seal
			}
			w.mark = strconv.FormatInt(no, 10)
			q = fmt.Sprintf(`SELECT %s AS shard, %d AS seal, %s AS seal_id, now() AS sealed_at, %d AS events, %s AS database`,
				literal(shard), no, literal(seal), events, literal(st.identity))
		}
		if w.mark == w.from && !w.create {
			continue
		}
		if t.mode == appended && !w.create {
			// New events, none of them with a row here: no file, no
			// commit; the table's watermark stays, and its next seal
			// covers this range too.
			var n int64
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (`+q+`)`).Scan(&n); err != nil {
				return nil, fmt.Errorf("lake: %s: %w", t.name, err)
			}
			if n == 0 {
				continue
			}
		}
		sel, cols, types := "*", sealsColumns, map[string]string{}
		if t.mode != marker {
			if sel, cols, types, err = lakeSelect(ctx, tx, t.name); err != nil {
				return nil, err
			}
		}
		w.types, w.columns = types, cols
		w.loc = l.base + "/" + t.name + "/data/" + file
		to, err := l.writeTo(t.name, w.loc)
		if err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, `COPY (SELECT `+sel+` FROM (`+q+`)) TO `+literal(to)+` (`+parquetOptions+`)`)
		if err != nil {
			return nil, fmt.Errorf("lake: write %s: %w", t.name, err)
		}
		if w.rows, err = res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("lake: write %s: %w", t.name, err)
		}
		if t.name == "events" {
			events = w.rows
		}
		if w.local, err = l.place(ctx, to, w.loc); err != nil {
			return nil, fmt.Errorf("lake: write %s: %w", t.name, err)
		}
		w.took = time.Since(t0)
		out = append(out, w)
	}
	return out, nil
}

// writeTo returns the file a seal's COPY writes the table's file of loc
// into: its place in a local warehouse, or in the stage (StageIn), or a
// temporary directory for a remote warehouse.
func (l *Lake) writeTo(table, loc string) (string, error) {
	if l.fs == nil {
		path := strings.TrimPrefix(loc, "file://")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("lake: %w", err)
		}
		if l.stage == "" {
			return path, nil
		}
	}
	if l.stage == "" {
		dir, err := os.MkdirTemp("", "evosignal-seal-")
		if err != nil {
			return "", fmt.Errorf("lake: stage: %w", err)
		}
		l.stage, l.temp = dir, true
	}
	return filepath.Join(l.stage, table+"-"+path.Base(loc)), nil
}

// place puts the file a COPY wrote (from) at loc, its place in the
// warehouse, and returns where it is on this machine: moved into a local
// warehouse, or uploaded to a remote one and still at from (removed after
// the seal, discard).
func (l *Lake) place(ctx context.Context, from, loc string) (string, error) {
	if l.fs == nil {
		to := strings.TrimPrefix(loc, "file://")
		if from == to {
			return to, nil
		}
		return to, move(from, to)
	}
	return from, l.upload(ctx, from, loc)
}

// upload copies the file to loc in the remote warehouse.
func (l *Lake) upload(ctx context.Context, from, loc string) error {
	wfs, ok := l.fs.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("warehouse %s: its file system cannot write", l.base)
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := wfs.Create(loc)
	if err != nil {
		return fmt.Errorf("upload %s: %w", loc, err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return fmt.Errorf("upload %s: %w", loc, err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("upload %s: %w", loc, err)
	}
	return ctx.Err()
}

// discard removes the staged copies of files uploaded to a remote
// warehouse.
func (l *Lake) discard(ws []written) {
	if l.fs == nil {
		return
	}
	for _, w := range ws {
		os.Remove(w.local)
	}
}

// StageIn makes the seals write each Parquet file into dir first and move
// it into the warehouse then: for a database whose external access is off
// (sqlservice.Lockdown), which DuckDB lets write into its temp directory
// only. The directory is created when missing.
func (l *Lake) StageIn(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lake: stage: %w", err)
	}
	if l.temp {
		os.RemoveAll(l.stage)
	}
	l.stage, l.temp = dir, false
	return nil
}

// move moves the file from to to, copying it where a rename cannot (to
// another file system).
func move(from, to string) error {
	err := os.Rename(from, to)
	if err == nil {
		return nil
	}
	var le *os.LinkError
	if !errors.As(err, &le) || !errors.Is(le.Err, syscall.EXDEV) {
		return err
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		os.Remove(to)
		return err
	}
	if err := errors.Join(dst.Sync(), dst.Close()); err != nil {
		os.Remove(to)
		return err
	}
	return os.Remove(from)
}

// dbState is what a seal reads of the shard's database first: its
// identity, the end of its events' rowids and the highest stream sequence
// it holds (0 for a database loaded from files only).
type dbState struct {
	identity string
	hi       int64
	seq      uint64
}

// A shard's watermark of an appended table is
//
//	IDENTITY:ROWID:SEQ
//
// the identity of the database that sealed it last, the end of the event
// rowids it sealed, and the highest stream sequence among them. Rowids are a database's own: the same database seals
// on from its rowid. Replicas of one partition (ingesters of one stream
// partition, each into its own database) hold the same events with the
// same stream sequences but other rowids: a replica taking over the
// shard's seals seals on from the stream sequence, once, and by rowid
// after that.

// sealRange returns the condition on events selecting what the shard's
// database db holds past from, the shard's watermark of the table, and the
// watermark the seal reaches. An empty condition: db is behind the lake
// (a replica that has not caught up with the one that sealed last).
func sealRange(shard, table, from string, db dbState) (cond, mark string, err error) {
	mark = fmt.Sprintf("%s:%d:%d", db.identity, db.hi, db.seq)
	var id string
	var lo int64
	var seq uint64
	switch f := strings.Split(from, ":"); {
	case from == "":
	case len(f) == 3:
		id = f[0]
		if lo, err = strconv.ParseInt(f[1], 10, 64); err == nil {
			seq, err = strconv.ParseUint(f[2], 10, 64)
		}
	default:
		err = errors.New("not IDENTITY:ROWID:SEQ")
	}
	if err != nil {
		return "", "", fmt.Errorf("lake: %s: shard %s's watermark %q: %w", table, shard, from, err)
	}
	if id == "" || id == db.identity {
		if lo > db.hi {
			return "", "", fmt.Errorf("lake: %s: shard %s sealed events up to rowid %d, its database has %d: another database under the same shard name?", table, shard, lo, db.hi)
		}
		return fmt.Sprintf("rowid >= %d AND rowid < %d", lo, db.hi), mark, nil
	}
	if seq == 0 || db.seq == 0 {
		return "", "", fmt.Errorf("lake: %s: shard %s was sealed by database %s, this is database %s, and not both read a stream: two databases never seal under one shard name (replicas of one stream partition do; docs/scale.md)", table, shard, id, db.identity)
	}
	if db.seq <= seq {
		return "", "", nil
	}
	return fmt.Sprintf("stream_seq > %d AND rowid < %d", seq, db.hi), mark, nil
}

// lakeSelect returns the select list that turns the columns of the
// database's table into types Iceberg holds (lakeTypes), the table's
// columns with their DuckDB types, and the DuckDB types of the columns it
// converts.
func lakeSelect(ctx context.Context, tx *sql.Tx, name string) (string, [][2]string, map[string]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = 'main' AND table_name = $1 ORDER BY ordinal_position`, name)
	if err != nil {
		return "", nil, nil, fmt.Errorf("lake: columns of %s: %w", name, err)
	}
	defer rows.Close()
	var cols []string
	var all [][2]string
	types := map[string]string{}
	for rows.Next() {
		var col, typ string
		if err := rows.Scan(&col, &typ); err != nil {
			return "", nil, nil, fmt.Errorf("lake: columns of %s: %w", name, err)
		}
		all = append(all, [2]string{col, typ})
		if to, ok := lakeTypes[typ]; ok {
			types[col] = typ
			cols = append(cols, fmt.Sprintf("CAST(%s AS %s) AS %s", quote(col), to, quote(col)))
			continue
		}
		cols = append(cols, quote(col))
	}
	if err := rows.Err(); err != nil {
		return "", nil, nil, fmt.Errorf("lake: columns of %s: %w", name, err)
	}
	if len(cols) == 0 {
		return "", nil, nil, fmt.Errorf("lake: the database has no table %s", name)
	}
	return strings.Join(cols, ", "), all, types, nil
}

// quote quotes a DuckDB identifier.
func quote(id string) string { return `"` + strings.ReplaceAll(id, `"`, `""`) + `"` }

// watermarks returns every shard's watermark of the table's current
// snapshot, by shard.
func watermarks(tbl *table.Table) map[string]string {
	out := map[string]string{}
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil {
		return out
	}
	for k, v := range s.Summary.Properties {
		if shard, ok := strings.CutPrefix(k, sealProp); ok {
			out[shard] = v
		}
	}
	return out
}

// ErrRaced is a seal that found a table sealed by another process since it
// began: another replica of the partition sealing the shard at the same
// time (docs/scale.md), or two databases under one shard name. The tables
// it committed before are exactly once as ever (each table's watermark is
// its own); the next seal goes on from the other's.
var ErrRaced = errors.New("another process sealed the shard meanwhile")

// sealNumbers returns every shard's number of its seal that committed to
// the table's current snapshot last, by shard (sealNoProp).
func sealNumbers(tbl *table.Table) map[string]int64 {
	out := map[string]int64{}
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil {
		return out
	}
	for k, v := range s.Summary.Properties {
		if shard, ok := strings.CutPrefix(k, sealNoProp); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[shard] = n
			}
		}
	}
	return out
}

// maxCommitTries bounds the commits of one file tried against a table
// another process committed to meanwhile.
const maxCommitTries = 50

// commit commits w's file to its table, creating the table first if the
// lake has none. The commit requires the snapshot it was planned on (no
// replay onto another: the watermarks it records are that snapshot's); when
// another process committed first, it reloads the table and tries again
// with the same file. A commit whose watermark the table already shows
// (an earlier try that committed but did not hear so) is not made twice.
func (l *Lake) commit(ctx context.Context, shard string, w written) error {
	if w.create {
		if err := l.create(ctx, w); err != nil {
			return err
		}
	}
	loc := w.loc
	for try := 1; ; try++ {
		tbl, err := l.cat.LoadTable(ctx, ident(w.table.name))
		if err != nil {
			return err
		}
		marks := watermarks(tbl)
		switch got := marks[shard]; {
		case got == w.mark && tbl.CurrentSnapshot() != nil:
			return nil // committed already
		case got != w.from:
			return fmt.Errorf("%w: shard %s's watermark moved from %q to %q while it sealed", ErrRaced, shard, w.from, got)
		}
		props := iceberg.Properties{}
		for s, m := range marks {
			props[sealProp+s] = m
		}
		props[sealProp+shard] = w.mark
		for s, n := range sealNumbers(tbl) {
			props[sealNoProp+s] = strconv.FormatInt(n, 10)
		}
		props[sealNoProp+shard] = strconv.FormatInt(w.seal, 10)
		tx := tbl.NewTransaction()
		if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
			return err
		}
		switch {
		case w.table.mode == replaced && tbl.CurrentSnapshot() != nil:
			old, err := shardFiles(ctx, tbl, shard)
			if err != nil {
				return err
			}
			if len(old) == 0 {
				err = tx.AddFiles(ctx, []string{loc}, props, false)
			} else {
				err = tx.ReplaceDataFiles(ctx, old, []string{loc}, props)
			}
			if err != nil {
				return err
			}
		default:
			if err := tx.AddFiles(ctx, []string{loc}, props, false); err != nil {
				return err
			}
		}
		_, err = tx.Commit(ctx)
		if err == nil || !conflict(err) || try == maxCommitTries {
			return err
		}
		// Another process committed to the table since it was loaded: let
		// it get ahead before loading the table again.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(1+rand.IntN(20*try)) * time.Millisecond):
		}
	}
}

// conflict tells whether a commit failed because another committed to the
// table first, and nothing of it was committed. iceberg-go's SQL catalog
// wraps table.ErrCommitFailed only when the catalog row moved under the
// commit; the requirement it checks first fails with a bare error
// ("requirement failed: branch "main" has changed: expected id …, found
// …", or "… was created concurrently" when both commit a table's first
// snapshot).
func conflict(err error) bool {
	if errors.Is(err, table.ErrCommitFailed) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "requirement failed: branch \""+table.MainBranch+"\" has changed") ||
		strings.Contains(msg, "requirement failed: branch \""+table.MainBranch+"\" was created concurrently")
}

// shardFiles returns the data files of the table's current snapshot that
// the shard wrote.
func shardFiles(ctx context.Context, tbl *table.Table, shard string) ([]string, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{} // a large file is planned as several tasks (completeFiles)
	for _, t := range tasks {
		p := t.File.FilePath()
		if s, _, ok := fileSeal(p); ok && s == shard && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// fileSeal returns the shard and the seal number of a data file's name,
// SHARD-NUMBER-UUID.parquet.
func fileSeal(path string) (shard string, no int64, ok bool) {
	base, ok := strings.CutSuffix(filepath.Base(path), ".parquet")
	if !ok || len(base) < 36+4 || base[len(base)-37] != '-' {
		return "", 0, false
	}
	rest := base[:len(base)-37]
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", 0, false
	}
	no, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || no <= 0 {
		return "", 0, false
	}
	return rest[:i], no, true
}

// literal quotes a DuckDB string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// create creates the lake's table of w, its schema that of w's file and
// the DuckDB types of its converted columns in its properties. A table
// another process created meanwhile is fine.
func (l *Lake) create(ctx context.Context, w written) error {
	f, err := file.OpenParquetFile(w.local, false)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	asc, err := r.Schema()
	if err != nil {
		return err
	}
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(asc, false)
	if err != nil {
		return err
	}
	cols, err := json.Marshal(w.columns)
	if err != nil {
		return err
	}
	// Merge the manifests: a fast append adds one manifest a commit, and a
	// scan (every Attach) reads them all; merged, a table keeps about
	// ManifestMinMergeCountDefault of them, however many seals it had.
	props := iceberg.Properties{columnsProp: string(cols), table.ManifestMergeEnabledKey: "true"}
	for col, typ := range w.types {
		props[typeProp+col] = typ
	}
	_, err = l.cat.CreateTable(ctx, ident(w.table.name), sc, catalog.WithProperties(maps.Clone(props)))
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return nil
	}
	return err
}
