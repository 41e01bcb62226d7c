// Package lake seals what an ingester's DuckDB holds into an Iceberg lake,
// and attaches a lake's current snapshot to a DuckDB for the analyzers.
//
// The embedded lake is one directory: a SQLite catalog (catalog.db, the
// Iceberg SQL catalog of iceberg-go) and a file warehouse (warehouse/)
// beside it. Beyond one machine the catalog is PostgreSQL's (the same
// Iceberg SQL catalog) and the warehouse an S3 bucket, named once, when
// the lake is created, and kept in the catalog (its namespace's
// location). Each shard (one ingester and its database) seals into it the
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
// the analyzers' SQL runs over a lake unchanged. Data files in S3 are
// copied into a local cache first (Options.Cache).
package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// warehouses
	"github.com/apache/iceberg-go/table"
	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL catalog's driver
	_ "modernc.org/sqlite"             // the SQLite catalog's driver, pure Go
)

// Format is the version of the lake's layout this package writes and
// reads: its tables, their columns' types and the properties that record
// watermarks. A lake of another format is refused (*FormatError).
const Format = 3

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
	name  string // the lake as messages name it: its directory, or its catalog's URI without the password
	key   string // the lake's own name, for this process's commit lock
	db    *sql.DB
	cat   *sqlcat.Catalog
	props iceberg.Properties // the catalog's, with the warehouse's client settings (s3.*)
	// base is the URI of the namespace's location: every table of the
	// lake is base/TABLE, its data files base/TABLE/data/FILE.
	base  string
	fs    icebergio.IO // the warehouse's file system, for a remote warehouse (nil: a local one)
	cache string       // where Attach copies a remote warehouse's files
	stage string       // where seals write their files first (StageIn); "": into a local warehouse, a temporary directory for a remote one
	temp  bool         // stage is a temporary directory of the lake's own, removed on Close
}

// Options are how Open opens a lake.
type Options struct {
	// Warehouse is where a new lake on a PostgreSQL catalog keeps its
	// files: s3://BUCKET/PREFIX or a directory. The lake records it (the
	// location of its namespace): later opens need none, and one that
	// names another is an error. A lake in a directory has its warehouse
	// inside it.
	Warehouse string
	// Cache is the directory Attach copies a remote warehouse's data
	// files into for DuckDB to read (its S3 support is an extension this
	// build cannot download); default: the user's cache directory's
	// evosignal/lake. Data files are never rewritten (each name is a
	// seal's own), so a copy there is reused as long as it has the file's
	// size.
	Cache string
	// Create makes Open create a lake that is not there (a writer); a
	// reader gets an error naming what it looked for.
	Create bool
}

// CatalogFile is the SQLite catalog's file in a lake's directory: its
// presence is what makes a directory a lake.
const CatalogFile = "catalog.db"

// locationProp is the Iceberg namespace property that holds where its
// tables are (a table's default location is locationProp/TABLE).
const locationProp = "location"

// commits serialises the commits of one process to the lakes it opened,
// by lake: iceberg-go cannot append to one table from several writers at
// once (a second commit fails: "branch main has changed"). Commits of
// other processes are serialised by the catalog's compare-and-swap and
// retried (commit).
var commits sync.Map // lake key → *sync.Mutex

// IsCatalogURI tells whether a lake's name is a catalog's URI
// (postgres://…) rather than a directory.
func IsCatalogURI(uri string) bool {
	return strings.HasPrefix(uri, "postgres://") || strings.HasPrefix(uri, "postgresql://")
}

// Open opens the lake uri names: a directory (the embedded lake: a
// SQLite catalog and a file warehouse in it) or postgres://… (a
// PostgreSQL catalog, its warehouse Options.Warehouse). A lake that is
// not there is created with o.Create, else an error; a lake of another
// format is a *FormatError.
func Open(ctx context.Context, uri string, o Options) (*Lake, error) {
	var l *Lake
	var err error
	if IsCatalogURI(uri) {
		l, err = openPostgres(ctx, uri, o)
	} else {
		l, err = openDir(ctx, uri, o)
	}
	if err != nil {
		return nil, err
	}
	if err := l.checkFormat(ctx, o); err != nil {
		l.Close()
		return nil, err
	}
	if l.cache = o.Cache; l.cache == "" && l.fs != nil {
		dir, err := os.UserCacheDir()
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("lake %s: a cache for the warehouse's files: %w (give one)", l.name, err)
		}
		l.cache = filepath.Join(dir, "evosignal", "lake")
	}
	return l, nil
}

