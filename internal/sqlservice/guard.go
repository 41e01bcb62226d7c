package sqlservice

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// The guard has three layers, each enough to stop what it is for and none
// a list of forbidden keywords:
//
//  1. The statement: DuckDB parses and prepares the text; it must be exactly
//     one statement of type SELECT (Prepare refuses several, the prepared
//     statement reports its type). DuckDB's own parse tree of it
//     (json_serialize_sql) must name only table functions from an
//     allow-list: a few SELECTable table functions change state (checkpoint,
//     enable_profiling, enable_logging, disable_peg_parser, …) or run SQL
//     given as text (query, query_table, json_execute_serialized_sql), and
//     the allow-list keeps any new one out as well.
//  2. The transaction: every query runs inside a transaction that is always
//     rolled back, so a read that somehow wrote would leave nothing behind.
//  3. The database (Lockdown): external access is off (no file outside the
//     database, no extension, no ATTACH) and the configuration is locked (no
//     SET, RESET or PRAGMA that changes a setting), for every connection.

var (
	//go:embed sql/lockdown.sql
	lockdownSQL string
	//go:embed sql/lockdown_state.sql
	lockdownStateSQL string
	//go:embed sql/parse_tree.sql
	parseTreeSQL string
	//go:embed sql/limit.sql
	limitSQL string
	//go:embed sql/table_functions.sql
	tableFunctionsSQL string
)

// tableFunctions are the names of DuckDB's table functions, read once
// (they are the binary's, the same for every database).
var tableFunctions struct {
	once  sync.Once
	names map[string]bool
	err   error
}

func tableFunctionNames(ctx context.Context, conn *duckdb.Conn) (map[string]bool, error) {
	tableFunctions.once.Do(func() {
		rows, err := conn.QueryContext(ctx, tableFunctionsSQL, nil)
		if err != nil {
			tableFunctions.err = err
			return
		}
		defer rows.Close()
		names := map[string]bool{}
		vals := make([]driver.Value, 1)
		for {
			err := rows.Next(vals)
			if err == io.EOF {
				break
			}
			if err != nil {
				tableFunctions.err = err
				return
			}
			if s, ok := vals[0].(string); ok {
				names[s] = true
			}
		}
		tableFunctions.names = names
	})
	if tableFunctions.err != nil {
		return nil, newError(500, fmt.Sprintf("read the names of the table functions: %v", tableFunctions.err))
	}
	return tableFunctions.names, nil
}

// Lockdown turns off external access and locks the configuration of the
// database behind db (sql/lockdown.sql): from then on no connection of it —
// the ingester's included — can read or write a file outside the database,
// install or load an extension, attach a database, or change a setting. It
// cannot be undone while the database is open. Calling it again is a no-op.
//
// The ingester needs none of these: it writes its own database file, WAL
// and temp directory, which stay allowed.
func Lockdown(ctx context.Context, db *sql.DB) error {
	locked, err := lockedDown(ctx, db)
	if err != nil || locked {
		return err
	}
	if _, err := db.ExecContext(ctx, lockdownSQL); err != nil {
		return fmt.Errorf("lock down the database: %w", err)
	}
	if locked, err = lockedDown(ctx, db); err == nil && !locked {
		err = errors.New("lock down the database: settings did not take")
	}
	return err
}

func lockedDown(ctx context.Context, db *sql.DB) (bool, error) {
	var locked bool
	if err := db.QueryRowContext(ctx, lockdownStateSQL).Scan(&locked); err != nil {
		return false, fmt.Errorf("read the database's guard settings: %w", err)
	}
	return locked, nil
}

// allowedTableFunctions are the table functions a query may call: they
// generate rows or describe the database, and change nothing. Everything
// else is refused — file readers (which the database guard would stop
// anyway), functions that change settings or state, and functions that run
// SQL given as text.
var allowedTableFunctions = map[string]bool{
	"range": true, "generate_series": true, "unnest": true, "repeat": true, "repeat_row": true,
	"json_each": true, "json_tree": true,
	"duckdb_columns": true, "duckdb_constraints": true,
	"duckdb_dependencies": true, "duckdb_functions": true,
	"duckdb_indexes": true, "duckdb_keywords": true, "duckdb_schemas": true,
	"duckdb_sequences": true, "duckdb_tables": true,
	"duckdb_types": true, "duckdb_views": true, "duckdb_memory": true,
	"duckdb_optimizers": true,
	"pragma_table_info": true, "pragma_storage_info": true, "pragma_database_size": true,
	"pragma_version": true, "pragma_show": true, "pragma_collations": true,
	"pragma_platform": true, "pragma_metadata_info": true, "pragma_user_agent": true,
	"pg_timezone_names": true, "icu_calendar_names": true,
}

