package ingest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// writeSessions writes n synthetic sessions as JSON lines and returns the
// file and how many events it holds.
func writeSessions(tb testing.TB, n int) (string, int) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "events.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := agent.NewJSONLWriter(f)
	gen := synth.New(3, time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))
	total := 0
	for range n {
		k, err := gen.Session(context.Background(), w)
		if err != nil {
			tb.Fatal(err)
		}
		total += k
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path, total
}

func TestLoadFileTwiceSkipsDuplicates(t *testing.T) {
	file, n := writeSessions(t, 50)
	// Append bad lines: they are dead-lettered with their line numbers.
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{not json\n\n{\"specversion\":\"1.0\"}\n")
	f.Close()
	db := filepath.Join(t.TempDir(), "t.duckdb")
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"-file", file, "-db", db, "-allow-dead-letters"}, nil, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	want := "accepted " + itoa(n) + ", duplicates 0, dead-lettered 2"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("first load printed %q, want it to contain %q", out.String(), want)
	}
	out.Reset()
	if err := run(t.Context(), []string{"-file", file, "-db", db, "-allow-dead-letters"}, nil, &out, &errOut); err != nil {
		t.Fatalf("run: %v", err)
	}
	want = "accepted 0, duplicates " + itoa(n) + ", dead-lettered 2"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("second load printed %q, want it to contain %q", out.String(), want)
	}
	conn, err := sql.Open("duckdb", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var rows int
	conn.QueryRow(`SELECT count(*) FROM events`).Scan(&rows)
	if rows != n {
		t.Errorf("events = %d, want %d", rows, n)
	}
	var lines string
	conn.QueryRow(`SELECT string_agg(line::VARCHAR || ':' || reason_code, ',' ORDER BY received_at, line) FROM dead_letters`).Scan(&lines)
	bad1, bad2 := itoa(n+1), itoa(n+3)
	if wantL := bad1 + ":malformed_json," + bad2 + ":schema_violation," + bad1 + ":malformed_json," + bad2 + ":schema_violation"; lines != wantL {
		t.Errorf("dead letters = %s, want %s", lines, wantL)
	}
}

