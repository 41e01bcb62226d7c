package sqlservice

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestForbiddenStatements tries everything that writes, attaches, installs,
// loads, sets, exports or reads files; each must be refused (or fail in
// DuckDB before it touches anything), and the database must be unchanged.
func TestForbiddenStatements(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	secret := out("secret.csv")
	if err := os.WriteFile(secret, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := direct(t, st.DB(), `SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM duckdb_tables()) AS tables,
		(SELECT count(*) FROM duckdb_views() WHERE NOT internal) AS views, (SELECT string_agg(name || '=' || value, ',' ORDER BY name) FROM duckdb_settings()) AS settings`)

	tests := []struct {
		name, sql string
		want      error
	}{
		{"INSERT", `INSERT INTO events (source, id) VALUES ('x', 'y')`, ErrRefused},
		{"INSERT RETURNING", `INSERT INTO ingest_position VALUES ('S', 1, now()) RETURNING *`, ErrRefused},
		{"UPDATE", `UPDATE events SET seq = 0`, ErrRefused},
		{"DELETE", `DELETE FROM events`, ErrRefused},
		{"TRUNCATE", `TRUNCATE events`, ErrRefused},
		{"CREATE TABLE", `CREATE TABLE x (a INTEGER)`, ErrRefused},
		{"CREATE TEMP TABLE", `CREATE TEMP TABLE x AS SELECT 1`, ErrRefused},
		{"CREATE OR REPLACE", `CREATE OR REPLACE TABLE events AS SELECT 1 AS a`, ErrRefused},
		{"CREATE VIEW", `CREATE VIEW v AS SELECT 1`, ErrRefused},
		{"CREATE MACRO", `CREATE MACRO m(a) AS a + 1`, ErrRefused},
		{"CREATE SEQUENCE", `CREATE SEQUENCE s`, ErrRefused},
		{"CREATE SECRET", `CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 'v')`, ErrRefused},
		{"DROP", `DROP TABLE events`, ErrRefused},
		{"DROP VIEW", `DROP VIEW sessions`, ErrRefused},
		{"ALTER", `ALTER TABLE events ADD COLUMN x INTEGER`, ErrRefused},
		{"COMMENT ON", `COMMENT ON TABLE events IS 'x'`, ErrRefused},
		{"ATTACH memory", `ATTACH ':memory:' AS m`, ErrRefused},
		{"ATTACH file", `ATTACH '` + out("other.duckdb") + `' AS o`, ErrRefused},
		{"DETACH", `DETACH evo`, ErrRefused},
		{"USE", `USE memory`, ErrRefused},
		{"INSTALL", `INSTALL httpfs`, ErrRefused},
		{"FORCE INSTALL", `FORCE INSTALL httpfs`, ErrRefused},
		{"LOAD", `LOAD httpfs`, ErrRefused},
		{"UPDATE EXTENSIONS", `UPDATE EXTENSIONS`, ErrRefused},
		{"SET", `SET threads = 1`, ErrRefused},
		{"SET external access", `SET enable_external_access = true`, ErrRefused},
		{"SET GLOBAL lock", `SET GLOBAL lock_configuration = false`, ErrRefused},
		{"RESET", `RESET threads`, ErrRefused},
		{"SET VARIABLE", `SET VARIABLE x = 1`, ErrRefused},
		{"PRAGMA setting", `PRAGMA enable_profiling`, ErrRefused},
		{"PRAGMA assignment", `PRAGMA threads = 1`, ErrRefused},
		{"PRAGMA read", `PRAGMA table_info('events')`, ErrRefused},
		{"EXPORT DATABASE", `EXPORT DATABASE '` + out("export") + `'`, ErrRefused},
		{"IMPORT DATABASE", `IMPORT DATABASE '` + dir + `'`, ErrRefused},
		{"COPY TO", `COPY events TO '` + out("events.csv") + `'`, ErrRefused},
		{"COPY query TO", `COPY (SELECT 1) TO '` + out("one.parquet") + `' (FORMAT parquet)`, ErrRefused},
		{"COPY FROM", `COPY ingest_position FROM '` + secret + `'`, ErrRefused},
		{"CHECKPOINT", `CHECKPOINT`, ErrRefused},
		{"FORCE CHECKPOINT", `FORCE CHECKPOINT`, ErrRefused},
		{"CALL", `CALL pragma_version()`, ErrRefused},
		{"VACUUM", `VACUUM`, ErrRefused},
		{"BEGIN", `BEGIN TRANSACTION`, ErrRefused},
		{"COMMIT", `COMMIT`, ErrRefused},
		{"PREPARE", `PREPARE p AS SELECT 1`, ErrRefused},
		{"EXECUTE", `EXECUTE p`, ErrRefused},
		{"EXPLAIN", `EXPLAIN SELECT 1`, ErrRefused},
		{"EXPLAIN ANALYZE DELETE", `EXPLAIN ANALYZE DELETE FROM events`, ErrRefused},
		{"read_csv", `SELECT * FROM read_csv('` + secret + `')`, ErrRefused},
		{"read_csv /etc/passwd", `SELECT * FROM read_csv('/etc/passwd')`, ErrRefused},
		{"file as table", `SELECT * FROM '` + secret + `'`, ErrRefused},
		{"file as table /etc/passwd", `SELECT * FROM '/etc/passwd'`, ErrRefused},
		{"read_text", `SELECT * FROM read_text('/etc/passwd')`, ErrRefused},
		{"read_blob", `SELECT * FROM read_blob('` + secret + `')`, ErrRefused},
		{"glob", `SELECT * FROM glob('/etc/*')`, ErrRefused},
		{"parquet_scan", `SELECT * FROM parquet_scan('` + out("x.parquet") + `')`, ErrRefused},
		{"read_json", `SELECT * FROM read_json_auto('` + secret + `')`, ErrRefused},
		{"read_duckdb", `SELECT * FROM read_duckdb('` + out("other.duckdb") + `')`, ErrRefused},
		{"read in a subquery", `SELECT (SELECT count(*) FROM read_csv('` + secret + `')) AS n`, ErrRefused},
		{"two statements", `SELECT 1; DROP TABLE events`, ErrRefused},
		{"write first", `DROP TABLE events; SELECT 1`, ErrRefused},
		{"two selects", `SELECT 1; SELECT 2`, ErrRefused},
		{"data-modifying CTE", `WITH d AS (DELETE FROM events RETURNING *) SELECT * FROM d`, ErrSQL},
		{"set_config", `SELECT set_config('threads', '1', false)`, ErrSQL},
		{"checkpoint()", `SELECT * FROM checkpoint()`, ErrRefused},
		{"force_checkpoint()", `SELECT * FROM force_checkpoint()`, ErrRefused},
		{"enable_profiling()", `SELECT * FROM enable_profiling()`, ErrRefused},
		{"enable_logging()", `SELECT * FROM enable_logging()`, ErrRefused},
		{"disable_peg_parser()", `SELECT * FROM disable_peg_parser()`, ErrRefused},
		{"truncate_duckdb_logs()", `SELECT * FROM truncate_duckdb_logs()`, ErrRefused},
		{"query()", `SELECT * FROM query('SELECT 1')`, ErrRefused},
		{"query() writing", `SELECT * FROM query('DROP TABLE events')`, ErrRefused},
		{"query_table()", `SELECT * FROM query_table('events')`, ErrRefused},
		{"json_execute_serialized_sql()", `SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))`, ErrRefused},
		{"schema-qualified", `SELECT * FROM system.main.checkpoint()`, ErrRefused},
		{"upper case", `select * from CHECKPOINT()`, ErrRefused},
		{"nextval", `SELECT nextval('s')`, ErrRefused},
		{"setseed", `SELECT setseed(0.5)`, ErrRefused},
		{"write_log", `SELECT write_log('x')`, ErrRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := client.Query(t.Context(), Request{SQL: tc.sql})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Query(%q) = %v, %v; want %v", tc.sql, res, err, tc.want)
			}
			if errors.Is(err, ErrRefused) && !strings.HasPrefix(err.Error(), "refused: ") {
				t.Errorf("refusal %q does not say so", err)
			}
			// The local path applies the same checks.
			if _, lerr := (Local{DB: st.DB()}).Query(t.Context(), Request{SQL: tc.sql}); !errors.Is(lerr, tc.want) {
				t.Errorf("Local: %v, want %v", lerr, tc.want)
			}
		})
	}
	after := direct(t, st.DB(), `SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM duckdb_tables()) AS tables,
		(SELECT count(*) FROM duckdb_views() WHERE NOT internal) AS views, (SELECT string_agg(name || '=' || value, ',' ORDER BY name) FROM duckdb_settings()) AS settings`)
	if d := sameResult(after, before); d != "" {
		t.Errorf("the database changed: %s", d)
	}
	for _, f := range []string{"export", "events.csv", "one.parquet", "other.duckdb"} {
		if _, err := os.Stat(out(f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}

// TestIngesterRunsLockedDown runs the ingester end to end through
// JetStream with the query service (and so the database guard) on, and
// reads what it wrote through the service while it runs.
func TestIngesterRunsLockedDown(t *testing.T) {
	ctx := t.Context()
	srv, nc, js := testkit.Embedded(t)
	stream := bus.DefaultStream()
	if _, err := bus.EnsureStream(ctx, js, stream); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "live.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := startService(t, nc, st.DB(), nil)
	cfg := ingest.DefaultConfig()
	cfg.FlushInterval = 20 * time.Millisecond
	cfg.BatchSize = 200
	in, err := ingest.New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- in.Run(runCtx, js) }()

	pub, err := agent.NewPublisher(js, agent.PublisherConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	count := func() int64 {
		res, err := client.Query(ctx, Request{SQL: "SELECT count(*) AS n FROM events"})
		if err != nil {
			t.Fatalf("count through the service while ingesting: %v", err)
		}
		return res.Rows[0][0].(int64)
	}
	gen := synth.New(3, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	sent := 0
	seen := int64(0)
	for round := range 5 {
		c := &counter{next: pub}
		for range 40 {
			if _, err := gen.Session(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := pub.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		sent += c.n
		n := count() // reads committed data, never more than was sent
		if n < seen || n > int64(sent) {
			t.Fatalf("round %d: %d events through the service (before %d, sent %d)", round, n, seen, sent)
		}
		seen = n
	}
	if err := pub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "every event through the service", func() bool { return count() == int64(sent) })
	stop()
	if err := <-runErr; err != nil {
		t.Fatalf("ingester Run with the guard on: %v", err)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	// The guard is still in force on the ingester's own database.
	if _, err := st.DB().ExecContext(ctx, "SET enable_external_access = true"); err == nil {
		t.Fatal("SET enable_external_access = true succeeded on the locked-down database")
	}
	var typed int64
	if err := st.DB().QueryRowContext(ctx, "SELECT count(*) FROM plans").Scan(&typed); err != nil || typed == 0 {
		t.Fatalf("typed tables after ingesting: %d plans, %v", typed, err)
	}
}

// counter counts the events it forwards.
type counter struct {
	next agent.Sink
	n    int
}

func (c *counter) Send(ctx context.Context, e *events.Event) error {
	c.n++
	return c.next.Send(ctx, e)
}
