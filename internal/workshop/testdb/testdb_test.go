package testdb

import (
	"database/sql"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

// count runs a count(*) query on a closed database file, read-only.
func count(tb testing.TB, path, q string) int64 {
	tb.Helper()
	db, err := sql.Open("duckdb", path+"?access_mode=read_only")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(q).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// Every line of the inputs is stored, shuffled or not, and written as the
// ingester writes it: the typed tables and the session facts too.
func TestBuild(t *testing.T) {
	files := Files(t, SampleSessions(t)...)
	var lines int64
	for _, f := range files {
		lines += int64(len(strings.Split(strings.TrimSpace(string(f.Data)), "\n")))
	}
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"in order", Options{}},
		{"shuffled in small batches", Options{Shuffle: rand.New(rand.NewPCG(1, 2)), BatchSize: 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := Build(t, tt.opts, files...)
			if got := count(t, path, "SELECT count(*) FROM events"); got != lines {
				t.Fatalf("events = %d, want %d (a line a event)", got, lines)
			}
			if got := count(t, path, "SELECT count(*) FROM session_facts"); got != int64(len(files)) {
				t.Fatalf("session facts = %d, want %d (a session a file)", got, len(files))
			}
		})
	}
}

// LoadResult reports dead letters and duplicates; Load refuses them.
func TestLoadResult(t *testing.T) {
	d := New(t, Options{})
	one := File(t, SampleSessions(t)[0])
	if res := d.LoadResult(t, one); res.Accepted == 0 || res.DeadLetters != 0 {
		t.Fatalf("first load = %+v, want every line accepted", res)
	}
	if res := d.LoadResult(t, one); res.Accepted != 0 || res.Duplicates == 0 {
		t.Fatalf("second load = %+v, want every line a duplicate", res)
	}
	if res := d.LoadResult(t, Lines("bad", "{", `{"specversion": "1.0"}`)); res.DeadLetters != 2 {
		t.Fatalf("bad lines = %+v, want 2 dead letters", res)
	}
	path := d.Close(t)
	if got := count(t, path, "SELECT count(*) FROM dead_letters WHERE file = 'bad'"); got != 2 {
		t.Fatalf("dead letters labelled bad = %d, want 2", got)
	}
}

// Synth and Generate give the same sessions for the same seed; File reads
// gzip-compressed fixtures.
func TestInputs(t *testing.T) {
	start := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	a, b := Synth(t, "a", 5, start, 3), Synth(t, "b", 5, start, 3)
	if len(a.Data) == 0 || len(a.Data) != len(b.Data) {
		t.Fatalf("synthetic inputs of one seed: %d and %d bytes", len(a.Data), len(b.Data))
	}
	gz := File(t, Testdata(t, "report", "sessions.jsonl.gz"))
	if gz.Name != "sessions.jsonl" || !strings.HasPrefix(string(gz.Data), "{") {
		t.Fatalf("gzip fixture: name %q, data starts %q", gz.Name, gz.Data[:min(len(gz.Data), 20)])
	}
}
