package sqlservice

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// hugeValueSQL builds a 1 GB string: DuckDB allocates it outside its
// memory_limit, and checks for an interrupt only after the call (measured
// on the old code: 2 GiB of RSS for one, 8.27 GiB and 66 s past the 30 s
// limit for four at once).
const hugeValueSQL = `SELECT length(repeat('x', 1000000000)) AS n`

// maxHugeRSS is the most RSS the process may reach answering hugeValueSQL.
const maxHugeRSS = 3 << 29 // 1.5 GiB

// childEnv marks the run of this test binary as TestHugeValuesBounded's
// child, which measures its own peak RSS.
const childEnv = "EVOSIGNAL_SQLSERVICE_HUGE_CHILD"

// TestHugeValuesBounded runs hugeValueSQL alone and four at once through
// the service, in a child process of its own (so that its peak RSS is the
// queries' and not the earlier tests'): each is refused at once with a
// reason, and the process stays under maxHugeRSS.
func TestHugeValuesBounded(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		hugeValuesChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHugeValuesBounded$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var hwm int64 = -1
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "bounds_test.go"); ok {
			if _, kb, ok := strings.Cut(v, "peak RSS kB "); ok {
				hwm, _ = strconv.ParseInt(strings.TrimSpace(kb), 10, 64)
			}
		}
	}
	if hwm < 0 {
		t.Fatalf("the child reported no peak RSS:\n%s", out)
	}
	t.Logf("peak RSS %d MiB", hwm>>10)
	if hwm<<10 > maxHugeRSS {
		t.Fatalf("peak RSS %d MiB, want at most %d MiB", hwm>>10, maxHugeRSS>>20)
	}
}

func hugeValuesChild(t *testing.T) {
	st := sampleStore(t, 2)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	for _, n := range []int{1, 4} {
		var wg sync.WaitGroup
		errs := make([]error, n)
		t0 := time.Now()
		for i := range n {
			wg.Go(func() {
				_, errs[i] = client.Query(t.Context(), Request{SQL: hugeValueSQL})
			})
		}
		wg.Wait()
		took := time.Since(t0)
		for _, err := range errs {
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "repeat()") {
				t.Errorf("%d at once: Query(%s) = %v, want a refusal naming repeat()", n, hugeValueSQL, err)
			}
		}
		if took > 5*time.Second {
			t.Errorf("%d at once: the refusals took %s", n, took)
		}
	}
	t.Logf("peak RSS kB %d", peakRSS(t))
}

// peakRSS is the process's VmHWM in kB.
func peakRSS(tb testing.TB) int64 {
	tb.Helper()
	n, err := testkit.PeakRSS(os.Getpid())
	if err != nil {
		tb.Fatal(err)
	}
	return n >> 10
}

// Values that would be large are refused before they run; small ones are
// answered.
func TestBuiltValueSizes(t *testing.T) {
	db := memDB(t)
	if err := Lockdown(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	local := Local{DB: db}
	for _, tc := range []struct {
		sql    string
		refuse bool
	}{
		{`SELECT repeat('-', 80) AS r`, false},
		{`SELECT lpad('7', 3, '0') AS r, rpad('a', 10, ' ') AS s`, false},
		{`SELECT printf('%05d', 42) AS r, format('{:>8}', 'x') AS s`, false},
		{`SELECT range(10) AS r, generate_series(1, 5) AS s`, false},
		{`SELECT count(*) AS n FROM range(100000000) r(i) WHERE i < 0`, false},
		{`SELECT * FROM repeat('x', 3)`, false},
		{`SELECT repeat(repeat('ab', 100), 100) AS r`, false},
		{`SELECT length(repeat('x', 1000000000)) AS n`, true},
		{`SELECT length(repeat('x', 3000000000)) AS n`, true},
		{`SELECT repeat(repeat('x', 1000), 1000) AS r`, true},
		{`SELECT repeat('x', i) FROM range(3) r(i)`, true},
		{`SELECT repeat(s, 2) FROM (SELECT 'x' AS s)`, true},
		{`SELECT lpad('x', 100000000) AS r`, true},
		{`SELECT rpad('x', $1::INTEGER) AS r`, true},
		{`SELECT bar(5, 0, 10, 10000000) AS r`, true},
		{`SELECT list_resize([1], 100000000) AS r`, true},
		{`SELECT length(range(100000000)) AS r`, true},
		{`SELECT printf('%100000000d', 1) AS r`, true},
		{`SELECT printf('%*d', 100000000, 1) AS r`, true},
		{`SELECT format('{:>100000000}', 'x') AS r`, true},
		{`SELECT format('{:>{}}', 'x', 100000000) AS r`, true},
	} {
		req, _ := NewRequest(tc.sql, int64(5))
		_, err := local.Query(t.Context(), req)
		if tc.refuse && !errors.Is(err, ErrRefused) {
			t.Errorf("Query(%s) = %v, want a refusal", tc.sql, err)
		}
		if !tc.refuse && err != nil {
			t.Errorf("Query(%s) = %v, want an answer", tc.sql, err)
		}
	}
}

// A query past its time limit is answered with ErrTimeout at the limit,
// not when DuckDB would have finished.
func TestTimeLimitHoldsAtTheLimit(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	const limit = 500 * time.Millisecond
	for _, q := range []string{slowSQL, `SELECT count(*) FROM range(100000) a, range(100000) b WHERE a.range * b.range % 7 = 3`} {
		t0 := time.Now()
		_, err := client.Query(t.Context(), Request{SQL: q, TimeoutMS: limit.Milliseconds()})
		took := time.Since(t0)
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("Query(%s) = %v, want ErrTimeout", q, err)
		}
		// The slack is for a loaded machine; the query needs minutes.
		if took > limit+3*time.Second {
			t.Errorf("Query(%s) with a limit of %s answered after %s", q, limit, took)
		}
	}
}

