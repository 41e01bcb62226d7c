package analyze

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/lake"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// sealShard loads inputs into a database and seals it into the lake in dir
// as shard.
func sealShard(t *testing.T, dir, shard string, inputs ...testdb.Input) {
	t.Helper()
	sealShardInto(t, dir, lake.Options{Create: true}, shard, inputs...)
}

// sealShardInto seals inputs into the lake uri as shard.
func sealShardInto(t *testing.T, uri string, o lake.Options, shard string, inputs ...testdb.Input) {
	t.Helper()
	sealDB(t, uri, o, shard, testdb.Build(t, testdb.Options{}, inputs...))
}

// sealDB seals the database file into the lake uri as shard.
func sealDB(t *testing.T, uri string, o lake.Options, shard, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := lake.Open(ctx, uri, o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Seal(ctx, db, shard); err != nil {
		t.Fatal(err)
	}
}

// Every analysis and analyze sql over a lake of two shards print what they
// print over one database of the same events: a lake in a directory, and
// one on a PostgreSQL catalog with an S3 warehouse (-lake-cache: where the
// analyzers' DuckDB reads its files from).
func TestLakeSameAsOneDatabase(t *testing.T) {
	files := testdb.Files(t, testdb.SampleSessions(t)...)
	// Shard b and the one database get a line that is no event too: a
	// dead letter, which the report counts.
	withDead := func(inputs ...testdb.Input) string {
		d := testdb.New(t, testdb.Options{})
		d.Load(t, inputs...)
		if res := d.LoadResult(t, testdb.Lines("bad.jsonl", `{"specversion": "1.0", "not": "an event"}`)); res.DeadLetters != 1 {
			t.Fatalf("the bad line: %+v, want a dead letter", res)
		}
		return d.Close(t)
	}
	one := withDead(files...)
	b := withDead(files[len(files)/2:]...)
	t.Run("dir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "lake")
		sealShard(t, dir, "a", files[:len(files)/2]...)
		sealDB(t, dir, lake.Options{Create: true}, "b", b)
		sameAsOneDatabase(t, one, "-lake", dir)
	})
	t.Run("postgres+s3", func(t *testing.T) {
		testkit.StartS3(t, "lake").SetEnv(t)
		pg := testkit.StartPostgres(t)
		o := lake.Options{Create: true, Warehouse: "s3://lake/evo", Cache: t.TempDir()}
		sealShardInto(t, pg, o, "a", files[:len(files)/2]...)
		sealDB(t, pg, o, "b", b)
		sameAsOneDatabase(t, one, "-lake", pg, "-lake-cache", t.TempDir())
	})
}

// receivedAt is the time of a report's latest dead letter of a reason.
var receivedAt = regexp.MustCompile(`"latest_at": "[^"]*"`)

// sameAsOneDatabase runs the analyses with the flags of a lake and with -db
// one, and compares their JSON.
func sameAsOneDatabase(t *testing.T, one string, lakeFlags ...string) {
	t.Helper()
	for _, args := range [][]string{
		{"replans"},
		{"replans", "-by", "agent"},
		{"hints", "-min-calls", "1"},
		{"mappings"},
		{"trend", "-every", "day"},
		{"effect"},
		{"rules"},
		{"sql", "-q", "replans"},
		{"sql", "SELECT type, count(*) AS n FROM events GROUP BY type ORDER BY type"},
		{"sql", "SELECT session, key_hash, stream_seq FROM events ORDER BY session, seq, id"},
	} {
		want := string(runForJSON(t, append(args, "-db", one)...))
		got := string(runForJSON(t, append(args, lakeFlags...)...))
		if got != want {
			t.Errorf("analyze %s -lake:\n%s\nwant (-db):\n%s", strings.Join(args, " "), got, want)
		}
	}
	// The report: its JSON (the numbers of its HTML and Markdown too).
	report := func(flags ...string) string {
		out := t.TempDir()
		var stdout, stderr strings.Builder
		args := append([]string{"report", "-out", out, "-until", "2027-01-01", "-since", "800d"}, flags...)
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("analyze %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		b, err := os.ReadFile(filepath.Join(out, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		// When it ran, and when the dead letter was committed: the
		// databases were written at other times.
		return receivedAt.ReplaceAllString(string(generatedAt.ReplaceAll(b, nil)), "")
	}
	if got, want := report(lakeFlags...), report("-db", one); got != want {
		t.Errorf("analyze report -lake: report.json\n%s\nwant (-db):\n%s", got, want)
	}
}

// analyze sql over a lake is locked down as over a database: a file
// function is refused by the guard, and the DuckDB under it reads no file
// outside the lake's warehouse even when asked directly.
func TestLakeSQLLockedDown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	sealShard(t, dir, "a", testdb.Files(t, testdb.SampleSessions(t)...)...)
	outside := filepath.Join(t.TempDir(), "secret.csv")
	if err := os.WriteFile(outside, []byte("a\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	err := run(context.Background(), []string{"sql", "-lake", dir, "-format", "json", "SELECT * FROM read_csv('" + outside + "')"}, &stdout, &stderr)
	if err == nil || !strings.Contains(stderr.String()+err.Error(), "read_csv") {
		t.Errorf("analyze sql -lake of a file outside the lake: %v, %q, want the guard's refusal naming read_csv", err, stderr.String())
	}

	ctx := context.Background()
	db, readable, err := openLake(ctx, lakeFlags{uri: dir}, store.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := allowLake(ctx, db, readable); err != nil {
		t.Fatal(err)
	}
	if err := sqlservice.Lockdown(ctx, db); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM read_csv('"+outside+"')").Scan(&n); err == nil {
		t.Errorf("the locked-down lake database read %s", outside)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&n); err != nil || n == 0 {
		t.Errorf("the locked-down lake database: %d events (%v), want the lake's", n, err)
	}
}
