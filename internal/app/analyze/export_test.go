package analyze

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/export"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// The whole-table comparisons, incremental runs, interrupted runs and
// directory errors are tested in internal/export; these tests cover the
// command: flags, output, exit paths.

// exportTestDB loads the sample sessions and a few invalid events (dead
// letters) into a new database file and returns its path, closed.
func exportTestDB(tb testing.TB) string {
	tb.Helper()
	invalid := testdb.Glob(tb, "events/invalid/*.json")
	if len(invalid) < 3 {
		tb.Fatalf("test data: %d invalid files", len(invalid))
	}
	d := testdb.New(tb, testdb.Options{})
	for _, in := range testdb.Files(tb, append(testdb.SampleSessions(tb), invalid[:3]...)...) {
		d.LoadResult(tb, in)
	}
	return d.Close(tb)
}

// runExportCmd runs analyze export with args and returns its output.
func runExportCmd(args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	err = run(context.Background(), append([]string{"export"}, args...), &o, &e)
	return o.String(), e.String(), err
}

func TestExportCommand(t *testing.T) {
	db := exportTestDB(t)
	dir := filepath.Join(t.TempDir(), "lake")
	stdout, stderr, err := runExportCmd("-db", db, "-out", dir)
	if err != nil {
		t.Fatalf("export = %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(export.Tables)+1 {
		t.Fatalf("output has %d lines, want one per table and a summary:\n%s", len(lines), stdout)
	}
	rdb, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	if _, err := rdb.Exec("ATTACH '" + db + "' AS src (READ_ONLY)"); err != nil {
		t.Fatal(err)
	}
	for i, tb := range export.Tables {
		var want, got int64
		if err := rdb.QueryRow("SELECT count(*) FROM src.main." + tb.Name).Scan(&want); err != nil {
			t.Fatal(err)
		}
		q := "SELECT count(*) FROM read_parquet('" + filepath.Join(dir, tb.Name) + "/**/*.parquet', hive_partitioning = true)"
		if err := rdb.QueryRow(q).Scan(&got); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got != want {
			t.Errorf("%s: %d rows read back, want %d", tb.Name, got, want)
		}
		f := strings.Fields(lines[i])
		if len(f) != 7 || f[0] != tb.Name || f[1] != strconv.FormatInt(want, 10) || f[2] != "rows" || f[4] != "files" || f[5] != "in" {
			t.Errorf("progress line %q, want %q and its rows and files", lines[i], tb.Name)
		}
	}
	if sum := lines[len(lines)-1]; !strings.HasPrefix(sum, "run 1: ") || !strings.Contains(sum, dir) {
		t.Errorf("summary %q, want run 1 and the directory", sum)
	}
	// stderr: each table as it starts, with its rows; the time left once a
	// table was written.
	starts := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(starts) != len(export.Tables) {
		t.Fatalf("stderr = %q, want a line as each table starts", stderr)
	}
	of := strconv.Itoa(len(export.Tables))
	if want := "analyze export: writing events, " + strings.Fields(lines[0])[1] + " rows (table 1 of " + of + ")…"; starts[0] != want {
		t.Errorf("first progress line = %q, want %q (no time left known yet)", starts[0], want)
	}
	for i, l := range starts[1:] {
		rows := strings.Fields(lines[i+1])[1]
		prefix := "analyze export: writing " + export.Tables[i+1].Name + ", " + rows + " rows (table " + strconv.Itoa(i+2) + " of " + of
		left := int64(0) // rows of this table and the later ones
		for _, l := range lines[i+1 : len(lines)-1] {
			n, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			left += n
		}
		if left == 0 {
			if l != prefix+")…" {
				t.Errorf("progress line %q, want %q (nothing left)", l, prefix+")…")
			}
		} else if !strings.HasPrefix(l, prefix+"; ") || !strings.HasSuffix(l, " left)…") {
			t.Errorf("progress line %q, want %q; … left)…", l, prefix)
		}
	}

	stdout, _, err = runExportCmd("-db", db, "-out", dir)
	if err != nil {
		t.Fatalf("second export = %v", err)
	}
	if !strings.Contains(stdout, "nothing new to export") {
		t.Errorf("second export printed %q, want nothing new", stdout)
	}
}

func TestExportCommandErrors(t *testing.T) {
	db := exportTestDB(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		usage   bool   // a usage error (exit 2)
		message string // in the error or on stderr
	}{
		{"no -out", []string{"-db", db}, true, "-out: an output directory is required"},
		{"bad -since", []string{"-db", db, "-out", t.TempDir(), "-since", "yesterday"}, true, "-since"},
		{"since after until", []string{"-db", db, "-out", t.TempDir(), "-since", "2025-06-13", "-until", "2025-06-12"}, true, "not before"},
		{"extra argument", []string{"-db", db, "-out", t.TempDir(), "more"}, true, "unexpected arguments"},
		{"-out is a file", []string{"-db", db, "-out", file}, false, "not a directory"},
		{"no database", []string{"-db", filepath.Join(t.TempDir(), "none.duckdb"), "-out", t.TempDir()}, false, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runExportCmd(tt.args...)
			if err == nil {
				t.Fatalf("export %q succeeded, want an error", tt.args)
			}
			if got := errors.Is(err, errUsage); got != tt.usage {
				t.Errorf("export %q = %v, usage error %v, want %v", tt.args, err, got, tt.usage)
			}
			if !strings.Contains(err.Error()+stderr, tt.message) {
				t.Errorf("export %q = %v, stderr %q; want it to say %q", tt.args, err, stderr, tt.message)
			}
		})
	}
}