// openDir opens the embedded lake in dir.
func openDir(ctx context.Context, dir string, o Options) (*Lake, error) {
	if u, err := url.Parse(dir); err == nil && len(u.Scheme) > 1 {
		return nil, fmt.Errorf("lake %s: want a directory or a postgres:// catalog (an S3 warehouse goes with a PostgreSQL catalog: -lake postgres://… -lake-warehouse %s)", dir, dir)
	}
	if o.Warehouse != "" {
		return nil, fmt.Errorf("lake %s: a lake in a directory keeps its warehouse inside it; a warehouse of its own (%s) goes with a postgres:// catalog", dir, o.Warehouse)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	if !o.Create {
		// Reading opens no new lake: a mistyped dir is an error, not an
		// empty lake left behind.
		if _, err := os.Stat(filepath.Join(abs, CatalogFile)); err != nil {
			return nil, fmt.Errorf("lake %s: no lake there (%w); ingest -file F -lake DIR makes one", dir, err)
		}
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
	props := iceberg.Properties{"warehouse": "file://" + filepath.ToSlash(wh)}
	cat, err := sqlcat.NewCatalog("evosignal", db, sqlcat.SQLite, props)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("lake: catalog: %w", err)
	}
	return &Lake{name: dir, key: abs, db: db, cat: cat, props: props,
		base: "file://" + filepath.ToSlash(filepath.Join(wh, namespace+".db"))}, nil
}

// openPostgres opens the catalog of a lake in PostgreSQL: the warehouse
// is the location its namespace records (checkFormat).
func openPostgres(ctx context.Context, uri string, o Options) (*Lake, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("lake: catalog %q: %w", uri, err)
	}
	name := u.Redacted()
	db, err := sql.Open("pgx", uri)
	if err != nil {
		return nil, fmt.Errorf("lake %s: catalog: %w", name, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("lake %s: catalog: %w", name, err)
	}
	props := s3Props()
	cat, err := newPostgresCatalog(ctx, db, props)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("lake %s: catalog: %w", name, err)
	}
	return &Lake{name: name, key: uri, db: db, cat: cat, props: props}, nil
}

// catalogLock is the PostgreSQL advisory lock key under which a process
// opens the catalog ("evosignal" in ASCII, truncated to 8 bytes).
const catalogLock int64 = 0x65766f7369676e61

// newPostgresCatalog opens iceberg-go's SQL catalog, which creates its
// tables if missing with CREATE TABLE IF NOT EXISTS. In PostgreSQL that
// is not safe against itself: two processes creating the same table at
// once fail on the catalog's unique indexes (duplicate_table,
// duplicate_object on the row type, unique_violation), as when several
// ingesters start on a new lake. So each holds an advisory lock,
// in a transaction of its own, while it opens the catalog: the first
// creates the tables, the others find them.
func newPostgresCatalog(ctx context.Context, db *sql.DB, props iceberg.Properties) (*sqlcat.Catalog, error) {
	// A transaction's advisory lock ends with it, whatever happens to
	// the connection after.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // it only held the lock
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", catalogLock); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return sqlcat.NewCatalog("evosignal", db, sqlcat.Postgres, props)
}

// s3Props are the S3 client's settings from the environment AWS's tools
// read: the region (AWS_REGION, AWS_DEFAULT_REGION; default us-east-1)
// and an endpoint of an S3-compatible store (AWS_ENDPOINT_URL_S3,
// AWS_ENDPOINT_URL), addressed by path. The credentials are the SDK's
// default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile,
// an instance role).
func s3Props() iceberg.Properties {
	p := iceberg.Properties{icebergio.S3Region: "us-east-1"}
	for _, k := range []string{"AWS_DEFAULT_REGION", "AWS_REGION"} {
		if v := os.Getenv(k); v != "" {
			p[icebergio.S3Region] = v
		}
	}
	for _, k := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if v := os.Getenv(k); v != "" {
			p[icebergio.S3EndpointURL] = v
			break
		}
	}
	return p
}

