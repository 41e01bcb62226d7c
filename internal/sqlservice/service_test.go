package sqlservice

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/micro"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// equalCases are queries whose answers must equal database/sql's, through
// the service and through Local.
var equalCases = []struct {
	name string
	sql  string
	args []any
}{
	{"events with JSON, NULLs, timestamps", `SELECT source, id, type, time, session, seq, data, agent, ext, subject, stream_seq, ingested_at, key_hash
		FROM events ORDER BY source, id`, nil},
	{"lists", `SELECT session, tools, rules, task_type, started_at FROM sessions ORDER BY session`, nil},
	{"bigint lists and booleans", `SELECT session, seq, kept, valid, error FROM replans ORDER BY session, seq`, nil},
	{"aggregates", `SELECT agent, count(*) AS n, sum(seq) AS total, avg(seq) AS mean, min(time) AS first,
		list(DISTINCT type ORDER BY type) AS types FROM events GROUP BY agent ORDER BY agent`, nil},
	{"scalar types", `SELECT 1::TINYINT a, 2::SMALLINT b, 3::INTEGER c, 4::BIGINT d, 5::UTINYINT e, 6::USMALLINT f,
		7::UINTEGER g, 18446744073709551615::UBIGINT h, 1.5::FLOAT i, 2.25::DOUBLE j,
		170141183460469231731687303715884105727::HUGEINT k, (-170141183460469231731687303715884105727::HUGEINT - 1) k2,
		123.45::DECIMAL(5,2) l, -0.001::DECIMAL(18,3) l2, 12345678901234567890.12::DECIMAL(38,2) l3,
		DATE '2024-02-29' m, DATE '1969-12-31' m2, TIME '23:59:59.123456' n, TIMESTAMP '2024-01-01 12:00:00.5' o,
		TIMESTAMPTZ '2024-01-01 12:00:00.000001+00' p, TIMESTAMP_S '2024-01-01 12:00:00' q,
		TIMESTAMP_MS '2024-01-01 12:00:00.123' r, TIMESTAMP_NS '2024-01-01 12:00:00.123456789' s,
		INTERVAL '1 month 2 days 3.5 seconds' t, '\x00\xffab'::BLOB u, '550e8400-e29b-41d4-a716-446655440000'::UUID v,
		true w, NULL x, 'héllo ✓' y, 'nan'::DOUBLE z, '-infinity'::FLOAT z2, '101'::BIT z3, ['a', NULL]::VARCHAR[] z4`, nil},
	{"nested types", `SELECT [1, NULL, 3] a, [[1], [2, 3], []] b, {'x': 1, 'y': [true, NULL]} c, [{'k': 'a'}, NULL] d,
		MAP {'a': 1, 'b': NULL} e, [1, 2, 3]::INTEGER[3] f, NULL::INTEGER[] g, []::VARCHAR[] h,
		'{"a": [1, 2.5, {"b": null}], "c": "d"}'::JSON i, '[1, "x"]'::JSON i2, '"s"'::JSON i3,
		{'t': TIMESTAMPTZ '2020-01-01 00:00:00+00', 'm': MAP {1: [DATE '2020-01-02']}} j`, nil},
	{"positional parameters", `SELECT $1::BIGINT + 1 AS a, $2 AS b, $3::DOUBLE AS c, $4::VARCHAR AS d, $5::TIMESTAMPTZ AS e`,
		[]any{int64(41), "x", 2.5, nil, time.Date(2026, 11, 1, 9, 30, 0, 123000, time.UTC)}},
	{"question marks", `SELECT ? || '!' AS a, ?::INTEGER * 2 AS b`, []any{"hi", int64(21)}},
	{"named parameters", `SELECT count(*) AS n, min(time) AS first FROM events
		WHERE time >= $since AND ($agent IS NULL OR agent = $agent) AND list_contains($types, type)`,
		[]any{sql.Named("since", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)), sql.Named("agent", "skilllite"),
			sql.Named("types", []string{"agent.session.started", "agent.plan.updated"})}},
	{"empty list parameter", `SELECT len($by) AS n, list_contains($by, 'agent') AS has, CASE WHEN list_contains($by, 'day') THEN 1 END AS g`,
		[]any{sql.Named("by", []string{})}},
	{"NULL parameters", `SELECT count(*) AS n FROM events WHERE ($agent IS NULL OR agent = $agent) AND ($since IS NULL OR time >= $since)`,
		[]any{sql.Named("agent", nil), sql.Named("since", nil)}},
	{"empty result", `SELECT * FROM events WHERE false`, nil},
	{"view", `SELECT * FROM sessions ORDER BY session`, nil},
	{"repeated column names", `SELECT 1 AS a, 2 AS a, 'x' AS "A b"`, nil},
	{"describe", `DESCRIBE events`, nil},
	{"from first", `FROM plans ORDER BY session, seq LIMIT 5`, nil},
	{"trailing semicolon and comment", "SELECT 42 AS answer; -- done", nil},
	{"show tables", `SHOW TABLES`, nil},
	{"summarize", `SUMMARIZE SELECT seq, agent FROM events`, nil},
	{"allowed table functions", `SELECT r.range AS i, u.x, t.name FROM range(3) r, unnest(['a', 'b']) u(x),
		pragma_table_info('events') t ORDER BY ALL`, nil},
	{"catalog", `SELECT table_name, column_count FROM duckdb_tables() ORDER BY table_name`, nil},
}

