package sqlservice

import (
	"bytes"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// fileCase is a result with most types, nested ones included.
const fileCase = `SELECT i, i::VARCHAR AS s, i / 4 AS f, [i, NULL] AS l, {'a': i, 'b': [true]} AS st, MAP {'k': i} AS m,
	TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i) AS t, DATE '2026-01-01' + i::INTEGER AS d, (i * 1000)::HUGEINT AS h,
	(i / 8)::DECIMAL(9,3) AS dec, '{"x": 1}'::JSON AS j, CASE WHEN i % 3 = 0 THEN NULL ELSE 'x' END AS n, INTERVAL 1 DAY AS iv,
	'\xAA'::BLOB AS b
	FROM range(70000) r(i) ORDER BY i`

func TestWriteArrowFile(t *testing.T) {
	db := memDB(t)
	want, err := (Local{DB: db}).Query(t.Context(), Request{SQL: fileCase})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteArrowFile(&buf, want); err != nil {
		t.Fatal(err)
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()), ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	cols, types, err := typesOf(fr.Schema())
	if err != nil {
		t.Fatal(err)
	}
	got := &Result{Columns: cols, Types: types}
	for i := range fr.NumRecords() {
		rec, err := fr.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		if got.Rows, err = recordRows(got.Rows, rec, types); err != nil {
			t.Fatal(err)
		}
	}
	if fr.NumRecords() < 2 {
		t.Errorf("%d record batches, want the rows in several", fr.NumRecords())
	}
	if d := sameResult(got, want); d != "" {
		t.Fatal(d)
	}
}

func TestWriteParquet(t *testing.T) {
	db := memDB(t)
	want, err := (Local{DB: db}).Query(t.Context(), Request{SQL: fileCase})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "it's.parquet")
	if err := WriteParquet(t.Context(), path, want); err != nil {
		t.Fatal(err)
	}
	got := direct(t, db, "SELECT * FROM read_parquet($1) ORDER BY i", path)
	// JSON travels as text in Parquet (VARCHAR): compare the others.
	j := want.Columns[10]
	if j != "j" {
		t.Fatalf("column 10 is %s", j)
	}
	for _, r := range got.Rows {
		if r[10] != `{"x":1}` {
			t.Fatalf("JSON column in Parquet = %v", r[10])
		}
		r[10] = map[string]any{"x": 1.0}
	}
	got.Types[10] = want.Types[10]
	// HUGEINT travels as DECIMAL(38,0).
	if got.Types[8].String() != "DECIMAL(38,0)" {
		t.Fatalf("HUGEINT in Parquet is %s, want DECIMAL(38,0)", got.Types[8])
	}
	for _, r := range got.Rows {
		d := r[8].(duckdb.Decimal)
		r[8] = d.Value
	}
	got.Types[8] = want.Types[8]
	if d := sameResult(got, want); d != "" {
		t.Fatal(d)
	}
}

func memDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
