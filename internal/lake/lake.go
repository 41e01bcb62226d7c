// Package lake seals what an ingester's DuckDB holds into an Iceberg lake,
// and attaches a lake's current snapshot to a DuckDB for the analyzers.
//
// The embedded lake is one directory: a SQLite catalog (catalog.db, the
// Iceberg SQL catalog of iceberg-go) and a file warehouse (warehouse/)
// beside it. Each shard (one ingester and its database) seals into it the
// tables the analyzers read: the event log and the typed tables, appended
// incrementally, and the stored facts, replaced per shard (see Seal). The
// data files are Parquet written by DuckDB, added to the Iceberg tables as
// they are (iceberg-go's AddFiles); a commit records in its snapshot's
// summary how far every shard has sealed the table, so a restarted or
// retried seal neither loses nor duplicates a file.
//
// Reading (Attach) plans a scan of each table's current snapshot with
// iceberg-go and creates a DuckDB view over its data files, named like the
// database's table and of its types, and then the views of queries/views:
// the analyzers' SQL runs over a lake unchanged.
package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	_ "modernc.org/sqlite" // the catalog's SQLite driver, pure Go
)

// Format is the version of the lake's layout this package writes and
// reads: its tables, their columns' types and the properties that record
// watermarks. A lake of another format is refused (*FormatError).
const Format = 2

// namespace is the Iceberg namespace of every table of the lake.
const namespace = "evosignal"

// Namespace properties: the lake's format, and which evosignal wrote it
// first (for the error that refuses it).
const (
	formatProp  = "evosignal.lake-format"
	writtenProp = "evosignal.written-by"
)

// Writer names this evosignal in a new lake's written-by property; the
// commands set it to their version before they open a lake.
var Writer = "evosignal"

// FormatError is a lake written in a format this evosignal does not read.
type FormatError struct {
	Dir       string
	Got       int    // the lake's format
	WrittenBy string // the evosignal that created the lake
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("lake %s is format %d (written by %s); this evosignal (%s) reads and writes lake format %d",
		e.Dir, e.Got, e.WrittenBy, Writer, Format)
}

// Lake is an open lake: its catalog and warehouse.
type Lake struct {
	dir       string
	warehouse string
	db        *sql.DB
	cat       *sqlcat.Catalog
	stage     string // where seals write their files first (StageIn); "": into the warehouse
}

// CatalogFile is the SQLite catalog's file in a lake's directory: its
// presence is what makes a directory a lake.
const CatalogFile = "catalog.db"

// commits serialises the commits of one process to the lakes it opened,
// by directory: iceberg-go cannot append to one table from several writers
// at once (a second commit fails: "branch main has changed"). Commits of
// other processes are serialised by the catalog's compare-and-swap and
// retried (commit).
var commits sync.Map // absolute dir → *sync.Mutex

// Open opens the lake in dir, creating the directory, the catalog and the
// namespace if they are missing. A lake of another format is a
// *FormatError.
func Open(ctx context.Context, dir string) (*Lake, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	wh := filepath.Join(abs, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	// WAL, a busy timeout and immediate transactions on every pooled
	// connection: several processes may commit to one catalog, and a
	// deferred transaction that reads before it writes fails at once
	// (SQLITE_BUSY) when another has written meanwhile, whatever the
	// timeout.
	dsn := "file:" + filepath.Join(abs, CatalogFile) + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("lake: catalog: %w", err)
	}
	cat, err := sqlcat.NewCatalog("evosignal", db, sqlcat.SQLite, iceberg.Properties{
		"warehouse": "file://" + filepath.ToSlash(wh),
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("lake: catalog: %w", err)
	}
	l := &Lake{dir: abs, warehouse: wh, db: db, cat: cat}
	if err := l.checkFormat(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// checkFormat creates the namespace with this format, or checks the
// format it records.
func (l *Lake) checkFormat(ctx context.Context) error {
	ns := table.Identifier{namespace}
	ok, err := l.cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return fmt.Errorf("lake: %w", err)
	}
	if !ok {
		err := l.cat.CreateNamespace(ctx, ns, iceberg.Properties{
			formatProp:  strconv.Itoa(Format),
			writtenProp: Writer,
		})
		if err == nil || errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return l.checkFormat(ctx)
		}
		return fmt.Errorf("lake: %w", err)
	}
	props, err := l.cat.LoadNamespaceProperties(ctx, ns)
	if err != nil {
		return fmt.Errorf("lake: %w", err)
	}
	got, err := strconv.Atoi(props[formatProp])
	if err != nil || got != Format {
		return &FormatError{Dir: l.dir, Got: got, WrittenBy: props[writtenProp]}
	}
	return nil
}

// Dir is the lake's directory.
func (l *Lake) Dir() string { return l.dir }

// Close closes the catalog.
func (l *Lake) Close() error {
	err := l.cat.Close()
	return errors.Join(err, l.db.Close())
}

// mutex is the lock of this process's commits to the lake.
func (l *Lake) mutex() *sync.Mutex {
	m, _ := commits.LoadOrStore(l.dir, &sync.Mutex{})
	return m.(*sync.Mutex)
}

// ident is the Iceberg identifier of the lake's table name.
func ident(name string) table.Identifier { return table.Identifier{namespace, name} }

// Tables returns the names of the database's tables a seal writes into the
// lake, in the order it writes them (the lake's own seals table aside).
func Tables() []string {
	var out []string
	for _, t := range tables {
		if t.mode != marker {
			out = append(out, t.name)
		}
	}
	return out
}
