package analyze

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// runSQLCmd runs `analyze sql args…` and returns stdout, stderr and the
// error.
func runSQLCmd(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"sql"}, args...), &out, &errOut)
	return out.String(), errOut.String(), err
}

// sqlCases are run with -db on the closed file and with -nats on the live
// service: every format must print the same.
var sqlCases = []struct {
	name string
	args []string
}{
	{"events", []string{"SELECT source, id, type, time, seq, data, subject FROM events ORDER BY source, id LIMIT 20"}},
	{"lists", []string{"SELECT session, tools, rules FROM sessions ORDER BY session"}},
	{"aggregates", []string{"SELECT agent, count(*) AS n, sum(seq) AS total, avg(seq) AS mean FROM events GROUP BY agent ORDER BY agent"}},
	{"flags after the text", []string{"SELECT $1::INTEGER + 1 AS a, $2 AS b, $3 AS c", "-arg", "41", "-arg", "text", "-arg", `["a","b"]`}},
	{"list parameter", []string{"-param", `x=["a","b"]`, "SELECT $x AS x, len($x) AS n"}},
	{"timestamp parameter", []string{"-param", `since={"type":"timestamp","value":"2000-01-01T00:00:00Z"}`, "SELECT count(*) AS n FROM events WHERE time >= $since"}},
	{"text parameter cast", []string{"-param", "since=2000-01-01 00:00:00+00", "SELECT count(*) AS n FROM events WHERE time >= $since::TIMESTAMPTZ"}},
	{"named query", []string{"-q", "replans", "-param", `by=["agent"]`}},
	{"named query with its own parameters", []string{"-q", "mappings", "-param", "window_us=604800000000", "-param", "windows=3"}},
	{"max rows", []string{"-max-rows", "3", "SELECT i FROM range(10) t(i)"}},
	{"empty", []string{"SELECT * FROM events WHERE false"}},
}

func TestSQLSameThroughFileAndService(t *testing.T) {
	path := remoteDB(t, remoteFixtures(t)...)
	qf := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(qf, []byte("-- from a file\nSELECT type, count(*) AS n FROM events GROUP BY type ORDER BY type;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := append(sqlCases, struct {
		name string
		args []string
	}{"file", []string{"-f", qf}})
	formats := []string{"json", "csv", "table"}
	want := map[string]string{}
	for _, c := range cases {
		for _, f := range formats {
			out, stderr, err := runSQLCmd(append([]string{"-db", path, "-format", f}, c.args...)...)
			if err != nil {
				t.Fatalf("%s -db -format %s: %v\n%s", c.name, f, err, stderr)
			}
			want[c.name+f] = out + stderr
		}
	}
	_, url := liveService(t, path)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range formats {
				out, stderr, err := runSQLCmd(append([]string{"-nats", url, "-format", f}, c.args...)...)
				if err != nil {
					t.Fatalf("-nats -format %s: %v\n%s", f, err, stderr)
				}
				if out+stderr != want[c.name+f] {
					t.Fatalf("-nats -format %s:\n%s\nwant (-db):\n%s", f, out+stderr, want[c.name+f])
				}
			}
		})
	}
}

func TestSQLFormats(t *testing.T) {
	path := remoteDB(t)
	q := `SELECT 1 AS n, 'a"b' AS s, NULL AS z, [1, 2] AS l, TIMESTAMPTZ '2025-06-01 10:00:00+00' AS t, 2.50::DECIMAL(4,2) AS d`
	tests := []struct{ format, want string }{
		{"json", "[\n  {\"n\": 1, \"s\": \"a\\\"b\", \"z\": null, \"l\": [1,2], \"t\": \"2025-06-01T10:00:00Z\", \"d\": 2.50}\n]\n"},
		{"csv", "n,s,z,l,t,d\n1,\"a\"\"b\",,\"[1,2]\",2025-06-01T10:00:00Z,2.50\n"},
		{"table", "n  s    z     l      t                     d\n1  a\"b  NULL  [1,2]  2025-06-01T10:00:00Z  2.50\n(1 rows)\n"},
	}
	for _, tc := range tests {
		out, stderr, err := runSQLCmd("-db", path, "-format", tc.format, q)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.format, err, stderr)
		}
		if out != tc.want {
			t.Errorf("-format %s:\n%q\nwant\n%q", tc.format, out, tc.want)
		}
	}
	out, _, err := runSQLCmd("-db", path, "-format", "json", "SELECT 1 WHERE false")
	if err != nil || out != "[]\n" {
		t.Fatalf("empty JSON = %q, %v", out, err)
	}
	var rows []map[string]any
	out, _, _ = runSQLCmd("-db", path, "-format", "json", "SELECT i, i * 2 AS j FROM range(3) t(i)")
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 || rows[2]["j"] != 4.0 {
		t.Fatalf("JSON rows %q: %v, %v", out, rows, err)
	}
}

