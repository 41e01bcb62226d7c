package store

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/synth"
)

type collect []*events.Event

func (c *collect) Send(_ context.Context, e *events.Event) error { *c = append(*c, e); return nil }

// digest is an order-independent digest of a query's rows, with their count.
func digest(tb testing.TB, s *Store, from string) string {
	tb.Helper()
	var d string
	q := `SELECT count(*) || ':' || coalesce(sum(hash(t)::HUGEINT), 0) FROM ` + from + ` t`
	if err := s.DB().QueryRow(q).Scan(&d); err != nil {
		tb.Fatalf("digest %s: %v", from, err)
	}
	return d
}

// The stored facts, refreshed now and then while sessions arrive shuffled
// over many batches, equal the facts computed from scratch; and the views
// are exact whether or not a refresh ran.
func TestStoredFactsFollowOutOfOrderArrival(t *testing.T) {
	ctx := t.Context()
	var evs collect
	g := synth.New(11, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	for range 60 {
		if _, err := g.Session(ctx, &evs); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })

	s := openTemp(t)
	pendingSeen := false
	for i, batch := 0, 0; i < len(evs); batch++ {
		n := min(1+rng.IntN(40), len(evs)-i)
		items := make([]Item, n)
		for k := range items {
			items[k] = Item{Event: evs[i+k]}
		}
		i += n
		if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: items}); err != nil {
			t.Fatal(err)
		}
		if count(t, s, "SELECT count(*) FROM facts_pending") > 0 && count(t, s, "SELECT count(*) FROM session_facts_stored") > 0 {
			pendingSeen = true // stored and pending sessions mixed in the views
		}
		if batch%3 == 0 {
			if _, err := s.RefreshFacts(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !pendingSeen {
		t.Fatal("the test never read the views with stored and pending sessions mixed")
	}
	mixed := map[string]string{"session_facts": digest(t, s, "session_facts"), "task_facts": digest(t, s, "task_facts")}

	r, err := s.RefreshFacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sessions == 0 {
		t.Fatal("nothing was pending after the last batch: the final refresh tests nothing")
	}
	if n := count(t, s, "SELECT count(*) FROM facts_pending"); n != 0 {
		t.Fatalf("%d sessions pending after a refresh", n)
	}
	refreshed := map[string]string{"session_facts": digest(t, s, "session_facts_stored"), "task_facts": digest(t, s, "task_facts_stored")}

	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	rebuilt := map[string]string{"session_facts": digest(t, s, "session_facts_stored"), "task_facts": digest(t, s, "task_facts_stored")}
	// A backlog larger than a pass is stored in passes: the same rows.
	defer func(n int) { factsPass = n }(factsPass)
	factsPass = 7
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	for view, want := range rebuilt {
		if got := digest(t, s, view+"_stored"); got != want {
			t.Errorf("%s stored in passes of %d sessions: %s; in one pass: %s", view, factsPass, got, want)
		}
	}

	// A rebuild reports each derived table with its rows, then each facts
	// pass, the passes with the time left.
	var steps []Progress
	s.progressFn = func(p Progress) { steps = append(steps, p) }
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	s.progressFn = nil
	passes := (60 + factsPass - 1) / factsPass
	if len(steps) != len(s.derive)+passes {
		t.Fatalf("rebuild reported %d steps, want %d derived tables and %d facts passes: %+v", len(steps), len(s.derive), passes, steps)
	}
	for i, p := range steps {
		last := i == len(steps)-1
		switch {
		case p.Op != "rebuild" || p.Done != i+1:
			t.Errorf("step %d = %+v, want op rebuild, done %d", i, p, i+1)
		case i < len(s.derive) && (!strings.HasPrefix(p.Step, "derive ") || p.Rows < 0):
			t.Errorf("step %d = %+v, want a derived table and its rows", i, p)
		case i >= len(s.derive) && (p.Step != "facts pass" || p.Of != len(steps) || (p.ETA == 0) != last):
			t.Errorf("step %d = %+v, want a facts pass of %d steps with a time left unless the last", i, p, len(steps))
		}
		if p.Step == "derive tool_calls" && p.Rows != int64(count(t, s, "SELECT count(*) FROM tool_calls")) {
			t.Errorf("derive tool_calls reported %d rows, the table has %d", p.Rows, count(t, s, "SELECT count(*) FROM tool_calls"))
		}
	}
	for view, want := range rebuilt {
		if mixed[view] != want {
			t.Errorf("%s read with pending sessions: %s; computed from scratch: %s", view, mixed[view], want)
		}
		if refreshed[view] != want {
			t.Errorf("%s stored by refreshes: %s; computed from scratch: %s", view, refreshed[view], want)
		}
	}

	// The facts are not empty, and calls found their tasks.
	if n := count(t, s, "SELECT count(*) FROM session_facts"); n != 60 {
		t.Errorf("session_facts has %d rows, want 60", n)
	}
	for _, fact := range []string{"call", "planned", "dropped", "stripped", "completed"} {
		if n := count(t, s, "SELECT count(*) FROM task_facts WHERE fact = '"+fact+"'"); n == 0 {
			t.Errorf("no %s facts", fact)
		}
	}
	if n := count(t, s, "SELECT count(*) FROM task_facts WHERE fact = 'call' AND description IS NULL"); n != 0 {
		t.Errorf("%d calls without their task", n)
	}
	if calls, want := count(t, s, "SELECT count(*) FROM task_facts WHERE fact = 'call'"),
		count(t, s, "SELECT count(*) FROM tool_calls WHERE NOT control"); calls != want {
		t.Errorf("%d call facts, %d real tool calls", calls, want)
	}
}