// refusedFunctions are the scalar functions that change state (sequences,
// the random seed, the log) or show the ingester's settings, among them
// the paths of its database, WAL and temp directory. The table functions
// that show them (duckdb_settings, duckdb_databases, pragma_database_list,
// duckdb_extensions, duckdb_temporary_files) are left out of
// allowedTableFunctions for the same reason.
var refusedFunctions = map[string]bool{
	"nextval": true, "currval": true, "setseed": true, "write_log": true,
	"current_setting": true,
}

// statementNames name the statement types in refusals.
var statementNames = map[duckdb.StmtType]string{
	duckdb.STATEMENT_TYPE_INSERT: "INSERT", duckdb.STATEMENT_TYPE_UPDATE: "UPDATE",
	duckdb.STATEMENT_TYPE_DELETE: "DELETE", duckdb.STATEMENT_TYPE_CREATE: "CREATE",
	duckdb.STATEMENT_TYPE_DROP: "DROP", duckdb.STATEMENT_TYPE_ALTER: "ALTER",
	duckdb.STATEMENT_TYPE_ATTACH: "ATTACH", duckdb.STATEMENT_TYPE_DETACH: "DETACH",
	duckdb.STATEMENT_TYPE_COPY: "COPY", duckdb.STATEMENT_TYPE_EXPORT: "EXPORT",
	duckdb.STATEMENT_TYPE_PRAGMA: "PRAGMA", duckdb.STATEMENT_TYPE_SET: "SET",
	duckdb.STATEMENT_TYPE_VARIABLE_SET: "SET VARIABLE", duckdb.STATEMENT_TYPE_LOAD: "LOAD/INSTALL",
	duckdb.STATEMENT_TYPE_EXTENSION: "extension", duckdb.STATEMENT_TYPE_CALL: "CALL",
	duckdb.STATEMENT_TYPE_VACUUM: "VACUUM", duckdb.STATEMENT_TYPE_TRANSACTION: "transaction",
	duckdb.STATEMENT_TYPE_PREPARE: "PREPARE", duckdb.STATEMENT_TYPE_EXECUTE: "EXECUTE",
	duckdb.STATEMENT_TYPE_EXPLAIN: "EXPLAIN", duckdb.STATEMENT_TYPE_ANALYZE: "ANALYZE",
	duckdb.STATEMENT_TYPE_CREATE_FUNC: "CREATE FUNCTION",
}

func refused(format string, a ...any) *Error {
	return newError(403, "refused: "+fmt.Sprintf(format, a...))
}

// sqlError classifies an error DuckDB returned while preparing or running
// a query: its guard's permission errors are refusals, the rest SQL errors.
func sqlError(err error) *Error {
	msg := err.Error()
	var de *duckdb.Error
	if errors.As(err, &de) && de.Type == duckdb.ErrorTypePermission ||
		strings.Contains(msg, "Permission Error") ||
		strings.Contains(msg, "configuration has been locked") {
		return refused("%s", msg)
	}
	return newError(422, msg)
}

// prepare prepares q as exactly one statement and checks that it is a
// SELECT.
func prepare(conn *duckdb.Conn, q string) (*duckdb.Stmt, error) {
	st, err := conn.Prepare(q)
	if err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "multi-statement"):
			return nil, refused("a query is exactly one SELECT statement; this text holds several")
		case strings.Contains(msg, "empty query"):
			return nil, newError(400, "empty query: no statement in the text")
		}
		return nil, sqlError(err)
	}
	ds := st.(*duckdb.Stmt)
	t, err := ds.StatementType()
	if err != nil {
		ds.Close()
		return nil, sqlError(err)
	}
	if t != duckdb.STATEMENT_TYPE_SELECT {
		name := statementNames[t]
		if name == "" {
			name = "type " + strconv.Itoa(int(t))
		}
		ds.Close()
		return nil, refused("only SELECT statements are answered; this is a %s statement", name)
	}
	return ds, nil
}