// TestSecondIngesterGetsClearError runs two ingester processes on one
// database file: the second must fail with a clear error, and the file must
// stay readable.
func TestSecondIngesterGetsClearError(t *testing.T) {
	bin := testkit.BuildCmd(t, "./cmd/ingest")
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	first := exec.Command(bin, "-db", db, "-listen", "127.0.0.1:0")
	var firstErr testkit.SyncBuffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(firstErr.String(), "msg=ingesting") {
		if time.Now().After(deadline) {
			t.Fatalf("first ingester did not start:\n%s", firstErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	file, _ := writeSessions(t, 1)
	out, err := exec.Command(bin, "-db", db, "-file", file).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second ingester: err %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{"database is in use by another process", "only one process can write"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("second ingester said %q, want it to contain %q", out, want)
		}
	}
	first.Process.Signal(os.Interrupt)
	if err := first.Wait(); err != nil {
		t.Fatalf("first ingester after SIGINT: %v\n%s", err, firstErr.String())
	}
	// The file is intact: a load now works.
	if out, err := exec.Command(bin, "-db", db, "-file", file).CombinedOutput(); err != nil {
		t.Fatalf("load after the first stopped: %v\n%s", err, out)
	}
}

func TestHelpExplains(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"-h"}, nil, &out, &errOut); err != nil {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"-nats", "-db", "-file", "-listen", "-store", "-http", "exactly once"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("-h output lacks %q", want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// -memory-limit and -temp-dir reach DuckDB; a limit it does not understand
// is an error before anything is read.
func TestMemoryLimitFlags(t *testing.T) {
	file, _ := writeSessions(t, 5)
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"-file", file, "-db", filepath.Join(dir, "a.duckdb"),
		"-memory-limit", "300MiB", "-temp-dir", filepath.Join(dir, "spill")}, nil, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	err := run(t.Context(), []string{"-file", file, "-db", filepath.Join(dir, "b.duckdb"), "-memory-limit", "lots"}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `memory limit "lots"`) {
		t.Fatalf("run -memory-limit lots = %v, want an error naming the memory limit", err)
	}
}

// -batch above the default -max-batch raises it; both given, a -max-batch
// below -batch is an error.
func TestBatchFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.duckdb")
	tests := []struct {
		name          string
		args          []string
		wantBatch     int
		wantMax       int
		wantUsageFail bool
	}{
		{"defaults", nil, 10000, 100000, false},
		{"small batch", []string{"-batch", "500"}, 500, 100000, false},
		{"large batch", []string{"-batch", "200000"}, 200000, 200000, false},
		{"both", []string{"-batch", "500", "-max-batch", "5000"}, 500, 5000, false},
		{"max below batch", []string{"-batch", "500", "-max-batch", "100"}, 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errOut bytes.Buffer
			o, err := parse(t.Context(), append([]string{"-db", db}, tc.args...), &errOut)
			if tc.wantUsageFail {
				if !errors.Is(err, cli.ErrUsage) {
					t.Fatalf("parse(%q) = %v, want a usage error", tc.args, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse(%q): %v\n%s", tc.args, err, errOut.String())
			}
			if got := o.cfg.Ingest; got.BatchSize != tc.wantBatch || got.MaxBatchSize != tc.wantMax {
				t.Errorf("parse(%q): batch %d, max batch %d; want %d and %d", tc.args, got.BatchSize, got.MaxBatchSize, tc.wantBatch, tc.wantMax)
			}
		})
	}
}

// ingest -file -lake seals the database into the lake after the load; a
// second load of the same file seals nothing.
func TestLoadFileSealsLake(t *testing.T) {
	file, _ := writeSessions(t, 20)
	dir := t.TempDir()
	db, lakeDir := filepath.Join(dir, "shard1.duckdb"), filepath.Join(dir, "lake")
	for i, want := range []string{"as shard shard1: 22 tables", "as shard shard1: 0 tables, 0 rows"} {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), []string{"-file", file, "-db", db, "-lake", lakeDir}, nil, &out, &errOut); err != nil {
			t.Fatalf("run: %v\n%s", err, errOut.String())
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("load %d printed %q, want it to contain %q", i+1, out.String(), want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-rebuild", "-db", db, "-lake", lakeDir}, "-lake goes with -file or a NATS ingester"},
		{[]string{"-file", file, "-db", db, "-lake", lakeDir, "-seal-every", "1s"}, "-seal-every goes with -lake, reading NATS"},
		{[]string{"-seal-every", "1s"}, "-seal-every goes with -lake, reading NATS"},
		{[]string{"-replica", "b", "-lake", lakeDir}, "-replica goes with -nats"},
	} {
		var errOut bytes.Buffer
		if err := run(t.Context(), c.args, nil, io.Discard, &errOut); err == nil || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%q: %v, %q; want %q", c.args, err, errOut.String(), c.want)
		}
	}
}

// ingest -file -lake postgres://… -lake-warehouse s3://… seals into a lake
// beyond one machine (a PostgreSQL catalog, an S3 warehouse; real servers):
// the warehouse is named once, when the lake is created, and a lake is
// never opened with another.
func TestLoadFileSealsRemoteLake(t *testing.T) {
	file, _ := writeSessions(t, 20)
	db := filepath.Join(t.TempDir(), "shard1.duckdb")
	testkit.StartS3(t, "lake").SetEnv(t)
	pg := testkit.StartPostgres(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-file", file, "-db", db, "-lake", pg}, "a new lake on a PostgreSQL catalog needs its warehouse: -lake-warehouse"},
		{[]string{"-file", file, "-db", db, "-lake", "s3://lake/evo"}, "want a directory or a postgres:// catalog"},
		{[]string{"-file", file, "-db", db, "-lake", t.TempDir(), "-lake-warehouse", "s3://lake/evo"}, "-lake-warehouse goes with -lake postgres://"},
	} {
		var errOut bytes.Buffer
		err := run(t.Context(), c.args, nil, io.Discard, &errOut)
		if err == nil || !strings.Contains(errOut.String()+err.Error(), c.want) {
			t.Errorf("%q: %v, %q; want %q", c.args, err, errOut.String(), c.want)
		}
	}
	for i, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-lake-warehouse", "s3://lake/evo"}, "as shard shard1: 22 tables"},
		{nil, "as shard shard1: 0 tables, 0 rows"}, // the lake knows its warehouse
	} {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), append([]string{"-file", file, "-db", db, "-lake", pg}, c.args...), nil, &out, &errOut); err != nil {
			t.Fatalf("load %d: %v\n%s", i+1, err, errOut.String())
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("load %d printed %q, want it to contain %q", i+1, out.String(), c.want)
		}
	}
	var errOut bytes.Buffer
	err := run(t.Context(), []string{"-file", file, "-db", db, "-lake", pg, "-lake-warehouse", "s3://lake/other"}, nil, io.Discard, &errOut)
	if err == nil || !strings.Contains(err.Error(), "its warehouse is s3://lake/evo, not s3://lake/other") {
		t.Errorf("another warehouse: %v, want the lake's refusal naming both", err)
	}
}
