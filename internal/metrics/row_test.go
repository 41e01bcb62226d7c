package metrics

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// The reader takes integers as DuckDB gives them (BIGINT, HUGEINT as
// *big.Int, UBIGINT as uint64) and reports one outside int64 range instead
// of truncating or wrapping it.
func TestRowIntegersFromDuckDB(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	src := DB{DB: db}
	tests := []struct {
		name  string
		query string
		want  int64
		err   string
	}{
		{name: "bigint", query: "SELECT 9223372036854775807::BIGINT AS n", want: 9223372036854775807},
		{name: "hugeint in range", query: "SELECT (-9223372036854775808)::HUGEINT AS n", want: -9223372036854775808},
		{name: "ubigint in range", query: "SELECT 42::UBIGINT AS n", want: 42},
		{name: "hugeint too large", query: "SELECT 9223372036854775808::HUGEINT AS n", err: "int64 range"},
		{name: "ubigint too large", query: "SELECT 18446744073709551615::UBIGINT AS n", err: "int64 range"},
		{name: "list element too large", query: "SELECT [1, 9223372036854775808]::HUGEINT[] AS n", err: "int64 range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := src.Query(context.Background(), tt.query)
			if err != nil {
				t.Fatal(err)
			}
			var got int64
			err = eachRow(tbl, func(r *row) error {
				if strings.Contains(tt.name, "list") {
					r.ints("n")
					return nil
				}
				got = r.int("n")
				return nil
			})
			switch {
			case tt.err == "" && (err != nil || got != tt.want):
				t.Fatalf("int(n) = %d, %v; want %d", got, err, tt.want)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("int(n) = %d, %v; want an error containing %q", got, err, tt.err)
			}
		})
	}
}
