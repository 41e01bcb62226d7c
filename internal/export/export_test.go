package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// midnight is where the synthetic sessions start, so that they run into
// the next day.
var midnight = time.Date(2025, 6, 14, 23, 55, 0, 0, time.UTC)

// TestExportAllTables exports the sample sessions and the invalid events and
// reads every table back.
func TestExportAllTables(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, append(validFiles(t), invalidFiles(t)...)...)
	d.loadSynth(t, 1, midnight, 20)
	for _, tb := range Tables {
		if n := d.sourceRows(t, tb.Name); n == 0 {
			t.Fatalf("table %s has no rows: the test data must fill every table", tb.Name)
		}
	}
	dir := filepath.Join(t.TempDir(), "out")
	var progress []string
	res := d.mustExport(t, Config{Dir: dir, Progress: func(tr TableResult) { progress = append(progress, tr.Table) }})

	d.checkExport(t, dir, nil)
	if got, want := strings.Join(progress, ","), tableNames(); got != want {
		t.Errorf("progress = %s, want %s", got, want)
	}
	if res.Run != 1 {
		t.Errorf("Run = %d, want 1", res.Run)
	}
	var rows int64
	var files int
	for _, tr := range res.Tables {
		if want := d.sourceRows(t, tr.Table); tr.Rows != want {
			t.Errorf("%s: Rows = %d, want %d", tr.Table, tr.Rows, want)
		}
		if got := len(parquetFiles(t, filepath.Join(dir, tr.Table))); tr.Files != got || got == 0 {
			t.Errorf("%s: Files = %d, %d on disk", tr.Table, tr.Files, got)
		}
		rows += tr.Rows
		files += tr.Files
	}
	if res.Rows != rows || res.Files != files {
		t.Errorf("totals = %d rows, %d files; tables add up to %d, %d", res.Rows, res.Files, rows, files)
	}
	// Layout: DIR/<table>/day=YYYY-MM-DD/part-000001-<uuid>.parquet, and
	// the sample data spans several days.
	days := map[string]bool{}
	for _, p := range parquetFiles(t, dir) {
		rel, _ := filepath.Rel(dir, p)
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) != 3 || !isTable(parts[0]) || !partition.MatchString(parts[1]) || !strings.HasPrefix(parts[2], "part-000001-") {
			t.Errorf("file %s does not follow the layout", rel)
		}
		if parts[0] == "events" {
			days[parts[1]] = true
		}
	}
	if len(days) < 4 {
		t.Errorf("events in %d day folders, want the 4 days of the data", len(days))
	}
	m := readManifestFile(t, dir)
	if m.Run != 1 || m.Format != ManifestFormat || m.Version != ManifestVersion {
		t.Errorf("manifest = run %d, %s v%d", m.Run, m.Format, m.Version)
	}
	for _, tb := range Tables {
		st := m.Tables[tb.Name]
		if st.Mark == nil || st.Rows != d.sourceRows(t, tb.Name) || st.Clock != tb.Clock {
			t.Errorf("manifest %s = %+v", tb.Name, st)
		}
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q, want none", res.Warnings)
	}
}

// TestExportIncremental loads more, exports again: the new run adds files
// and leaves the old ones alone; the union is the source, without
// duplicates. A third run with nothing new writes nothing.
func TestExportIncremental(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, validFiles(t)...)
	dir := filepath.Join(t.TempDir(), "out")
	d.mustExport(t, Config{Dir: dir})
	d.checkExport(t, dir, nil)
	first := snapshot(t, dir)
	m1 := readManifestFile(t, dir)

	d.loadSynth(t, 2, midnight, 15)
	d.loadFiles(t, invalidFiles(t)[:5]...)
	res := d.mustExport(t, Config{Dir: dir})
	if res.Run != 2 {
		t.Fatalf("second run = %d, want 2", res.Run)
	}
	d.checkExport(t, dir, nil)
	second := snapshot(t, dir)
	for p, b := range first {
		if second[p] != b {
			t.Errorf("file %s of run 1 changed or disappeared", p)
		}
	}
	added := 0
	for p := range second {
		if _, old := first[p]; old {
			continue
		}
		added++
		if !strings.HasPrefix(filepath.Base(p), "part-000002-") {
			t.Errorf("new file %s is not of run 2", p)
		}
	}
	if added != res.Files || added == 0 {
		t.Errorf("%d files added, Result says %d", added, res.Files)
	}
	m2 := readManifestFile(t, dir)
	for _, tb := range Tables {
		if got, want := m2.Tables[tb.Name].Rows, d.sourceRows(t, tb.Name); got != want {
			t.Errorf("manifest %s rows = %d, want %d", tb.Name, got, want)
		}
		if m1.Tables[tb.Name].Mark != nil && !m2.Tables[tb.Name].Mark.After(*m1.Tables[tb.Name].Mark) {
			t.Errorf("manifest %s mark did not advance", tb.Name)
		}
	}

	before, _ := os.ReadFile(filepath.Join(dir, manifestName))
	res = d.mustExport(t, Config{Dir: dir})
	if res.Rows != 0 || res.Files != 0 || res.Run != 2 {
		t.Errorf("run with nothing new = %d rows, %d files, run %d; want 0, 0, 2", res.Rows, res.Files, res.Run)
	}
	after, _ := os.ReadFile(filepath.Join(dir, manifestName))
	if string(before) != string(after) {
		t.Errorf("manifest changed by a run with nothing new")
	}
	if got := len(snapshot(t, dir)); got != len(second) {
		t.Errorf("%d files after a run with nothing new, want %d", got, len(second))
	}
}

