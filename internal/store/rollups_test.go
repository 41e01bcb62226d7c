package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/queries"
)

// rollupQueries are the analyses that read the day rollups.
var rollupQueries = []string{"analyze/hints.sql", "analyze/rules_replace.sql"}

// rollupFilters try every way a filter meets the rollups: no window, a
// window of whole days, one that starts and ends inside days, a day
// exactly, an agent, a model, a task type, and groupings.
func rollupFilters() []metrics.Filter {
	d := func(day, h int) time.Time { return time.Date(2026, 11, day, h, 0, 0, 0, time.UTC) }
	return []metrics.Filter{
		{},
		{By: []string{"task_type"}},
		{By: []string{"agent", "model", "day"}},
		{By: []string{"week", "ruleset", "agent_version"}},
		{Since: d(3, 0), Until: d(6, 0)},
		{Since: d(3, 7), Until: d(6, 13), By: []string{"task_type"}},
		{Since: d(4, 0), Until: d(5, 0), By: []string{"agent"}},
		{Since: d(2, 23), Until: d(7, 1), Agent: "coder"},
		{Model: "claude-sonnet-4"},
		{TaskType: "coding", By: []string{"day"}},
		{Since: d(5, 0)},
		{Until: d(5, 0), By: []string{"task_type"}},
	}
}

// rollupResults runs each rollup query under each filter and returns its
// rows as text.
func rollupResults(tb testing.TB, s *Store, tax *taxonomy.Taxonomy) []string {
	tb.Helper()
	var out []string
	for _, name := range rollupQueries {
		for i, f := range rollupFilters() {
			res, err := metrics.DB{DB: s.DB()}.Query(context.Background(), queries.MustExpand(name), append(f.Args(), tax.Args()...)...)
			if err != nil {
				tb.Fatalf("%s, filter %d: %v", name, i, err)
			}
			var lines []string
			for _, r := range res.Rows {
				lines = append(lines, fmt.Sprint(r...))
			}
			out = append(out, fmt.Sprintf("%s filter %d: %d rows\n%s", name, i, len(lines), strings.Join(lines, "\n")))
		}
	}
	return out
}

// computed is rollupResults with the rollups out of use: every day
// computed from the facts, as without them.
func computed(tb testing.TB, s *Store, tax *taxonomy.Taxonomy) []string {
	tb.Helper()
	ctx := context.Background()
	c, err := s.DB().Conn(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	var built string
	if err := c.QueryRowContext(ctx, "SELECT coalesce(any_value(classifier), '') FROM rollups").Scan(&built); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "DELETE FROM rollups"); err != nil {
		tb.Fatal(err)
	}
	defer func() {
		if built != "" {
			if _, err := c.ExecContext(ctx, "INSERT INTO rollups VALUES ($1)", built); err != nil {
				tb.Fatal(err)
			}
		}
	}()
	return rollupResults(tb, s, tax)
}

func sameResults(tb testing.TB, when string, got, want []string) {
	tb.Helper()
	for i := range want {
		if got[i] != want[i] {
			tb.Errorf("%s: with the day rollups\n%s\nwant (computed from the facts)\n%s", when, got[i], want[i])
		}
	}
}

