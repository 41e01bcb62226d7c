package sqlservice

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// WriteArrowFile writes res as an Arrow IPC file (the random-access format,
// .arrow or .feather), with the schema of Schema.
func WriteArrowFile(w io.Writer, res *Result) error {
	mem := memory.NewGoAllocator()
	schema := Schema(res.Columns, res.Types)
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		return fmt.Errorf("arrow file: %w", err)
	}
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	app := make([]appendFunc, len(res.Types))
	for i, t := range res.Types {
		app[i] = newAppender(t, rb.Field(i))
	}
	const batch = 64 * 1024
	for start := 0; start < len(res.Rows); start += batch {
		for _, row := range res.Rows[start:min(start+batch, len(res.Rows))] {
			for i, v := range row {
				if err := app[i](v); err != nil {
					return fmt.Errorf("arrow file: column %q: %w", res.Columns[i], err)
				}
			}
		}
		rec := rb.NewRecordBatch()
		err := fw.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("arrow file: %w", err)
		}
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("arrow file: %w", err)
	}
	return nil
}

// WriteParquet writes res to the Parquet file path, through an in-memory
// DuckDB database (DuckDB's own Parquet writer): the rows go into a table of
// the result's types — textual types (ENUM, UNION, JSON, …) as VARCHAR,
// HUGEINT as DECIMAL(38,0) — which is copied to the file.
func WriteParquet(ctx context.Context, path string, res *Result) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	defer conn.Close()
	stored := make([]*Type, len(res.Types))
	cols := make([]string, len(res.Columns))
	seen := map[string]bool{}
	for i, t := range res.Types {
		stored[i] = storable(t)
		name := res.Columns[i]
		for n := 1; seen[strings.ToLower(name)]; n++ {
			name = res.Columns[i] + "_" + strconv.Itoa(n)
		}
		seen[strings.ToLower(name)] = true
		cols[i] = ident(name) + " " + stored[i].String()
	}
	// The column names and types come from a result (types in the notation
	// ParseType checked), quoted: the text is assembled from no SQL input.
	if _, err := conn.ExecContext(ctx, "CREATE TABLE result ("+strings.Join(cols, ", ")+")"); err != nil {
		return fmt.Errorf("parquet: create the staging table: %w", err)
	}
	err = conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", "result")
		if err != nil {
			return err
		}
		vals := make([]driver.Value, len(stored))
		for r, row := range res.Rows {
			for i, v := range row {
				vals[i] = storeValue(res.Types[i], v)
			}
			if err := a.AppendRow(vals...); err != nil {
				a.Close()
				return fmt.Errorf("row %d: %w", r+1, err)
			}
		}
		return a.Close()
	})
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	// DuckDB takes no parameter for a COPY target: the path is the caller's
	// own file name, quoted as a string literal.
	copySQL := "COPY result TO '" + strings.ReplaceAll(path, "'", "''") + "' (FORMAT parquet)"
	if _, err := conn.ExecContext(ctx, copySQL); err != nil {
		return fmt.Errorf("parquet: write %s: %w", path, err)
	}
	return nil
}

func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// storable is t with its textual parts as VARCHAR.
func storable(t *Type) *Type {
	if t.textual() || t.Name == "SQLNULL" {
		return &Type{Name: "VARCHAR"}
	}
	if t.Name == "HUGEINT" { // DuckDB writes HUGEINT to Parquet as DOUBLE
		return &Type{Name: "DECIMAL", Width: 38}
	}
	c := *t
	switch t.Name {
	case "LIST", "ARRAY":
		c.Elem = storable(t.Elem)
	case "MAP":
		c.Key, c.Value = storable(t.Key), storable(t.Value)
	case "STRUCT":
		c.Fields = make([]Field, len(t.Fields))
		for i, f := range t.Fields {
			c.Fields[i] = Field{Name: f.Name, Type: storable(f.Type)}
		}
	}
	return &c
}

// storeValue is v as a value of storable(t).
func storeValue(t *Type, v any) any {
	if v == nil {
		return nil
	}
	if t.textual() {
		s, err := toText(t, v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return s
	}
	switch t.Name {
	case "LIST", "ARRAY":
		if xs, ok := v.([]any); ok {
			out := make([]any, len(xs))
			for i, x := range xs {
				out[i] = storeValue(t.Elem, x)
			}
			return out
		}
	case "STRUCT":
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for _, f := range t.Fields {
				out[f.Name] = storeValue(f.Type, m[f.Name])
			}
			return out
		}
	case "MAP":
		if m, ok := v.(duckdb.OrderedMap); ok {
			out := duckdb.OrderedMap{}
			vals := m.Values()
			for i, k := range m.Keys() {
				out.Set(storeValue(t.Key, k), storeValue(t.Value, vals[i]))
			}
			return out
		}
	}
	return v
}