// TestExportInterrupted: a run that died after writing some files (and a
// temporary manifest) but before its manifest: the next run removes them
// and exports again, exactly.
func TestExportInterrupted(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, validFiles(t)...)
	dir := filepath.Join(t.TempDir(), "out")
	d.mustExport(t, Config{Dir: dir})
	d.loadSynth(t, 3, midnight, 10)
	d.loadFiles(t, invalidFiles(t)[:3]...)

	// What a crashed run 2 leaves: truncated files in old and new day
	// folders, a new table folder, and a temporary manifest.
	planted := []string{
		"events/day=2025-06-12/part-000002-0a1b2c3d-0000-4000-8000-000000000001.parquet",
		"tool_calls/day=2031-01-01/part-000002-0a1b2c3d-0000-4000-8000-000000000002.parquet",
		"dead_letters/day=2031-01-01/part-000002-0a1b2c3d-0000-4000-8000-000000000003.parquet",
	}
	src := parquetFiles(t, filepath.Join(dir, "events"))[0]
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range planted {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, manifestName+tmpSuffix), []byte(`{"run": 2, "trunc`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file that is not the export's own is left alone.
	foreign := filepath.Join(dir, "events", "day=2025-06-12", "notes.txt")
	if err := os.WriteFile(foreign, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}

	res := d.mustExport(t, Config{Dir: dir})
	if res.Removed != len(planted) {
		t.Errorf("Removed = %d, want %d", res.Removed, len(planted))
	}
	for _, p := range planted {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("planted %s: %v, want removed", p, err)
		}
	}
	for _, p := range []string{"tool_calls/day=2031-01-01", "dead_letters/day=2031-01-01", manifestName + tmpSuffix} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want removed", p, err)
		}
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("foreign file: %v, want kept", err)
	}
	d.checkExport(t, dir, nil)
}

