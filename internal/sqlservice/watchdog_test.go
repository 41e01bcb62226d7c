package sqlservice

import (
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestWatchdogStopsQueries: a query that grows the process past
// Config.MaxRSS (set here a little above the process's memory before it)
// is stopped with an error that says why, well before its time limit, and
// the service answers the next query.
func TestWatchdogStopsQueries(t *testing.T) {
	st := sampleStore(t, 0)
	srv, nc, _ := testkit.Embedded(t)
	base, err := residentBytes()
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	startService(t, nc, st.DB(), func(c *Config) { c.MaxRSS = base + 200<<20 })
	cnc, _ := testkit.Client(t, srv.ClientURL())
	client := NewClient(cnc, "")
	// A list of 400M integers: 3.2 GB, which DuckDB builds within its own
	// memory limit only by spilling — the process grows past the bound
	// first.
	t0 := time.Now()
	_, err = client.Query(t.Context(), Request{SQL: `SELECT length(list(range)) FROM range(400000000)`, TimeoutMS: 60_000})
	took := time.Since(t0)
	if err == nil || !strings.Contains(err.Error(), "past the query service's bound") {
		t.Fatalf("Query = %v after %s, want an error naming the memory bound", err, took)
	}
	if took > 30*time.Second {
		t.Errorf("stopped after %s", took)
	}
	t.Logf("stopped after %s: %v", took.Round(time.Millisecond), err)
	if _, err := client.Query(t.Context(), Request{SQL: `SELECT 1`}); err != nil {
		t.Fatalf("the next query: %v", err)
	}
}