// With -temp-dir set, the files in it stay unreadable: DuckDB's own guard
// allows its temp directory, the service's guard refuses reading files at
// all.
func TestTempDirUnreadable(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "scratch")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "other.csv")
	if err := os.WriteFile(other, []byte("secret,value\nkey,hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenWith(t.Context(), filepath.Join(dir, "evo.duckdb"), store.Options{TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	for _, q := range []string{
		fmt.Sprintf(`SELECT * FROM '%s'`, other),
		fmt.Sprintf(`SELECT * FROM "%s"`, other),
		fmt.Sprintf(`SELECT * FROM read_csv('%s')`, other),
		fmt.Sprintf(`SELECT * FROM read_csv_auto('%s')`, other),
		fmt.Sprintf(`SELECT * FROM read_text('%s')`, other),
		fmt.Sprintf(`SELECT * FROM '%s/*.csv'`, tmp),
		fmt.Sprintf(`SELECT * FROM glob('%s/*')`, tmp),
		fmt.Sprintf(`SELECT (SELECT count(*) FROM '%s') AS n`, other),
		fmt.Sprintf(`WITH t AS (FROM '%s') SELECT * FROM t`, other),
	} {
		res, err := client.Query(t.Context(), Request{SQL: q})
		if !errors.Is(err, ErrRefused) {
			t.Errorf("Query(%s) = %v, %v; want a refusal", q, res, err)
		}
	}
}

// Settings and the paths of the database, its WAL and temp directory are
// not shown to query users.
func TestSettingsAndPathsHidden(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, st.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	for _, q := range []string{
		`SELECT * FROM duckdb_settings()`,
		`SELECT current_setting('temp_directory') AS t`,
		`SELECT current_setting('memory_limit') AS m`,
		`SELECT * FROM duckdb_databases()`,
		`SELECT * FROM pragma_database_list`,
		`SELECT * FROM pragma_database_list()`,
		`SELECT * FROM duckdb_settings`,
		`SELECT * FROM duckdb_databases`,
		`SELECT * FROM duckdb_extensions()`,
		`SELECT * FROM duckdb_temporary_files()`,
		`SELECT (SELECT path FROM duckdb_databases() LIMIT 1) AS p`,
	} {
		res, err := client.Query(t.Context(), Request{SQL: q})
		if !errors.Is(err, ErrRefused) {
			t.Errorf("Query(%s) = %v, %v; want a refusal", q, res, err)
		}
	}
	// What a query can still ask is the catalog, with no path in it.
	res, err := client.Query(context.Background(), Request{SQL: `SELECT database_name, schema_name, table_name FROM duckdb_tables() ORDER BY ALL`})
	if err != nil || len(res.Rows) == 0 {
		t.Fatalf("catalog query = %v, %v", res, err)
	}
	for _, row := range res.Rows {
		if s := fmt.Sprint(row...); strings.Contains(s, filepath.Dir(st.Path())) {
			t.Errorf("catalog row %v shows the database's directory", row)
		}
	}
}