func TestSQLOutFiles(t *testing.T) {
	path := remoteDB(t, remoteFixtures(t)...)
	dir := t.TempDir()
	q := "SELECT source, id, time, data, seq FROM events ORDER BY source, id"
	want := sqlScalar(t, path, "SELECT count(*) FROM events")
	for _, name := range []string{"events.parquet", "events.arrow"} {
		out := filepath.Join(dir, name)
		_, stderr, err := runSQLCmd("-db", path, "-out", out, q)
		if err != nil {
			t.Fatalf("-out %s: %v\n%s", name, err, stderr)
		}
		if !strings.Contains(stderr, "wrote ") {
			t.Errorf("-out %s says %q", name, stderr)
		}
	}
	if got := sqlScalar(t, "", "SELECT count(*) FROM read_parquet('"+filepath.Join(dir, "events.parquet")+"')"); got != want {
		t.Errorf("Parquet file has %s rows, want %s", got, want)
	}
	f, err := os.Open(filepath.Join(dir, "events.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	n := int64(0)
	for i := range fr.NumRecords() {
		rec, err := fr.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		n += rec.NumRows()
	}
	if got := fmt.Sprint(n); got != want {
		t.Errorf("Arrow file has %s rows, want %s", got, want)
	}
	if meta, ok := fr.Schema().Field(2).Metadata.GetValue(sqlservice.MetaType); !ok || meta != "TIMESTAMPTZ" {
		t.Errorf("Arrow field time carries type %q", meta)
	}
}

// sqlScalar runs a one-value query on a DuckDB file ("" for in memory).
func sqlScalar(tb testing.TB, path, q string) string {
	tb.Helper()
	dsn := path
	if path != "" {
		dsn += "?access_mode=read_only"
	}
	db, err := sql.Open("duckdb", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var s string
	if err := db.QueryRow(q).Scan(&s); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return s
}

func TestSQLRefusesWhatIsNotARead(t *testing.T) {
	path := remoteDB(t, remoteFixtures(t)[:2]...)
	secret := filepath.Join(t.TempDir(), "secret.csv")
	os.WriteFile(secret, []byte("a\n1\n"), 0o600)
	for _, q := range []string{
		"DELETE FROM events",
		"SELECT 1; DROP TABLE events",
		"COPY events TO '" + filepath.Join(t.TempDir(), "x.csv") + "'",
		"SELECT * FROM read_csv('" + secret + "')",
		"SELECT * FROM enable_profiling()",
	} {
		_, _, err := runSQLCmd("-db", path, q)
		if !errors.Is(err, sqlservice.ErrRefused) {
			t.Errorf("analyze sql -db %q = %v, want ErrRefused", q, err)
		}
	}
}

func TestSQLNamedQueryList(t *testing.T) {
	out, _, err := runSQLCmd("-list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"replans ", "trend ", "hints ", "mappings "} {
		if !strings.Contains(out, want) {
			t.Errorf("-list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mappings_task_types") {
		t.Errorf("-list shows the fragment mappings_task_types:\n%s", out)
	}
	path := remoteDB(t, remoteFixtures(t)[:2]...)
	_, _, err = runSQLCmd("-db", path, "-q", "mappings_task_types")
	if !errors.Is(err, errUsage) {
		t.Errorf("-q fragment = %v, want a usage error", err)
	}
	_, _, err = runSQLCmd("-db", path, "-q", "mappings")
	if !errors.Is(err, sqlservice.ErrBadRequest) || !strings.Contains(err.Error(), "$window") {
		t.Errorf("-q mappings without its parameters = %v, want the missing parameter named", err)
	}
}

func TestSQLUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"SELECT 1", "SELECT 2"},
		{"-q", "replans", "SELECT 1"},
		{"-format", "xml", "SELECT 1"},
		{"-out", "x.csv", "SELECT 1"},
		{"-param", "novalue", "SELECT 1"},
		{"-max-rows", "-1", "SELECT 1"},
	} {
		_, stderr, err := runSQLCmd(args...)
		if !errors.Is(err, errUsage) || stderr == "" {
			t.Errorf("analyze sql %q = %v (%q), want a usage error that explains", args, err, stderr)
		}
	}
	_, help, err := runSQLCmd("-h")
	if err != nil || !strings.Contains(help, "-nats") {
		t.Errorf("-h = %v\n%s", err, help)
	}
}

// -q with the taxonomy's patterns overridden must not use the stored
// classification (made with the default taxonomy's id): tax_id becomes
// NULL, unless it is given too.
func TestSQLTaxonomyOverrideDropsTheStoredClassification(t *testing.T) {
	for _, tc := range []struct {
		params []string
		want   string // tax_id as JSON; "" for the default's id
	}{
		{nil, ""},
		{[]string{`by=["agent"]`}, ""},
		{[]string{`tax_types=["x"]`, `tax_patterns=["y"]`}, "null"},
		{[]string{`tax_fallback=other`}, "null"},
		{[]string{`tax_types=["x"]`, `tax_id="mine@1"`}, `"mine@1"`},
	} {
		o := &sqlOptions{name: "hints", params: tc.params}
		req, err := o.request("")
		if err != nil {
			t.Fatal(err)
		}
		want := tc.want
		if want == "" {
			b, _ := json.Marshal(taxonomy.Default().ID())
			want = string(b)
		}
		if got := string(req.Named["tax_id"]); got != want {
			t.Errorf("-param %q: tax_id = %s, want %s", tc.params, got, want)
		}
	}
}