// TestExportCanceled: a run stopped midway (here: canceled after a few
// tables) removes its files and leaves the manifest; the next run is exact.
func TestExportCanceled(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, validFiles(t)...)
	dir := filepath.Join(t.TempDir(), "out")
	d.mustExport(t, Config{Dir: dir})
	before, _ := os.ReadFile(filepath.Join(dir, manifestName))
	files := snapshot(t, dir)

	d.loadSynth(t, 4, midnight, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := d.export(ctx, t, Config{Dir: dir, Progress: func(tr TableResult) {
		if tr.Table == "plans" {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled Export = %v, want context.Canceled", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, manifestName))
	if string(before) != string(after) {
		t.Errorf("manifest changed by a canceled run")
	}
	if got := snapshot(t, dir); len(got) != len(files) {
		t.Errorf("%d files after a canceled run, want the %d of run 1", len(got), len(files))
	}
	res := d.mustExport(t, Config{Dir: dir})
	if res.Run != 2 {
		t.Errorf("run after the canceled one = %d, want 2", res.Run)
	}
	d.checkExport(t, dir, nil)
}

// TestExportEmpty: a database without rows exports nothing, twice, and
// does not fail.
func TestExportEmpty(t *testing.T) {
	d := newTestDB(t)
	dir := filepath.Join(t.TempDir(), "out")
	for i := range 2 {
		res := d.mustExport(t, Config{Dir: dir})
		if res.Rows != 0 || res.Files != 0 || res.Run != 0 {
			t.Errorf("export %d of an empty database = %d rows, %d files, run %d; want 0, 0, 0", i+1, res.Rows, res.Files, res.Run)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != manifestName && e.Name() != lockName {
			t.Errorf("empty export left %s", e.Name())
		}
	}
	m := readManifestFile(t, dir)
	for name, st := range m.Tables {
		if st.Mark != nil || st.Rows != 0 {
			t.Errorf("manifest %s = %+v, want nothing exported", name, st)
		}
	}
	// And data loaded later is exported in full.
	d.loadFiles(t, validFiles(t)...)
	d.mustExport(t, Config{Dir: dir})
	d.checkExport(t, dir, nil)
}

// TestExportWindow: -until exports what was committed up to it, the next
// run the rest; -since starts a directory after it.
func TestExportWindow(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, validFiles(t)...)
	d.loadFiles(t, invalidFiles(t)[:4]...)
	cut := d.commitTime(t)
	d.loadSynth(t, 5, midnight, 10)
	d.loadFiles(t, invalidFiles(t)[4:8]...)

	upTo := map[string]string{}
	after := map[string]string{}
	for _, tb := range Tables {
		clock := "e.ingested_at"
		if tb.Name == deadLettersTable {
			clock = "x.received_at"
		}
		upTo[tb.Name] = rowsWhere(tb.Name, clock+" <= "+sqlTime(cut))
		after[tb.Name] = rowsWhere(tb.Name, clock+" > "+sqlTime(cut))
	}

	t.Run("until", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		d.mustExport(t, Config{Dir: dir, Until: cut})
		d.checkExport(t, dir, upTo)
		d.mustExport(t, Config{Dir: dir})
		d.checkExport(t, dir, nil)
	})
	t.Run("since", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		d.mustExport(t, Config{Dir: dir, Since: cut})
		d.checkExport(t, dir, after)
		m := readManifestFile(t, dir)
		if m.Since == nil || !m.Since.Equal(cut) {
			t.Errorf("manifest since = %v, want %v", m.Since, cut)
		}
		// Repeating -since is fine; reaching back before it is not.
		d.mustExport(t, Config{Dir: dir, Since: cut})
		if _, err := d.export(context.Background(), t, Config{Dir: dir, Since: cut.Add(-time.Hour)}); !errors.Is(err, ErrSince) {
			t.Errorf("Export with an earlier -since = %v, want ErrSince", err)
		}
	})
	t.Run("since after the mark", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		d.mustExport(t, Config{Dir: dir, Until: cut})
		_, err := d.export(context.Background(), t, Config{Dir: dir, Since: cut.Add(time.Microsecond)})
		if !errors.Is(err, ErrSince) {
			t.Errorf("Export with a -since past the mark = %v, want ErrSince", err)
		}
	})
}

// commitTime is the latest commit time in the database.
func (d *testDB) commitTime(tb testing.TB) time.Time {
	tb.Helper()
	us := d.counts(tb, "SELECT epoch_us(greatest(max(ingested_at), (SELECT max(received_at) FROM src.main.dead_letters))) FROM src.main.events")[0]
	return time.UnixMicro(us).UTC()
}

func sqlTime(t time.Time) string {
	return "TIMESTAMPTZ " + sqlString(t.UTC().Format("2006-01-02 15:04:05.999999Z07:00"))
}

// TestExportWarnings: rows committed behind the mark (a clock set back) and
// a reused (session, seq) are reported, not exported twice.
func TestExportWarnings(t *testing.T) {
	d := newTestDB(t)
	files := validFiles(t)
	d.loadFiles(t, files...)
	dir := filepath.Join(t.TempDir(), "out")
	d.mustExport(t, Config{Dir: dir})

	// The plan of a session sent again under a new id, same (session, seq).
	plan := planLine(t, files)
	d.loadLines(t, "again.jsonl", strings.Replace(plan, `"id":"01`, `"id":"ff`, 1))
	res := d.mustExport(t, Config{Dir: dir})
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "reuse the (session, seq)") {
		t.Errorf("warnings = %q, want one on the reused plan key", res.Warnings)
	}
	if n := d.counts(t, "SELECT count(*) FROM (SELECT DISTINCT * FROM src.main.plan_tasks)")[0]; n == d.sourceRows(t, "plan_tasks") {
		t.Fatal("the reused plan added no plan_tasks rows")
	}
	// The plan_tasks rows of the second event (copies of the first's) are
	// not exported again; every other table is exported in full.
	d.checkExport(t, dir, map[string]string{"plan_tasks": "SELECT DISTINCT * FROM src.main.plan_tasks"})

	// A batch committed with a commit time before the mark.
	d.loadSynth(t, 6, midnight, 2)
	d.exec(t, "UPDATE events SET ingested_at = ingested_at - INTERVAL 3650 DAY WHERE ingested_at = (SELECT max(ingested_at) FROM events)")
	res = d.mustExport(t, Config{Dir: dir})
	if res.Rows != 0 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "clock set back") {
		t.Errorf("export after a late commit = %d rows, warnings %q; want 0 rows and a warning", res.Rows, res.Warnings)
	}
}

