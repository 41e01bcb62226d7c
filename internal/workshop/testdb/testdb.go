// Package testdb builds the fixture databases of the tests: a real DuckDB
// file written through store and ingester exactly as ingest -file writes
// it, from JSON-lines files, lines given as text or generated sessions.
//
//	path := testdb.Build(tb, testdb.Options{}, testdb.Files(tb, testdb.SampleSessions(tb)...)...)
//
// Build returns the file closed, for code that opens it itself (analyze
// -db, a read-only reader); New keeps the store open for tests that read
// through it or load in several steps.
package testdb

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/synth"
)

// Options shape how a fixture database is written.
type Options struct {
	// Taxonomy is the store's (store.Options.Taxonomy): nil classifies
	// nothing at write time, as store.Open does.
	Taxonomy *taxonomy.Taxonomy
	// BatchSize is the ingester's; 0 keeps its default.
	BatchSize int
	// Shuffle, when set, loads the lines of each input in a random order,
	// so that a session's events arrive out of order (and, with a small
	// BatchSize, across transactions).
	Shuffle *rand.Rand
}

// Input is one JSON-lines file to load; Name labels its dead letters.
type Input struct {
	Name string
	Data []byte
}

// DB is a fixture database file under a test's temporary folder.
type DB struct {
	Path string
	opts Options
	st   *store.Store
	in   *ingest.Ingester
}

// New creates a database file with the schema and returns it open for
// writing; the store is closed when the test ends (or by Close).
func New(tb testing.TB, opts Options) *DB {
	tb.Helper()
	d := &DB{Path: filepath.Join(tb.TempDir(), "evo.duckdb"), opts: opts}
	d.Reopen(tb)
	tb.Cleanup(func() {
		if d.st != nil {
			d.st.Close()
		}
	})
	return d
}

// Build creates a database, loads inputs with Load and returns its path,
// closed.
func Build(tb testing.TB, opts Options, inputs ...Input) string {
	tb.Helper()
	d := New(tb, opts)
	d.Load(tb, inputs...)
	return d.Close(tb)
}

// Reopen opens the store and an ingester on it again after Close.
func (d *DB) Reopen(tb testing.TB) {
	tb.Helper()
	if d.st != nil {
		tb.Fatalf("testdb: %s is open already", d.Path)
	}
	var opts store.Options
	if d.opts.Taxonomy != nil { // a nil *Taxonomy in the interface would not be nil
		opts.Taxonomy = d.opts.Taxonomy
	}
	st, err := store.OpenWith(context.Background(), d.Path, opts)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	cfg := ingest.DefaultConfig()
	if d.opts.BatchSize > 0 {
		cfg.BatchSize = d.opts.BatchSize
	}
	in, err := ingest.New(cfg, st, nil)
	if err != nil {
		st.Close()
		tb.Fatalf("new ingester: %v", err)
	}
	d.st, d.in = st, in
}

// Store is the open store.
func (d *DB) Store() *store.Store {
	return d.st
}

// Close closes the store and returns the file's path.
func (d *DB) Close(tb testing.TB) string {
	tb.Helper()
	if d.st != nil {
		st := d.st
		d.st, d.in = nil, nil
		if err := st.Close(); err != nil {
			tb.Fatalf("close store: %v", err)
		}
	}
	return d.Path
}

// Load loads each input through the ingester and fails the test unless
// it holds at least one event and no line of it is dead-lettered.
func (d *DB) Load(tb testing.TB, inputs ...Input) {
	tb.Helper()
	for _, in := range inputs {
		res := d.LoadResult(tb, in)
		if res.DeadLetters > 0 || res.Accepted == 0 {
			tb.Fatalf("load %s: %+v, want every line accepted", in.Name, res)
		}
	}
}

// LoadResult loads one input through the ingester and returns what the
// store made of it, for inputs that are meant to leave dead letters or
// duplicates. It fails the test only when loading fails.
func (d *DB) LoadResult(tb testing.TB, in Input) store.Result {
	tb.Helper()
	if d.in == nil {
		tb.Fatalf("testdb: load %s: %s is closed", in.Name, d.Path)
	}
	b := in.Data
	if d.opts.Shuffle != nil {
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		d.opts.Shuffle.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		b = bytes.Join(lines, []byte("\n"))
	}
	res, err := d.in.LoadFile(context.Background(), bytes.NewReader(b), in.Name)
	if err != nil {
		tb.Fatalf("load %s: %v", in.Name, err)
	}
	return res
}

// File reads a JSON-lines file (gzip-compressed if its name ends in .gz),
// named by its base name without .gz.
func File(tb testing.TB, path string) Input {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	name := filepath.Base(path)
	if strings.HasSuffix(name, ".gz") {
		name = strings.TrimSuffix(name, ".gz")
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
	}
	return Input{Name: name, Data: b}
}

// Files reads each file with File.
func Files(tb testing.TB, paths ...string) []Input {
	tb.Helper()
	out := make([]Input, len(paths))
	for i, p := range paths {
		out[i] = File(tb, p)
	}
	return out
}

// Lines is an input of the given JSON lines.
func Lines(name string, lines ...string) Input {
	return Input{Name: name, Data: []byte(strings.Join(lines, "\n"))}
}

// Concat joins inputs into one, loaded in one go.
func Concat(name string, inputs ...Input) Input {
	var buf bytes.Buffer
	for _, in := range inputs {
		buf.Write(in.Data)
		buf.WriteByte('\n')
	}
	return Input{Name: name, Data: buf.Bytes()}
}

// Generate is an input of the events gen writes to a JSON-lines sink.
func Generate(tb testing.TB, name string, gen func(ctx context.Context, sink agent.Sink) error) Input {
	tb.Helper()
	var buf bytes.Buffer
	w := agent.NewJSONLWriter(&buf)
	if err := gen(context.Background(), w); err != nil {
		tb.Fatalf("generate %s: %v", name, err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatalf("generate %s: %v", name, err)
	}
	return Input{Name: name, Data: buf.Bytes()}
}

// Synth is an input of n sessions of the synthetic generator (internal/workshop/synth)
// seeded with seed, starting at start.
func Synth(tb testing.TB, name string, seed uint64, start time.Time, n int) Input {
	tb.Helper()
	return Generate(tb, name, func(ctx context.Context, sink agent.Sink) error {
		g := synth.New(seed, start)
		for range n {
			if _, err := g.Session(ctx, sink); err != nil {
				return err
			}
		}
		return nil
	})
}

// Testdata is the path of a file or folder under the module's testdata/.
func Testdata(tb testing.TB, elem ...string) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("testdb: cannot locate the source file")
	}
	return filepath.Join(append([]string{filepath.Dir(file), "..", "..", "..", "testdata"}, elem...)...)
}

// Glob lists the files of testdata/ that match pattern, and fails the test
// when there are none.
func Glob(tb testing.TB, pattern string) []string {
	tb.Helper()
	files, err := filepath.Glob(Testdata(tb, pattern))
	if err != nil || len(files) == 0 {
		tb.Fatalf("testdata/%s: %v (found %d)", pattern, err, len(files))
	}
	return files
}

// SampleSessions are the hand-written sample sessions,
// testdata/events/valid/*.jsonl.
func SampleSessions(tb testing.TB) []string {
	tb.Helper()
	return Glob(tb, "events/valid/*.jsonl")
}