// notSelect begins the tree check's refusal of a statement that is not a
// SELECT, which preparing it names the type of.
const notSelect = "only plain SELECT statements are answered"

// checkFunctions reads DuckDB's parse tree of q and refuses table functions
// outside the allow-list and functions that change state.
func checkFunctions(ctx context.Context, conn *duckdb.Conn, q string) error {
	rows, err := conn.QueryContext(ctx, parseTreeSQL, []driver.NamedValue{{Ordinal: 1, Value: q}})
	if err != nil {
		return sqlError(err)
	}
	defer rows.Close()
	vals := make([]driver.Value, 1)
	if err := rows.Next(vals); err != nil {
		if err == io.EOF {
			err = errors.New("no parse tree")
		}
		return sqlError(err)
	}
	tree, ok := vals[0].(map[string]any)
	if !ok {
		return newError(500, fmt.Sprintf("parse tree of type %T", vals[0]))
	}
	if failed, _ := tree["error"].(bool); failed {
		msg, _ := tree["error_message"].(string)
		if strings.Contains(msg, "Only SELECT") {
			return refused("%s (%s)", notSelect, msg)
		}
		// A syntax error: preparing the query reports it. Should the query
		// prepare after all, it stays refused.
		return newError(422, msg)
	}
	stmts, _ := tree["statements"].([]any)
	if len(stmts) == 0 {
		return newError(400, "empty query: no statement in the text")
	}
	if len(stmts) != 1 {
		return refused("a query is exactly one SELECT statement; this text holds %d", len(stmts))
	}
	tables, scalars, files, names := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	walkFunctions(tree, tables, scalars, files, names, 0)
	if len(names) > 0 {
		known, err := tableFunctionNames(ctx, conn)
		if err != nil {
			return err
		}
		for n := range names {
			if known[n] {
				tables[n] = true // called as FROM name
			}
		}
	}
	if len(files) > 0 {
		return refused("the query reads %s as a file: a query reads only the database's tables and views", quoteSorted(files))
	}
	if err := checkSizes(tree); err != nil {
		return err
	}
	var bad []string
	for name := range tables {
		if !allowedTableFunctions[name] {
			bad = append(bad, name+"()")
		}
	}
	for name := range scalars {
		if refusedFunctions[name] {
			bad = append(bad, name+"()")
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return refused("the query calls %s, which may change state or read outside the database", strings.Join(bad, ", "))
	}
	return nil
}

// walkFunctions collects the names of the table functions and of all
// function calls in a parse tree, the table names DuckDB would read as
// files (fileLike), and the other table names.
func walkFunctions(v any, tables, scalars, files, names map[string]bool, depth int) {
	if depth > 10000 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "BASE_TABLE" {
			if name, ok := x["table_name"].(string); ok && fileLike(name) {
				files[name] = true
			} else if ok {
				names[strings.ToLower(name)] = true
			}
		}
		if x["type"] == "TABLE_FUNCTION" {
			if fn, ok := x["function"].(map[string]any); ok {
				if name, ok := fn["function_name"].(string); ok {
					tables[strings.ToLower(name)] = true
				}
			}
		}
		if x["class"] == "FUNCTION" {
			if name, ok := x["function_name"].(string); ok {
				scalars[strings.ToLower(name)] = true
			}
		}
		for _, e := range x {
			walkFunctions(e, tables, scalars, files, names, depth+1)
		}
	case []any:
		for _, e := range x {
			walkFunctions(e, tables, scalars, files, names, depth+1)
		}
	}
}

// fileLike reports whether a table name is one DuckDB's replacement scans
// may read as a file or glob (FROM 'dir/x.csv', FROM '*.parquet'): the
// database guard stops files outside the database, but not those in its
// temp directory. No table or view of the database has such a name.
func fileLike(name string) bool {
	return strings.ContainsAny(name, "/\\.*?~:[{")
}

func quoteSorted(set map[string]bool) string {
	var names []string
	for n := range set {
		names = append(names, strconv.Quote(n))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// limited wraps q in sql/limit.sql.
func limited(q string, limit int64) string {
	s := strings.Replace(limitSQL, "{{limit}}", strconv.FormatInt(limit, 10), 1)
	return strings.Replace(s, "{{query}}", q, 1)
}