func TestResultsEqualDirect(t *testing.T) {
	st := sampleStore(t, 20)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	local := Local{DB: st.DB()}
	ctx := t.Context()
	for _, c := range equalCases {
		t.Run(c.name, func(t *testing.T) {
			want := direct(t, st.DB(), c.sql, c.args...)
			req, err := NewRequest(c.sql, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []struct {
				name string
				q    Querier
			}{{"service", client}, {"local", local}} {
				got, err := q.q.Query(ctx, req)
				if err != nil {
					t.Fatalf("%s: Query(%q) = %v", q.name, c.sql, err)
				}
				if d := sameResult(got, want); d != "" {
					t.Errorf("%s: %s", q.name, d)
				}
				if got.Truncated {
					t.Errorf("%s: truncated, want complete", q.name)
				}
			}
			body, err := queryJSON(ctx, client, req)
			if err != nil {
				t.Fatalf("queryJSON(%q) = %v", c.sql, err)
			}
			if d := sameJSON(body, want); d != "" {
				t.Errorf("json: %s", d)
			}
		})
	}
}

// sameJSON compares a JSON answer with the JSON form of want.
func sameJSON(body []byte, want *Result) string {
	types := make([]string, len(want.Types))
	for i, t := range want.Types {
		types[i] = t.String()
	}
	rows := make([][]any, len(want.Rows))
	for i, r := range want.Rows {
		rows[i] = make([]any, len(r))
		for j, v := range r {
			rows[i][j] = JSONValue(want.Types[j], v)
		}
	}
	wantBody, err := json.Marshal(jsonAnswer{Columns: want.Columns, Types: types, Rows: rows})
	if err != nil {
		return err.Error()
	}
	var got, exp any
	if err := json.Unmarshal(body, &got); err != nil {
		return fmt.Sprintf("answer is not JSON: %v", err)
	}
	json.Unmarshal(wantBody, &exp)
	if gb, eb := canonical(got), canonical(exp); gb != eb {
		return fmt.Sprintf("answer\n%s\nwant\n%s", gb, eb)
	}
	return ""
}

func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestJSONFormatShape(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	body, err := queryJSON(t.Context(), NewClient(cnc, ""), Request{SQL: `SELECT 1::HUGEINT AS h, 1.50::DECIMAL(4,2) AS d,
		TIMESTAMPTZ '2024-05-01 10:00:00+00' AS t, DATE '2024-05-01' AS day, [1, 2] AS l, NULL AS n, 'nan'::DOUBLE AS f`})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"columns":["h","d","t","day","l","n","f"],"types":["HUGEINT","DECIMAL(4,2)","TIMESTAMPTZ","DATE","INTEGER[]","INTEGER","DOUBLE"],` +
		`"rows":[[1,1.50,"2024-05-01T10:00:00Z","2024-05-01",[1,2],null,"NaN"]],"truncated":false}`
	if string(body) != want {
		t.Fatalf("JSON answer\n%s\nwant\n%s", body, want)
	}
}

func TestMaxRows(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), func(c *Config) { c.MaxRows = 1000 })
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	tests := []struct {
		name          string
		req           Request
		rows          int
		truncated     bool
		format        string
		wantFirstLast [2]int64
	}{
		{"under the limit", Request{SQL: "SELECT i FROM range(999) t(i) ORDER BY i DESC"}, 999, false, "", [2]int64{998, 0}},
		{"at the limit", Request{SQL: "SELECT i FROM range(1000) t(i) ORDER BY i DESC"}, 1000, false, "", [2]int64{999, 0}},
		{"over the service's limit", Request{SQL: "SELECT i FROM range(1000000) t(i) ORDER BY i DESC"}, 1000, true, "", [2]int64{999999, 999000}},
		{"request asks for more than the service allows", Request{SQL: "SELECT i FROM range(5000) t(i)", MaxRows: 4000}, 1000, true, "", [2]int64{0, 999}},
		{"request asks for fewer", Request{SQL: "SELECT i FROM range(5000) t(i)", MaxRows: 10}, 10, true, "", [2]int64{0, 9}},
		{"a statement the limit cannot wrap", Request{SQL: "SELECT i FROM range(5000) t(i);", MaxRows: 10}, 10, true, "", [2]int64{0, 9}},
		{"json", Request{SQL: "SELECT i FROM range(5000) t(i)", MaxRows: 3}, 3, true, FormatJSON, [2]int64{0, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.format == FormatJSON {
				body, err := queryJSON(t.Context(), client, tc.req)
				if err != nil {
					t.Fatal(err)
				}
				if want := `{"columns":["i"],"types":["BIGINT"],"rows":[[0],[1],[2]],"truncated":true}`; string(body) != want {
					t.Fatalf("JSON answer %s, want %s", body, want)
				}
				return
			}
			res, err := client.Query(t.Context(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != tc.rows || res.Truncated != tc.truncated {
				t.Fatalf("%d rows, truncated %v; want %d, %v", len(res.Rows), res.Truncated, tc.rows, tc.truncated)
			}
			first, last := res.Rows[0][0].(int64), res.Rows[len(res.Rows)-1][0].(int64)
			if [2]int64{first, last} != tc.wantFirstLast {
				t.Fatalf("rows %d … %d, want %d … %d (the limit must keep the query's order)", first, last, tc.wantFirstLast[0], tc.wantFirstLast[1])
			}
		})
	}
}

// slowSQL runs for minutes unless interrupted.
const slowSQL = `SELECT count(*) FROM range(100000000000) a(i) WHERE hash(i) % 7 = 3`

func TestTimeoutCancelsQuery(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	svc := startService(t, nc, st.DB(), func(c *Config) { c.Timeout = 5 * time.Second })
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	for _, tc := range []struct {
		name    string
		req     Request
		limit   string
		format  string
		longest time.Duration
	}{
		{"the request's limit", Request{SQL: slowSQL, TimeoutMS: 300}, "300ms", FormatArrow, 0},
		{"the service's limit", Request{SQL: slowSQL}, "5s", FormatArrow, 0},
		{"json", Request{SQL: slowSQL, TimeoutMS: 300}, "300ms", FormatJSON, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			var err error
			if tc.format == FormatJSON {
				_, err = queryJSON(t.Context(), client, tc.req)
			} else {
				_, err = client.Query(t.Context(), tc.req)
			}
			took := time.Since(t0)
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("Query(slow) = %v, want ErrTimeout", err)
			}
			if !strings.Contains(err.Error(), tc.limit) {
				t.Errorf("error %q does not name the limit %s", err, tc.limit)
			}
			// Cancelled, not left to run: DuckDB's interrupt ends it soon
			// after the limit (a generous bound; the query needs minutes).
			if took > 60*time.Second {
				t.Errorf("the answer came after %s", took)
			}
		})
	}
	// The service goes on answering, and its connection was not poisoned.
	res, err := client.Query(t.Context(), Request{SQL: "SELECT count(*) AS n FROM events"})
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("query after time-outs = %v, %v", res, err)
	}
	// The service counts an answer after sending it: wait for the count.
	waitUntil(t, "stats timed_out = 3", func() bool { return svc.Stats()["timed_out"] == 3 })
}

// bigSQL is a result of about rows×60 bytes of Arrow.
func bigSQL(rows int) string {
	return fmt.Sprintf(`SELECT i, i::VARCHAR || '-' || left(repeat('x', 40), (i %% 40)::INTEGER) AS s, i / 3.0 AS f,
		TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i) AS t, CASE WHEN i %% 5 = 0 THEN NULL ELSE [i, i + 1] END AS l
		FROM range(%d) r(i) ORDER BY i`, rows)
}

func TestLargeResultArrivesInChunks(t *testing.T) {
	st := sampleStore(t, 0)
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), MaxPayload: 64 << 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	nc, _ := testkit.Client(t, srv.ClientURL())
	startService(t, nc, st.DB(), func(c *Config) { c.Window = 3; c.BatchRows = 5000 })
	cnc, _ := testkit.Client(t, srv.ClientURL())
	if cnc.MaxPayload() != 64<<10 {
		t.Fatalf("max payload %d, want 64 KiB", cnc.MaxPayload())
	}
	q := bigSQL(50000)
	res, stats, err := NewClient(cnc, "").QueryStats(t.Context(), Request{SQL: q})
	if err != nil {
		t.Fatal(err)
	}
	if d := sameResult(res, direct(t, st.DB(), q)); d != "" {
		t.Fatal(d)
	}
	if stats.Messages < 20 || stats.Bytes < 20*(64<<10-HeaderRoom) {
		t.Fatalf("answer in %d messages of %d bytes, want many chunks under the 64 KiB max payload", stats.Messages, stats.Bytes)
	}
	if per := stats.Bytes / int64(stats.Messages); per > 64<<10 {
		t.Fatalf("%d bytes per message, more than the max payload", per)
	}
	// JSON answers do not stream: too large is an error that says what to do.
	_, err = queryJSON(t.Context(), NewClient(cnc, ""), Request{SQL: q})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), `"arrow"`) {
		t.Fatalf("queryJSON(large) = %v, want ErrTooLarge pointing at arrow", err)
	}
}

func TestManyClientsAtOnce(t *testing.T) {
	st := sampleStore(t, 30)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), func(c *Config) { c.MaxConcurrent = 3 })
	queries := []struct {
		sql  string
		args []any
	}{
		{`SELECT agent, count(*) AS n FROM events WHERE seq >= $min GROUP BY agent ORDER BY agent`, nil},
		{`SELECT session, seq, data FROM events WHERE seq = $min ORDER BY session`, nil},
		{`SELECT session, tools FROM sessions WHERE len(tools) >= $min ORDER BY session`, nil},
		{`SELECT i, i * $min AS j FROM range(20000) t(i)`, nil},
		{`SELECT session, kept FROM replans WHERE replan >= $min ORDER BY session, seq`, nil},
	}
	want := map[string]*Result{}
	for _, q := range queries {
		for m := range 3 {
			want[fmt.Sprint(q.sql, m)] = direct(t, st.DB(), q.sql, sql.Named("min", int64(m)))
		}
	}
	const clients, each = 20, 6
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cnc, err := bus.Connect(bus.ConnConfig{URL: srv.ClientURL(), Name: fmt.Sprint("client-", c)}, nil)
			if err != nil {
				errs <- err
				return
			}
			defer cnc.Close()
			client := NewClient(cnc, "")
			for i := range each {
				q := queries[(c+i)%len(queries)]
				m := (c * i) % 3
				req, _ := NewRequest(q.sql, sql.Named("min", int64(m)))
				res, err := client.Query(context.Background(), req)
				if err != nil {
					errs <- fmt.Errorf("client %d query %d: %w", c, i, err)
					continue
				}
				if d := sameResult(res, want[fmt.Sprint(q.sql, m)]); d != "" {
					errs <- fmt.Errorf("client %d query %d (%s): %s", c, i, q.sql, d)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSeparateServerProcess(t *testing.T) {
	st := sampleStore(t, 10)
	p := testkit.StartNATSProcess(t)
	nc, _ := testkit.Client(t, p.URL())
	startService(t, nc, st.DB(), func(c *Config) { c.Subject = "evosignal.query.lab" })
	cnc, _ := testkit.Client(t, p.URL())
	client := NewClient(cnc, "evosignal.query.lab")
	for _, c := range equalCases[:3] {
		req, _ := NewRequest(c.sql, c.args...)
		res, err := client.Query(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d := sameResult(res, direct(t, st.DB(), c.sql, c.args...)); d != "" {
			t.Errorf("%s: %s", c.name, d)
		}
	}
	q := bigSQL(60000)
	res, stats, err := client.QueryStats(t.Context(), Request{SQL: q})
	if err != nil {
		t.Fatal(err)
	}
	if d := sameResult(res, direct(t, st.DB(), q)); d != "" {
		t.Fatal(d)
	}
	if stats.Messages < 2 {
		t.Errorf("a %d-byte answer in %d message(s), want several under the 1 MiB max payload", stats.Bytes, stats.Messages)
	}
	_, err = NewClient(cnc, "evosignal.query.nobody").Query(t.Context(), Request{SQL: "SELECT 1"})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("query on a subject nobody answers = %v, want ErrUnavailable", err)
	}
}

func TestBadRequests(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	tests := []struct {
		name string
		body string
		want error
	}{
		{"not JSON", `SELECT 1`, ErrBadRequest},
		{"unknown field", `{"sql": "SELECT 1", "limit": 3}`, ErrBadRequest},
		{"no sql", `{"format": "json"}`, ErrBadRequest},
		{"unknown format", `{"sql": "SELECT 1", "format": "csv"}`, ErrBadRequest},
		{"negative limit", `{"sql": "SELECT 1", "max_rows": -1}`, ErrBadRequest},
		{"missing positional", `{"sql": "SELECT $1::INT + $2::INT", "args": [1]}`, ErrBadRequest},
		{"missing named", `{"sql": "SELECT $a::INT + $b::INT", "named": {"a": 1}}`, ErrBadRequest},
		{"unknown typed value", `{"sql": "SELECT $1", "args": [{"type": "geometry", "value": "x"}]}`, ErrBadRequest},
		{"bad timestamp", `{"sql": "SELECT $1", "args": [{"type": "timestamp", "value": "yesterday"}]}`, ErrBadRequest},
		{"SQL error", `{"sql": "SELECT no_such_column FROM events"}`, ErrSQL},
		{"syntax error", `{"sql": "SELEC 1"}`, ErrSQL},
		{"comment only", `{"sql": "-- nothing"}`, ErrBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{FormatArrow, FormatJSON} {
				body := tc.body
				if strings.HasPrefix(body, "{") && !strings.Contains(body, `"format"`) {
					body = strings.Replace(body, "{", `{"format": "`+format+`", `, 1)
				}
				m, err := cnc.RequestWithContext(t.Context(), DefaultSubject, []byte(body))
				if err != nil {
					t.Fatal(err)
				}
				code, desc := m.Header.Get(micro.ErrorCodeHeader), m.Header.Get(micro.ErrorHeader)
				got := errorFromHeader(code, desc)
				if code == "" || !errors.Is(got, tc.want) {
					t.Fatalf("%s: answer %q %q, want code %d", format, code, desc, tc.want.(*Error).Code)
				}
			}
		})
	}
}

func TestServiceDiscovery(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	if _, err := NewClient(cnc, "").Query(t.Context(), Request{SQL: "SELECT 1"}); err != nil {
		t.Fatal(err)
	}
	m, err := cnc.Request("$SRV.INFO."+ServiceName, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info micro.Info
	if err := json.Unmarshal(m.Data, &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != ServiceName || info.Version != Version || len(info.Endpoints) != 1 ||
		info.Endpoints[0].Name != EndpointName || info.Endpoints[0].Subject != DefaultSubject {
		t.Fatalf("service info %+v", info)
	}
	// The service counts an answer after sending it: wait for the count.
	var last []byte
	waitUntil(t, "service stats with one answer of one row", func() bool {
		m, err := cnc.Request("$SRV.STATS."+ServiceName, nil, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		last = m.Data
		var stats micro.Stats
		if err := json.Unmarshal(m.Data, &stats); err != nil {
			t.Fatal(err)
		}
		var data map[string]int64
		ok := len(stats.Endpoints) == 1 && json.Unmarshal(stats.Endpoints[0].Data, &data) == nil && data["answered"] == 1 && data["rows"] == 1
		if !ok {
			t.Logf("service stats %s", last)
		}
		return ok
	})
}

func TestCloseEndsRunningQueries(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	svc := startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	done := make(chan error, 1)
	go func() {
		_, err := client.Query(context.Background(), Request{SQL: slowSQL})
		done <- err
	}()
	waitUntil(t, "the slow query to run", func() bool { return svc.Stats()["running"] == 1 })
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "stopping") {
		t.Fatalf("query running at Close = %v, want ErrUnavailable (stopping)", err)
	}
	// The database is still the ingester's, and usable.
	var n int
	if err := st.DB().QueryRow("SELECT count(*) FROM events").Scan(&n); err != nil || n == 0 {
		t.Fatalf("events after Close: %d, %v", n, err)
	}
}

func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBusy(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	svc := startService(t, nc, st.DB(), func(c *Config) { c.MaxConcurrent, c.MaxQueued = 1, 1 })
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	done := make(chan error, 2)
	for range 2 { // one runs, one waits for the slot
		go func() {
			_, err := client.Query(context.Background(), Request{SQL: slowSQL, TimeoutMS: 1500})
			done <- err
		}()
	}
	waitUntil(t, "a query running and one waiting", func() bool {
		svc.mu.Lock()
		defer svc.mu.Unlock()
		return svc.inflight == 2
	})
	_, err := client.Query(t.Context(), Request{SQL: "SELECT 1"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("third query = %v, want ErrUnavailable (busy)", err)
	}
	for range 2 {
		if err := <-done; !errors.Is(err, ErrTimeout) {
			t.Errorf("slow query = %v, want ErrTimeout", err)
		}
	}
	if _, err := client.Query(t.Context(), Request{SQL: "SELECT 1"}); err != nil {
		t.Fatalf("query once the slots are free: %v", err)
	}
}