func TestExportCommandHelp(t *testing.T) {
	_, stderr, err := runExportCmd("-h")
	if err != nil {
		t.Fatalf("export -h = %v", err)
	}
	for _, want := range []string{"-out", "-db", "-since", "-until", "day=", "_evosignal_export.json", "query service", "read-only"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("export -h does not mention %q:\n%s", want, stderr)
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out, &out); err != nil || !strings.Contains(out.String(), "export") {
		t.Errorf("analyze -h = %v, does not list export:\n%s", err, out.String())
	}
}

// TestExportCommandLocked: a database an ingester (another process) holds
// cannot be exported; the error says why and what to do.
func TestExportCommandLocked(t *testing.T) {
	db := exportTestDB(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestExportHoldDatabase$")
	cmd.Env = append(os.Environ(), "EVOSIGNAL_EXPORT_HOLD="+db)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close() // the holder exits when its stdin closes
		cmd.Wait()
	}()
	sc := bufio.NewScanner(outp)
	held := false
	for sc.Scan() {
		if sc.Text() == "holding" {
			held = true
			break
		}
	}
	if !held {
		t.Fatalf("the holder process did not open the database")
	}

	_, _, err = runExportCmd("-db", db, "-out", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "running ingester") || !strings.Contains(err.Error(), "query service") {
		t.Fatalf("export of a held database = %v, want the in-use error", err)
	}
}

// TestExportHoldDatabase is the other process of TestExportCommandLocked:
// with EVOSIGNAL_EXPORT_HOLD set it opens that database for writing, as an
// ingester does, and holds it until its stdin closes. Otherwise it does
// nothing.
func TestExportHoldDatabase(t *testing.T) {
	path := os.Getenv("EVOSIGNAL_EXPORT_HOLD")
	if path == "" {
		return // only a helper process
	}
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	os.Stdout.WriteString("holding\n")
	bufio.NewReader(os.Stdin).ReadString('\n')
}

func TestETAText(t *testing.T) {
	tests := []struct {
		name string
		eta  time.Duration
		want string
	}{
		{"unknown", 0, ""},
		{"under a second", 300 * time.Millisecond, "; under a second left"},
		{"seconds", 12400 * time.Millisecond, "; about 12s left"},
		{"minutes", 95 * time.Second, "; about 1m35s left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := etaText(tt.eta); got != tt.want {
				t.Fatalf("etaText(%v) = %q, want %q", tt.eta, got, tt.want)
			}
		})
	}
}
