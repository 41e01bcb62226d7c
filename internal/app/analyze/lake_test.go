package analyze

import (
	"context"
	"os"
	"path/filepath"
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
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, testdb.Build(t, testdb.Options{}, inputs...))
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
	one := testdb.Build(t, testdb.Options{}, files...)
	t.Run("dir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "lake")
		sealShard(t, dir, "a", files[:len(files)/2]...)
		sealShard(t, dir, "b", files[len(files)/2:]...)
		sameAsOneDatabase(t, one, "-lake", dir)
	})
	t.Run("postgres+s3", func(t *testing.T) {
		testkit.StartS3(t, "lake").SetEnv(t)
		pg := testkit.StartPostgres(t)
		o := lake.Options{Create: true, Warehouse: "s3://lake/evo", Cache: t.TempDir()}
		sealShardInto(t, pg, o, "a", files[:len(files)/2]...)
		sealShardInto(t, pg, o, "b", files[len(files)/2:]...)
		sameAsOneDatabase(t, one, "-lake", pg, "-lake-cache", t.TempDir())
	})
}

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