// warehouseURI is a warehouse's location as Iceberg names it: s3://… as
// it is, a directory as a file:// URI.
func warehouseURI(wh string) (string, error) {
	u, err := url.Parse(wh)
	switch {
	case err == nil && u.Scheme == "s3":
		if u.Host == "" {
			return "", fmt.Errorf("warehouse %s: want s3://BUCKET/PREFIX", wh)
		}
		return strings.TrimSuffix(wh, "/"), nil
	case err == nil && len(u.Scheme) > 1 && u.Scheme != "file":
		return "", fmt.Errorf("warehouse %s: want s3://BUCKET/PREFIX or a directory", wh)
	}
	abs, err := filepath.Abs(strings.TrimPrefix(wh, "file://"))
	if err != nil {
		return "", err
	}
	return "file://" + filepath.ToSlash(abs), nil
}

// checkFormat creates the namespace with this format (and, on a
// PostgreSQL catalog, the warehouse's location), or checks the format it
// records and takes its location.
func (l *Lake) checkFormat(ctx context.Context, o Options) error {
	ns := table.Identifier{namespace}
	ok, err := l.cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return fmt.Errorf("lake %s: %w", l.name, err)
	}
	if !ok {
		if !o.Create {
			return fmt.Errorf("lake %s: no lake there (its catalog has no namespace %s); ingest -lake makes one", l.name, namespace)
		}
		props := iceberg.Properties{formatProp: strconv.Itoa(Format), writtenProp: Writer}
		if l.base == "" {
			if o.Warehouse == "" {
				return fmt.Errorf("lake %s: a new lake on a PostgreSQL catalog needs its warehouse: -lake-warehouse s3://BUCKET/PREFIX (or a directory)", l.name)
			}
			wh, err := warehouseURI(o.Warehouse)
			if err != nil {
				return fmt.Errorf("lake %s: %w", l.name, err)
			}
			props[locationProp] = wh + "/" + namespace + ".db"
		}
		err := l.cat.CreateNamespace(ctx, ns, props)
		if err == nil || errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return l.checkFormat(ctx, Options{Warehouse: o.Warehouse})
		}
		return fmt.Errorf("lake %s: %w", l.name, err)
	}
	props, err := l.cat.LoadNamespaceProperties(ctx, ns)
	if err != nil {
		return fmt.Errorf("lake %s: %w", l.name, err)
	}
	got, err := strconv.Atoi(props[formatProp])
	if err != nil || got != Format {
		return &FormatError{Dir: l.name, Got: got, WrittenBy: props[writtenProp]}
	}
	if l.base != "" {
		return nil // the lake in a directory: its warehouse is there
	}
	loc := props[locationProp]
	if loc == "" {
		return fmt.Errorf("lake %s: its namespace %s records no %s", l.name, namespace, locationProp)
	}
	if o.Warehouse != "" {
		wh, err := warehouseURI(o.Warehouse)
		if err != nil {
			return fmt.Errorf("lake %s: %w", l.name, err)
		}
		if wh+"/"+namespace+".db" != loc {
			return fmt.Errorf("lake %s: its warehouse is %s, not %s (a lake keeps the warehouse it was created with; leave -lake-warehouse out)", l.name, strings.TrimSuffix(loc, "/"+namespace+".db"), wh)
		}
	}
	l.base = loc
	if !strings.HasPrefix(loc, "file://") {
		// The file system keeps the context it is loaded with for every
		// operation after: the lake's, not Open's (an ingester seals once
		// more on stop, after its context is cancelled).
		if l.fs, err = icebergio.LoadFS(context.WithoutCancel(ctx), l.props, loc); err != nil {
			return fmt.Errorf("lake %s: warehouse %s: %w", l.name, loc, err)
		}
	}
	return nil
}

// Name is the lake as messages name it: its directory, or its catalog's
// URI without the password.
func (l *Lake) Name() string { return l.name }

// Readable are the directories the views Attach makes read: the local
// warehouse, or the cache of a remote one's files.
func (l *Lake) Readable() string {
	if l.fs != nil {
		return l.cache
	}
	return strings.TrimPrefix(l.base, "file://")
}

// Close closes the catalog.
func (l *Lake) Close() error {
	if l.temp {
		os.RemoveAll(l.stage)
	}
	err := l.cat.Close()
	return errors.Join(err, l.db.Close())
}

// mutex is the lock of this process's commits to the lake.
func (l *Lake) mutex() *sync.Mutex {
	m, _ := commits.LoadOrStore(l.key, &sync.Mutex{})
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
