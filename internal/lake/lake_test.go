package lake

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// analyses runs the analyzers over src, each result as JSON, by name.
func analyses(t *testing.T, src metrics.Source) map[string]string {
	t.Helper()
	ctx := context.Background()
	tax := taxonomy.Default()
	out := map[string]string{}
	put := func(name string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	rep, err := metrics.Replans(ctx, src, metrics.Filter{})
	put("replans", rep, err)
	byAgent, err := metrics.Replans(ctx, src, metrics.Filter{By: []string{"agent", "model"}})
	put("replans -by agent,model", byAgent, err)
	hints, err := metrics.Hints(ctx, src, metrics.Filter{}, tax, metrics.HintsConfig{MinCalls: 1})
	put("hints", hints, err)
	maps, err := metrics.Mappings(ctx, src, metrics.Filter{}, tax, metrics.DefaultMappingsConfig())
	put("mappings", maps, err)
	trend, err := metrics.Trend(ctx, src, metrics.Filter{}, "day")
	put("trend", trend, err)
	eff, err := metrics.Effect(ctx, src, metrics.Filter{}, metrics.DefaultEffectConfig())
	put("effect", eff, err)
	return out
}

// where is a lake a test opens: its URI, how it is opened, and the
// directory its data files end up in on this machine (the S3 server's
// bucket directory for an S3 warehouse).
type where struct {
	uri       string
	o         Options
	warehouse string
}

// local is the lake in dir.
func local(dir string) where {
	return where{uri: dir, o: Options{Create: true}, warehouse: filepath.Join(dir, "warehouse")}
}

// remote starts a PostgreSQL server and an S3 server and returns a lake
// on them: the catalog in PostgreSQL, the warehouse in a bucket.
func remote(t *testing.T) where {
	t.Helper()
	s3 := testkit.StartS3(t, "lake")
	s3.SetEnv(t)
	pg := testkit.StartPostgres(t)
	return where{
		uri:       pg,
		o:         Options{Create: true, Warehouse: "s3://lake/evo", Cache: t.TempDir()},
		warehouse: filepath.Join(s3.Dir, "lake", "evo"),
	}
}

// open opens the lake.
func (lk where) open(t *testing.T) *Lake {
	t.Helper()
	l, err := Open(context.Background(), lk.uri, lk.o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// attached is an in-memory DuckDB with the lake attached.
func attached(t *testing.T, lk where) *sql.DB {
	t.Helper()
	l := lk.open(t)
	defer l.Close()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := l.Attach(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// dataFiles counts the Parquet files in the lake's warehouse.
func dataFiles(t *testing.T, lk where) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(lk.warehouse, "*", "*", "data", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// seal seals db into the lake as shard.
func seal(t *testing.T, lk where, db *sql.DB, shard string) []TableSeal {
	t.Helper()
	l := lk.open(t)
	defer l.Close()
	got, err := l.Seal(context.Background(), db, shard)
	if err != nil {
		t.Fatalf("seal %s: %v", shard, err)
	}
	return got
}

// The same events in one database and in two shards sealed into one lake
// give the same analyses; sealing again with nothing new commits nothing:
// in a lake in a directory, and in a lake on a PostgreSQL catalog with an
// S3 warehouse (real servers, separate processes).
func TestLakeAnswersAsOneDatabase(t *testing.T) {
	t.Run("dir", func(t *testing.T) { testAnswersAsOneDatabase(t, local(filepath.Join(t.TempDir(), "lake"))) })
	t.Run("postgres+s3", func(t *testing.T) { testAnswersAsOneDatabase(t, remote(t)) })
}

func testAnswersAsOneDatabase(t *testing.T, lk where) {
	samples := testdb.Files(t, testdb.SampleSessions(t)...)
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	synthA := testdb.Synth(t, "synth-a", 1, start, 60)
	synthB := testdb.Synth(t, "synth-b", 2, start.Add(72*time.Hour), 60)
	synthA2 := testdb.Synth(t, "synth-a2", 3, start.Add(24*time.Hour), 30)

	var partA, partB []testdb.Input
	for i, in := range samples {
		if i%2 == 0 {
			partA = append(partA, in)
		} else {
			partB = append(partB, in)
		}
	}
	opts := testdb.Options{Taxonomy: taxonomy.Default(), BatchSize: 50}
	one := testdb.Build(t, opts, append(append(append(samples, synthA), synthB), synthA2)...)

	a := testdb.New(t, opts)
	a.Load(t, append(partA, synthA)...)
	first := seal(t, lk, a.Store().DB(), "shard-a")
	if len(first) != len(tables) {
		t.Fatalf("first seal committed to %d tables, want all %d: %+v", len(first), len(tables), first)
	}
	a.Load(t, synthA2) // a second seal adds only what came since
	b := testdb.New(t, opts)
	b.Load(t, append(partB, synthB)...)
	// Shard b seals before its facts are refreshed: the lake's views
	// compute those of its pending sessions, as the database's do.
	if _, err := b.Store().DB().Exec(`INSERT INTO facts_pending SELECT DISTINCT session FROM events WHERE source IN (SELECT source FROM events ORDER BY source LIMIT 20)`); err != nil {
		t.Fatal(err)
	}
	seal(t, lk, b.Store().DB(), "shard-b")
	for _, ts := range seal(t, lk, a.Store().DB(), "shard-a") {
		if ts.Rows == 0 {
			t.Errorf("the second seal of shard-a committed an empty file to %s", ts.Table)
		}
	}

	files := dataFiles(t, lk)
	if again := seal(t, lk, a.Store().DB(), "shard-a"); len(again) != 0 {
		t.Errorf("a seal with nothing new committed %+v", again)
	}
	if again := seal(t, lk, b.Store().DB(), "shard-b"); len(again) != 0 {
		t.Errorf("a seal with nothing new committed %+v", again)
	}
	if n := dataFiles(t, lk); n != files {
		t.Errorf("seals with nothing new wrote %d files", n-files)
	}

	oneDB, err := store.OpenReadOnly(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	defer oneDB.Close()
	lakeDB := attached(t, lk)
	for _, table := range tables {
		if table.mode == marker {
			continue
		}
		var want, got int64
		if err := oneDB.QueryRow("SELECT count(*) FROM " + table.name).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if err := lakeDB.QueryRow("SELECT count(*) FROM " + table.name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if table.name == "facts_pending" {
			if got == 0 {
				t.Errorf("the lake has no pending facts")
			}
			continue
		}
		if got != want {
			t.Errorf("%s: lake %d rows, database %d", table.name, got, want)
		}
	}
	want, got := analyses(t, metrics.DB{DB: oneDB}), analyses(t, metrics.DB{DB: lakeDB})
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s over the lake differs from one database:\nlake: %s\ndatabase: %s", name, got[name], w)
		}
	}
}

// The lake's tables keep the database's column types.
func TestLakeKeepsTypes(t *testing.T) {
	d := testdb.New(t, testdb.Options{})
	d.Load(t, testdb.Files(t, testdb.SampleSessions(t)...)...)
	dir := t.TempDir()
	seal(t, local(dir), d.Store().DB(), "s1")
	lakeDB := attached(t, local(dir))
	types := func(db *sql.DB, table string) string {
		rows, err := db.Query(`SELECT column_name || ' ' || column_type FROM (DESCRIBE SELECT * FROM ` + table + `)`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, c)
		}
		return strings.Join(cols, ", ")
	}
	for _, table := range tables {
		if table.mode == marker {
			continue
		}
		if want, got := types(d.Store().DB(), table.name), types(lakeDB, table.name); got != want {
			t.Errorf("%s:\nlake     %s\ndatabase %s", table.name, got, want)
		}
	}
	var n int64
	dbEvents := d.Store().DB()
	if err := dbEvents.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var hashes int64
	if err := lakeDB.QueryRow(`SELECT count(DISTINCT key_hash) FROM events`).Scan(&hashes); err != nil {
		t.Fatal(err)
	}
	if hashes != n {
		t.Errorf("lake: %d distinct key hashes, database %d events", hashes, n)
	}
}

// A shard's first seal writes each appended table whole, a later one the
// rows of its new events: either way the lake holds the database's rows,
// each once.
func TestSealsWriteTheDatabasesRows(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	d := testdb.New(t, testdb.Options{Taxonomy: taxonomy.Default(), BatchSize: 50})
	dir := t.TempDir()
	// digest is what the seal compares replaced tables by: the rows'
	// count and the sum of their hashes.
	digest := func(db *sql.DB, table string) string {
		var s string
		if err := db.QueryRow(`SELECT count(*) || ':' || coalesce(sum(hash(t)), 0) FROM ` + table + ` t`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i, in := range []testdb.Input{testdb.Synth(t, "synth-1", 1, start, 40), testdb.Synth(t, "synth-2", 2, start.Add(24*time.Hour), 30)} {
		d.Load(t, in)
		seal(t, local(dir), d.Store().DB(), "s1")
		lakeDB := attached(t, local(dir))
		for _, table := range tables {
			if table.mode != appended {
				continue
			}
			if want, got := digest(d.Store().DB(), table.name), digest(lakeDB, table.name); got != want {
				t.Errorf("after seal %d, %s: lake %s, database %s (rows:hashes)", i+1, table.name, got, want)
			}
		}
	}
}

// A file larger than a table's read.split.target-size, which iceberg-go
// plans as a task per range of its row groups, is read once, and a
// replaced table's such file is replaced once.
func TestSplitFileReadOnce(t *testing.T) {
	ctx := context.Background()
	parquetOptions = "FORMAT parquet, ROW_GROUP_SIZE 2048"
	t.Cleanup(func() { parquetOptions = "FORMAT parquet" })
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	d := testdb.New(t, testdb.Options{Taxonomy: taxonomy.Default(), BatchSize: 50})
	d.Load(t, testdb.Synth(t, "synth-1", 1, start, 600))
	dir := t.TempDir()
	seal(t, local(dir), d.Store().DB(), "s1")
	split := func() {
		l, err := Open(ctx, dir, Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for _, name := range []string{"events", "task_facts_stored"} {
			tbl, err := l.cat.LoadTable(ctx, ident(name))
			if err != nil {
				t.Fatal(err)
			}
			tx := tbl.NewTransaction()
			if err := tx.SetProperties(iceberg.Properties{"read.split.target-size": "1"}); err != nil {
				t.Fatal(err)
			}
			if tbl, err = tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			tasks, err := tbl.Scan().PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) < 2 {
				t.Fatalf("%s: %d scan tasks, want its file split in several", name, len(tasks))
			}
		}
	}
	check := func(when string) {
		t.Helper()
		lakeDB := attached(t, local(dir))
		for _, name := range []string{"events", "task_facts_stored"} {
			var want, got int64
			if err := d.Store().DB().QueryRow("SELECT count(*) FROM " + name).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if err := lakeDB.QueryRow("SELECT count(*) FROM " + name).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s, %s: lake %d rows, database %d", when, name, got, want)
			}
		}
	}
	split()
	check("first seal")
	d.Load(t, testdb.Synth(t, "synth-2", 2, start.Add(24*time.Hour), 30))
	seal(t, local(dir), d.Store().DB(), "s1")
	check("second seal")
}

// A seal stopped after writing its files and before committing leaves the
// lake's snapshot as it was; the next seal commits everything once.
func TestInterruptedSealLeavesSnapshot(t *testing.T) {
	ctx := context.Background()
	d := testdb.New(t, testdb.Options{})
	samples := testdb.Files(t, testdb.SampleSessions(t)...)
	d.Load(t, samples[:3]...)
	dir := t.TempDir()
	seal(t, local(dir), d.Store().DB(), "s1")
	before := eventCount(t, local(dir))

	d.Load(t, samples[3:]...)
	l, err := Open(ctx, dir, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	beforeCommit = cancel
	t.Cleanup(func() { beforeCommit = nil })
	done, err := l.Seal(cctx, d.Store().DB(), "s1")
	l.Close()
	if !errors.Is(err, context.Canceled) || len(done) != 0 {
		t.Fatalf("cancelled seal: committed %+v, error %v; want nothing and context.Canceled", done, err)
	}
	beforeCommit = nil
	if got := eventCount(t, local(dir)); got != before {
		t.Fatalf("an interrupted seal changed the lake's events from %d to %d", before, got)
	}
	seal(t, local(dir), d.Store().DB(), "s1")
	var want int64
	if err := d.Store().DB().QueryRow(`SELECT count(*) FROM events`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if got := eventCount(t, local(dir)); got != want {
		t.Fatalf("after the next seal the lake has %d events, the database %d", got, want)
	}
}

// eventCount counts the events of the lake's current snapshot.
func eventCount(t *testing.T, lk where) int64 {
	t.Helper()
	var n int64
	if err := attached(t, lk).QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A lake of another format is refused, naming both formats.
func TestOtherFormatRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := Open(ctx, dir, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.cat.UpdateNamespaceProperties(ctx, ident("")[:1], nil, map[string]string{formatProp: "99", writtenProp: "evosignal v9.9.9"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, err = Open(ctx, dir, Options{Create: true})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Got != 99 || !strings.Contains(err.Error(), "format 99 (written by evosignal v9.9.9)") || !strings.Contains(err.Error(), fmt.Sprintf("lake format %d", Format)) {
		t.Fatalf("open a lake of format 99: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "catalog.db")); err != nil {
		t.Fatal(err)
	}
}

// TestMain runs a seal in a child process when the test binary is started
// as one (sealChild): the processes of TestSealsFromProcesses.
func TestMain(m *testing.M) {
	if spec := os.Getenv("EVOSIGNAL_LAKE_SEAL"); spec != "" {
		os.Exit(sealChild(spec))
	}
	os.Exit(m.Run())
}

// sealChild seals the database of spec (lake dir, database file, shard,
// tab-separated) and returns the exit status.
func sealChild(spec string) int {
	ctx := context.Background()
	f := strings.Split(spec, "\t")
	db, err := store.OpenReadOnly(ctx, f[1])
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	defer db.Close()
	o := Options{Create: true}
	if len(f) > 3 {
		o.Warehouse = f[3]
	}
	l, err := Open(ctx, f[0], o)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	defer l.Close()
	if _, err := l.Seal(ctx, db, f[2]); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}

// Shards sealing into one lake from processes of their own, at once, each
// commit their rows once: a commit another process got in before is tried
// again on the new snapshot with the same files.
func TestSealsFromProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	l, err := Open(context.Background(), dir, Options{Create: true}) // the catalog, before the children race to create it
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	sealsFromProcesses(t, local(dir))
}

// Processes that create a new lake on a PostgreSQL catalog at once (the
// catalog's tables, the namespace, the lake's tables), each sealing a
// shard, all succeed: several ingesters started on a new lake.
func TestSealsFromProcessesNewRemoteLake(t *testing.T) {
	sealsFromProcesses(t, remote(t))
}

// sealsFromProcesses seals four databases, each from a process of its
// own, at once into the lake lk, each as a shard: the lake holds every
// event of them.
func sealsFromProcesses(t *testing.T, lk where) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	const shards = 4
	var want int64
	cmds := make([]*exec.Cmd, shards)
	for i := range shards {
		path := testdb.Build(t, testdb.Options{}, testdb.Synth(t, "synth", uint64(10+i), start, 20))
		db, err := store.OpenReadOnly(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		err = db.QueryRow(`SELECT count(*) FROM events`).Scan(&n)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		want += n
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "EVOSIGNAL_LAKE_SEAL="+lk.uri+"\t"+path+"\tshard-"+strconv.Itoa(i)+"\t"+lk.o.Warehouse)
		cmds[i] = cmd
	}
	outs := make([]bytes.Buffer, shards)
	for i, cmd := range cmds {
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("shard-%d: %v: %s", i, err, outs[i].String())
		}
	}
	if got := eventCount(t, lk); got != want {
		t.Errorf("the lake has %d events, the shards %d", got, want)
	}
}

// A commit tried again after it landed (its answer lost) commits nothing
// the second time: the table shows its watermark already.
func TestRetriedCommitNotTwice(t *testing.T) {
	ctx := context.Background()
	d := testdb.New(t, testdb.Options{})
	d.Load(t, testdb.Files(t, testdb.SampleSessions(t)...)...)
	l, err := Open(ctx, t.TempDir(), Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ws, err := l.write(ctx, d.Store().DB(), "s1", map[string]string{}, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	snapshots := func() int {
		n := 0
		for _, w := range ws {
			tbl, err := l.cat.LoadTable(ctx, ident(w.table.name))
			if err != nil {
				t.Fatal(err)
			}
			n += len(tbl.Metadata().Snapshots())
		}
		return n
	}
	for _, w := range ws {
		if err := l.commit(ctx, "s1", w); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshots()
	for _, w := range ws {
		w.create = false
		if err := l.commit(ctx, "s1", w); err != nil {
			t.Fatalf("%s: the same commit again: %v", w.table.name, err)
		}
	}
	if after := snapshots(); after != before {
		t.Errorf("the same commits again made %d snapshots", after-before)
	}
	if eventCount(t, local(l.Name())) == 0 {
		t.Error("no events in the lake")
	}
}

// sealRange: a database seals on by its own rowids, a replica by the
// stream sequence of the one that sealed last, and two databases that do
// not both read a stream never under one name.
func TestSealRange(t *testing.T) {
	me := dbState{identity: "db-a", hi: 500, seq: 9000}
	for _, c := range []struct {
		from, cond, err string
	}{
		{"", "rowid >= 0 AND rowid < 500", ""},
		{"120", "", "not IDENTITY:ROWID:SEQ"}, // format 1's watermark: that lake is refused on open
		{"db-a:300:7000", "rowid >= 300 AND rowid < 500", ""},
		{"db-b:280:7000", "stream_seq > 7000 AND rowid < 500", ""},
		{"db-b:700:9000", "", ""}, // the other replica is as far: nothing
		{"db-b:900:9500", "", ""}, // … or farther
		{"db-a:600:9500", "", "another database under the same shard name"},
		{"db-b:280:0", "", "two databases never seal under one shard name"},
		{"db-b:280", "", "not IDENTITY:ROWID:SEQ"},
	} {
		cond, mark, err := sealRange("s", "events", c.from, me)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("from %q: error %v, want one saying %q", c.from, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("from %q: %v", c.from, err)
		case cond != c.cond:
			t.Errorf("from %q: condition %q, want %q", c.from, cond, c.cond)
		case cond != "" && mark != "db-a:500:9000":
			t.Errorf("from %q: mark %q, want db-a:500:9000", c.from, mark)
		}
	}
	files := dbState{identity: "db-a", hi: 500}
	if _, _, err := sealRange("s", "events", "db-b:280:7000", files); err == nil {
		t.Error("a database of files took over a stream replica's shard")
	}
}

// A seal stopped after some of its tables' commits is not seen: Attach
// shows every table as the last complete seal left it, the stored facts
// included (taken from the snapshot before), until the next seal
// completes, which shows everything once.
func TestHalfSealNotSeen(t *testing.T) {
	ctx := context.Background()
	d := testdb.New(t, testdb.Options{})
	samples := testdb.Files(t, testdb.SampleSessions(t)...)
	d.Load(t, samples[:3]...)
	dir := t.TempDir()
	seal(t, local(dir), d.Store().DB(), "s1")
	counts := func() map[string]int64 {
		db := attached(t, local(dir))
		out := map[string]int64{}
		for _, tb := range tables {
			name := tb.name
			if tb.mode == marker {
				name = "lake_seals"
			}
			var n int64
			if err := db.QueryRow(`SELECT count(*) FROM ` + name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			out[name] = n
		}
		var facts string
		db.QueryRow(`SELECT count(*) || ':' || sum(hash(f)) FROM session_facts_stored f`).Scan(&facts)
		out["facts "+facts] = 1
		return out
	}
	before := counts()

	d.Load(t, samples[3:]...)
	l, err := Open(ctx, dir, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	afterCommit = func(table string) {
		if table == "tool_calls" { // the facts and some typed tables are in
			cancel()
		}
	}
	t.Cleanup(func() { afterCommit = nil })
	done, err := l.Seal(cctx, d.Store().DB(), "s1")
	l.Close()
	afterCommit = nil
	if !errors.Is(err, context.Canceled) || len(done) < 5 {
		t.Fatalf("seal stopped after tool_calls: committed %+v, error %v", done, err)
	}
	if got := counts(); !maps.Equal(got, before) {
		t.Fatalf("a half seal is seen:\nbefore %v\nafter  %v", before, got)
	}
	seal(t, local(dir), d.Store().DB(), "s1")
	db := attached(t, local(dir))
	for _, tb := range tables {
		if tb.mode == marker {
			continue
		}
		var want, got int64
		d.Store().DB().QueryRow(`SELECT count(*) FROM ` + tb.name).Scan(&want)
		db.QueryRow(`SELECT count(*) FROM ` + tb.name).Scan(&got)
		if got != want {
			t.Errorf("after the next seal %s: lake %d rows, database %d", tb.name, got, want)
		}
	}
	var seals int64
	db.QueryRow(`SELECT max(seal) FROM lake_seals`).Scan(&seals)
	if seals != 2 {
		t.Errorf("lake_seals: last seal %d, want 2 (the stopped one's number is taken again)", seals)
	}
}

// Expire leaves each table its last snapshots and removes the files only
// the others referenced (the shard's replaced facts files): the lake then
// answers as before, and seals go on from the watermarks.
func TestExpireKeepsAnswers(t *testing.T) {
	lk := local(filepath.Join(t.TempDir(), "lake"))
	d := testdb.New(t, testdb.Options{Taxonomy: taxonomy.Default()})
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	const seals = retainLast + 3
	for i := range seals {
		d.Load(t, testdb.Synth(t, fmt.Sprintf("synth-%d", i), uint64(i+1), start.Add(time.Duration(i)*time.Hour), 3))
		seal(t, lk, d.Store().DB(), "s1")
	}
	before := analyses(t, metrics.DB{DB: attached(t, lk)})
	files := dataFiles(t, lk)
	l := lk.open(t)
	defer l.Close()
	counts := snapshotCounts(t, l)
	if n, err := l.Expire(context.Background(), time.Hour); err != nil || n != 0 {
		t.Fatalf("Expire(1h) of snapshots younger than that: %d, %v; want 0, nil", n, err)
	}
	time.Sleep(10 * time.Millisecond)
	n, err := l.Expire(context.Background(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Each table keeps its last retainLast snapshots, and the warehouse
	// holds the data files of those and no other.
	var expired int
	for _, c := range counts {
		expired += max(0, c-retainLast)
	}
	if n != expired || n == 0 {
		t.Errorf("Expire removed %d snapshots, want %d (%v)", n, expired, counts)
	}
	for name, c := range snapshotCounts(t, l) {
		if c != min(counts[name], retainLast) {
			t.Errorf("%s: %d snapshots after Expire, had %d, want %d", name, c, counts[name], min(counts[name], retainLast))
		}
	}
	// Left: only the first seal's files of the tables it created empty
	// (committed, but a scan plans no file of zero records).
	ref := referencedFiles(t, l)
	present, err := filepath.Glob(filepath.Join(lk.warehouse, "*", "*", "data", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range present {
		if !ref["file://"+p] {
			left = append(left, filepath.Base(filepath.Dir(filepath.Dir(p)))+"/"+filepath.Base(p))
			if _, no, _ := fileSeal(p); no != 1 {
				t.Errorf("Expire left %s, of seal %d, referenced by no snapshot", p, no)
			}
		}
		delete(ref, "file://"+p)
	}
	if len(ref) > 0 {
		t.Errorf("Expire removed files the snapshots left reference: %v", ref)
	}
	if len(present) >= files {
		t.Errorf("after Expire the warehouse has %d data files, had %d", len(present), files)
	}
	if after := analyses(t, metrics.DB{DB: attached(t, lk)}); !maps.Equal(after, before) {
		t.Errorf("the lake answers otherwise after Expire:\n%v\nwant\n%v", after, before)
	}
	d.Load(t, testdb.Synth(t, "synth-last", 99, start.Add(48*time.Hour), 3))
	seal(t, lk, d.Store().DB(), "s1")
	var want int64
	if err := d.Store().DB().QueryRow(`SELECT count(*) FROM events`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if got := eventCount(t, lk); got != want {
		t.Errorf("after Expire and another seal the lake has %d events, the database %d", got, want)
	}
}

// snapshotCounts returns how many snapshots each table of the lake has.
func snapshotCounts(t *testing.T, l *Lake) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tt := range tables {
		tbl, err := l.cat.LoadTable(context.Background(), ident(tt.name))
		if err != nil {
			t.Fatal(err)
		}
		out[tt.name] = len(tbl.Metadata().Snapshots())
	}
	return out
}

// referencedFiles returns the data files any snapshot of the lake's tables
// references.
func referencedFiles(t *testing.T, l *Lake) map[string]bool {
	t.Helper()
	ctx := context.Background()
	out := map[string]bool{}
	for _, tt := range tables {
		tbl, err := l.cat.LoadTable(ctx, ident(tt.name))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tbl.Metadata().Snapshots() {
			tasks, err := tbl.Scan(table.WithSnapshotID(s.SnapshotID)).PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range tasks {
				out[task.File.FilePath()] = true
			}
		}
	}
	return out
}

// A seal stopped after its last table's commit, before the seals table's,
// is completed by the next seal of the shard even when the database has
// nothing new since: its events are seen then, once.
func TestHalfSealCompletedWithNothingNew(t *testing.T) {
	ctx := context.Background()
	d := testdb.New(t, testdb.Options{})
	samples := testdb.Files(t, testdb.SampleSessions(t)...)
	d.Load(t, samples[:3]...)
	dir := t.TempDir()
	seal(t, local(dir), d.Store().DB(), "s1")
	before := eventCount(t, local(dir))

	d.Load(t, samples[3:]...)
	l, err := Open(ctx, dir, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	afterCommit = func(table string) {
		if table == "events" { // every table but the seals table is in
			cancel()
		}
	}
	t.Cleanup(func() { afterCommit = nil })
	done, err := l.Seal(cctx, d.Store().DB(), "s1")
	l.Close()
	afterCommit = nil
	if !errors.Is(err, context.Canceled) || len(done) == 0 || done[len(done)-1].Table != "events" {
		t.Fatalf("seal stopped after events: committed %+v, error %v", done, err)
	}
	if got := eventCount(t, local(dir)); got != before {
		t.Fatalf("a half seal is seen: %d events, before it %d", got, before)
	}
	seal(t, local(dir), d.Store().DB(), "s1")
	var want int64
	if err := d.Store().DB().QueryRow(`SELECT count(*) FROM events`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if got := eventCount(t, local(dir)); got != want {
		t.Fatalf("after the next seal, nothing new in the database: the lake has %d events, the database %d", got, want)
	}
	var seals int64
	attached(t, local(dir)).QueryRow(`SELECT max(seal) FROM lake_seals`).Scan(&seals)
	if seals != 2 {
		t.Errorf("lake_seals: last seal %d, want 2", seals)
	}
	if got := seal(t, local(dir), d.Store().DB(), "s1"); len(got) != 0 {
		t.Errorf("a seal with nothing new after the completed one committed %+v", got)
	}
}

// A remote lake seals and reads after the context it was opened with is
// cancelled: the last seal of an ingester runs after its stop cancelled
// the context the lake was opened with.
func TestRemoteLakeOutlivesOpenContext(t *testing.T) {
	lk := remote(t)
	d := testdb.New(t, testdb.Options{})
	d.Load(t, testdb.Files(t, testdb.SampleSessions(t)...)...)
	octx, cancel := context.WithCancel(context.Background())
	l, err := Open(octx, lk.uri, lk.o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cancel()
	if _, err := l.Seal(context.Background(), d.Store().DB(), "s1"); err != nil {
		t.Fatalf("seal after the open's context was cancelled: %v", err)
	}
	var want int64
	if err := d.Store().DB().QueryRow(`SELECT count(*) FROM events`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if got := eventCount(t, lk); got != want {
		t.Fatalf("the lake has %d events, the database %d", got, want)
	}
}

// Many processes opening a new lake on one PostgreSQL catalog at once all
// succeed: the first creates the catalog's tables, the others wait for it
// and find them. Each round is a new, empty database.
func TestOpenNewRemoteCatalogAtOnce(t *testing.T) {
	lk := remote(t)
	admin, err := sql.Open("pgx", lk.uri)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	const rounds, openers = 6, 8
	for r := range rounds {
		name := fmt.Sprintf("atonce%d", r)
		if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
			t.Fatal(err)
		}
		uri := strings.Replace(lk.uri, "/postgres?", "/"+name+"?", 1)
		o := lk.o
		o.Warehouse = "s3://lake/" + name
		errs := make(chan error, openers)
		start := make(chan struct{})
		for range openers {
			go func() {
				<-start
				l, err := Open(context.Background(), uri, o)
				if err == nil {
					l.Close()
				}
				errs <- err
			}()
		}
		close(start)
		for range openers {
			if err := <-errs; err != nil {
				t.Errorf("round %d: %v", r, err)
			}
		}
	}
}