// planLine returns an agent.plan.created line of the sample sessions.
func planLine(tb testing.TB, files []string) string {
	tb.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"type":"agent.plan.created"`) && strings.Contains(l, `"tasks":[{`) {
				return l
			}
		}
	}
	tb.Fatal("no agent.plan.created line with tasks in the sample sessions")
	return ""
}

// TestExportDirErrors: the output directory and manifest problems are
// clear errors, before anything is written.
func TestExportDirErrors(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, validFiles(t)[:1]...)
	base := t.TempDir()
	file := filepath.Join(base, "a-file")
	foreign := filepath.Join(base, "foreign")
	badManifest := filepath.Join(base, "bad-manifest")
	newer := filepath.Join(base, "newer")
	busy := filepath.Join(base, "busy")
	must(t, os.WriteFile(file, []byte("x"), 0o644))
	must(t, os.MkdirAll(foreign, 0o755))
	must(t, os.WriteFile(filepath.Join(foreign, "photo.jpg"), []byte("x"), 0o644))
	must(t, os.MkdirAll(badManifest, 0o755))
	must(t, os.WriteFile(filepath.Join(badManifest, manifestName), []byte("{not json"), 0o644))
	must(t, os.MkdirAll(newer, 0o755))
	must(t, os.WriteFile(filepath.Join(newer, manifestName), []byte(`{"format":"evosignal-export","version":2,"run":1,"tables":{}}`), 0o644))
	must(t, os.MkdirAll(busy, 0o755))
	unlock, err := lockDir(busy)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()

	tests := []struct {
		name string
		dir  string
		want error
	}{
		{"a file", file, ErrNotDir},
		{"under a file", filepath.Join(file, "out"), nil},
		{"another directory", foreign, ErrNotExportDir},
		{"unreadable manifest", badManifest, ErrManifest},
		{"newer manifest", newer, ErrManifest},
		{"another export running", busy, ErrBusy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.export(context.Background(), t, Config{Dir: tt.dir})
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("Export(%s) = %v, want %v", tt.dir, err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(foreign, "events")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("export wrote into a foreign directory")
	}
}

func TestConfigValidate(t *testing.T) {
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none = valid
	}{
		{"ok", Config{Dir: "out"}, nil},
		{"window", Config{Dir: "out", Since: at, Until: at.Add(time.Hour)}, nil},
		{"no dir", Config{}, []string{"none given"}},
		{"all at once", Config{Dir: "a\x00b", Since: at, Until: at}, []string{"NUL", "not before"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != (len(tt.want) == 0) {
				t.Fatalf("Validate() = %v, want errors %q", err, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want it to mention %q", err, w)
				}
			}
		})
	}
}

// TestCopyStatementQuoting: the output path is the one thing spliced into a
// statement; a quote in it stays inside the string literal, and glob
// characters are taken literally.
func TestCopyStatementQuoting(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, validFiles(t)[:1]...)
	dir := filepath.Join(t.TempDir(), "it's [a] *dir*?; DROP TABLE events")
	res := d.mustExport(t, Config{Dir: dir})
	if n := len(parquetFiles(t, dir)); res.Files != n || n == 0 {
		t.Errorf("Files = %d, %d on disk", res.Files, n)
	}
	d.checkExport(t, dir, nil)
}

func tableNames() string {
	var s []string
	for _, t := range Tables {
		s = append(s, t.Name)
	}
	return strings.Join(s, ",")
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// TestExportImpossibleTimes: a database may hold event times outside years
// 0001-9999 UTC (stored before the decoder refused them). Their rows are
// exported, with their own times, under the first or last day folder, never
// one named like "day=0002-12-31%20%28BC%29".
func TestExportImpossibleTimes(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, validFiles(t)...)
	d.exec(t,
		`UPDATE events SET time = time - INTERVAL '2026 years' WHERE id = (SELECT min(id) FROM events)`,
		`UPDATE events SET time = time + INTERVAL '7975 years' WHERE id = (SELECT max(id) FROM events)`,
	)
	dir := filepath.Join(t.TempDir(), "out")
	res := d.mustExport(t, Config{Dir: dir})
	days := map[string]bool{}
	for _, p := range parquetFiles(t, dir) {
		rel, _ := filepath.Rel(dir, p)
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) != 3 || !partition.MatchString(parts[1]) {
			t.Errorf("file %s: not DIR/<table>/day=YYYY-MM-DD/<file>", rel)
		}
		if parts[0] == "events" {
			days[parts[1]] = true
		}
	}
	if !days["day=0001-01-01"] || !days["day=9999-12-31"] {
		t.Errorf("event day folders %v, want day=0001-01-01 and day=9999-12-31 among them", days)
	}
	for _, tr := range res.Tables {
		if want := d.sourceRows(t, tr.Table); tr.Rows != want {
			t.Errorf("%s: Rows = %d, want %d", tr.Table, tr.Rows, want)
		}
	}
	got := readParquet(t, filepath.Join(dir, "events"))
	if n := d.counts(t, `SELECT count(*) FROM (SELECT * FROM src.main.events EXCEPT ALL SELECT * EXCLUDE (day) FROM `+got+`)`)[0]; n != 0 {
		t.Errorf("%d event rows missing from the export or changed", n)
	}
}

// tableFiles lists the Parquet files under the table folders of dir (what a
// reader globbing them sees), leaving out the staging folder.
func tableFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	var out []string
	for _, t := range Tables {
		out = append(out, parquetFiles(tb, filepath.Join(dir, t.Name))...)
	}
	slices.Sort(out)
	return out
}

// TestExportStaged: while a run writes, and after it is canceled or killed
// midway, the table folders hold only the files of committed runs; the
// run's files appear there all at once when it commits.
func TestExportStaged(t *testing.T) {
	d := newTestDB(t)
	d.loadFiles(t, validFiles(t)...)
	dir := filepath.Join(t.TempDir(), "out")
	d.mustExport(t, Config{Dir: dir})
	committed := tableFiles(t, dir)
	d.loadSynth(t, 5, midnight, 10)

	// Canceled midway: at every table, nothing of run 2 in the table
	// folders, though the run has written files (staged).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stagedSeen int
	_, err := d.export(ctx, t, Config{Dir: dir, Progress: func(tr TableResult) {
		if got := tableFiles(t, dir); !slices.Equal(got, committed) {
			t.Errorf("after table %s: the table folders hold %d files, want the %d of run 1", tr.Table, len(got), len(committed))
		}
		stagedSeen += tr.Files
		if tr.Table == "plans" {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled Export = %v, want context.Canceled", err)
	}
	if stagedSeen == 0 {
		t.Fatal("the canceled run wrote no file before it stopped: the test shows nothing")
	}
	if got := parquetFiles(t, dir); !slices.Equal(got, committed) {
		t.Errorf("after the canceled run: %d files under the output folder, want the %d of run 1", len(got), len(committed))
	}
	if _, err := os.Stat(filepath.Join(dir, stagingName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("staging folder after a canceled run: %v, want removed", err)
	}

	// Killed midway: what the process leaves is in the staging folder only;
	// the next run removes it and is exact.
	killed := filepath.Join(stagingDir(dir, 2), "events", "day=2025-06-12", "part-000002-0a1b2c3d-0000-4000-8000-000000000009.parquet")
	if err := os.MkdirAll(filepath.Dir(killed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(killed, []byte("PAR1 truncated"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := d.mustExport(t, Config{Dir: dir, Progress: func(tr TableResult) {
		if got := tableFiles(t, dir); len(got) != len(committed) {
			t.Errorf("after table %s: the table folders hold %d files before the run committed, want %d", tr.Table, len(got), len(committed))
		}
	}})
	moved := tableFiles(t, dir)
	if res.Run != 2 || len(moved) != len(committed)+res.Files {
		t.Errorf("run %d: %d files in the table folders, want run 2 with %d + %d", res.Run, len(moved), len(committed), res.Files)
	}
	if _, err := os.Stat(filepath.Join(dir, stagingName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("staging folder after a committed run: %v, want removed", err)
	}
	d.checkExport(t, dir, nil)
}