// The hints and rules analyses give the same rows with the day rollups as
// computed from the facts alone, under every kind of filter: while sessions
// arrive shuffled over days and some are pending, after the last refresh,
// after a rebuild, with the rollups built whole on open, and after a store
// without a taxonomy emptied them.
func TestRollupsEqualTheFacts(t *testing.T) {
	ctx := t.Context()
	if !slices.Equal(rollupDimensions, metrics.Dimensions) {
		t.Fatalf("rollupDimensions = %v, want metrics.Dimensions %v", rollupDimensions, metrics.Dimensions)
	}
	tax := taxonomy.Default()
	items := derivationEvents(t) // samples of every agent, without task types among them
	for day := 2; day <= 7; day++ {
		var evs collect
		g := synth.New(uint64(day), time.Date(2026, 11, day, 23, 56, 0, 0, time.UTC)) // some across midnight
		for range 12 {
			if _, err := g.Session(ctx, &evs); err != nil {
				t.Fatal(err)
			}
		}
		for _, e := range evs {
			items = append(items, Item{Event: e})
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })

	path := filepath.Join(t.TempDir(), "r.duckdb")
	// With dozens of sessions pending, DuckDB's buffer peaks at about 450
	// MiB for views/task_facts_pending alone (2 threads, measured), which
	// the analyses read (the rollups' queries once, the computed ones
	// twice): more than the default 512 MiB leaves them.
	opts := Options{Taxonomy: tax, MemoryLimit: "2GB"}
	s, err := OpenWith(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	checked := 0
	for i, batch := 0, 0; i < len(items); batch++ {
		n := min(1+rng.IntN(300), len(items)-i)
		if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: items[i : i+n]}); err != nil {
			t.Fatal(err)
		}
		i += n
		if batch%2 == 0 {
			if _, err := s.RefreshFacts(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if count(t, s, "SELECT count(*) FROM facts_pending") > 0 && count(t, s, "SELECT count(*) FROM hint_days") > 0 && batch%3 == 1 {
			sameResults(t, fmt.Sprintf("batch %d, with pending sessions", batch), rollupResults(t, s, tax), computed(t, s, tax))
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("never compared with rollups built and sessions pending")
	}
	if _, err := s.RefreshFacts(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count(t, s, "SELECT count(DISTINCT day) FROM hint_days"); got < 6 {
		t.Fatalf("hint_days holds %d days, want the six the synthetic sessions start on at least", got)
	}
	if got := count(t, s, "SELECT count(*) FROM replace_days"); got == 0 {
		t.Fatal("replace_days is empty: the replace evidence was never rolled up")
	}
	sameResults(t, "after the last refresh", rollupResults(t, s, tax), computed(t, s, tax))

	// A session stored by the events after midnight, which its start then
	// moves to the day before: both days are built again.
	late := lateStart(t)
	for i, items := range [][]Item{late[1:], late[:1]} {
		if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: items}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RefreshFacts(ctx); err != nil {
			t.Fatal(err)
		}
		wantDay := []string{"2026-11-09", "2026-11-08"}[i]
		var day string
		if err := s.DB().QueryRowContext(ctx, "SELECT CAST(day AS VARCHAR) FROM session_facts_stored WHERE session = 'late'").Scan(&day); err != nil || day != wantDay {
			t.Fatalf("the late session's stored day = %q, %v; want %s", day, err, wantDay)
		}
		sameResults(t, "a session stored on "+wantDay, rollupResults(t, s, tax), computed(t, s, tax))
	}
	want := computed(t, s, tax)

	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	sameResults(t, "after a rebuild", rollupResults(t, s, tax), want)

	// Built whole on open when they were not built with the taxonomy.
	if _, err := s.DB().ExecContext(ctx, "DELETE FROM rollups; DELETE FROM hint_days; DELETE FROM replace_days"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = OpenWith(ctx, path, opts); err != nil {
		t.Fatal(err)
	}
	if got := count(t, s, "SELECT count(*) FROM rollups"); got != 1 {
		t.Fatalf("rollups has %d rows after an open, want 1: built whole", got)
	}
	sameResults(t, "built whole on open", rollupResults(t, s, tax), want)

	// A store without a taxonomy empties them at its next refresh.
	s.Close()
	if s, err = OpenWith(ctx, path, Options{MemoryLimit: opts.MemoryLimit}); err != nil {
		t.Fatal(err)
	}
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count(t, s, "SELECT count(*) FROM rollups") + count(t, s, "SELECT count(*) FROM hint_days"); got != 0 {
		t.Fatalf("rollups and hint_days have %d rows under a store without a taxonomy, want none", got)
	}
	sameResults(t, "without a taxonomy", rollupResults(t, s, tax), rollupResults(t, s, tax))
}

// lateStart is a session that starts a second before midnight (its start
// first) and whose other events come after it.
func lateStart(tb testing.TB) []Item {
	tb.Helper()
	grep, one := "grep", int64(1)
	d := func(day, h, m, sec int) time.Time { return time.Date(2026, 11, day, h, m, sec, 0, time.UTC) }
	var items []Item
	for i, e := range []struct {
		typ  events.Type
		at   time.Time
		data any
	}{
		{events.SessionStarted, d(8, 23, 59, 59), events.SessionStartedData{Goal: "g", Agent: "coder", AgentVersion: "1.0.0", Model: "claude-sonnet-4", Tools: []string{"grep"}}},
		{events.PlanCreated, d(9, 0, 0, 5), events.PlanCreatedData{Tasks: []events.Task{{ID: 1, Description: "fix the failing test", ToolHint: &grep}}, Origin: events.OriginModel}},
		{events.ToolCalled, d(9, 0, 0, 9), events.ToolCalledData{TaskID: &one, Tool: "grep", Hint: &grep, DurationMS: 4}},
		{events.SessionEnded, d(9, 0, 0, 20), events.SessionEndedData{Outcome: events.OutcomeFailure, ToolCalls: 1, FailedToolCalls: 1}},
	} {
		ev, err := events.New("coder/late/w1", "late", int64(i+1), e.typ, e.at, e.data)
		if err != nil {
			tb.Fatal(err)
		}
		items = append(items, Item{Event: ev})
	}
	return items
}
