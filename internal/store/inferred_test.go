package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/infer"
	"github.com/evosignal/evosignal/internal/workshop/inferbench"
	"github.com/evosignal/evosignal/internal/workshop/sim"
)

type syncCollect struct {
	mu  sync.Mutex
	evs []*events.Event
}

func (c *syncCollect) Send(_ context.Context, e *events.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, e)
	return nil
}

// redecisionRow is one row of inferred_redecisions, or what internal/infer
// says it should be.
type redecisionRow struct {
	Session, Rule, Evidence string
	Position, Seq, Failures int64
	From, To, ErrorKinds    string // ErrorKinds as JSON
}

func (r redecisionRow) String() string {
	return fmt.Sprintf("%s@%d seq %d: %d×%s→%s %s [%s] %q", r.Session, r.Position, r.Seq, r.Failures, r.From, r.To, r.ErrorKinds, r.Rule, r.Evidence)
}

// The view inferred_redecisions gives, on plan-less sessions, exactly the
// re-decisions inferbench.ChosenRule (the rule cmd/inferbench chose)
// gives, with the same evidence; sessions with a plan get none.
func TestInferredRedecisionsViewIsTheRule(t *testing.T) {
	ctx := t.Context()
	sc, err := sim.Parse(sim.DefaultJSON())
	if err != nil {
		t.Fatal(err)
	}
	sc.Model.RetriesBeforeReplan = 0 // re-decisions after a single failure, to tell k=1 from k=2
	c := &syncCollect{}
	if _, err := sim.Run(ctx, sim.Config{Scenario: sc, Seed: 7, Sessions: 160, Concurrency: 1, Ordered: true}, c); err != nil {
		t.Fatal(err)
	}
	// Every other session loses its plan events: it becomes plan-less.
	var order []string
	seen := map[string]bool{}
	for _, e := range c.evs {
		if !seen[e.Subject] {
			seen[e.Subject] = true
			order = append(order, e.Subject)
		}
	}
	planless := map[string]bool{}
	for i, s := range order {
		planless[s] = i%2 == 0
	}
	var kept, planlessEvs []*events.Event
	for _, e := range c.evs {
		if planless[e.Subject] && (e.Type == events.PlanCreated || e.Type == events.PlanUpdated) {
			continue
		}
		kept = append(kept, e)
		if planless[e.Subject] {
			planlessEvs = append(planlessEvs, e)
		}
	}

	s := openTemp(t)
	for chunk := range slices.Chunk(kept, 500) {
		items := make([]Item, len(chunk))
		for i, e := range chunk {
			items[i] = Item{Event: e}
		}
		if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: items}); err != nil {
			t.Fatal(err)
		}
	}

	// What the Go rule says, with each call's seq.
	seqs := map[string][]int64{} // session → seq of each real call
	for _, e := range planlessEvs {
		if e.Type != events.ToolCalled {
			continue
		}
		var d events.ToolCalledData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if !d.Control {
			seqs[e.Subject] = append(seqs[e.Subject], e.Seq)
		}
	}
	ss, err := infer.FromEvents(planlessEvs)
	if err != nil {
		t.Fatal(err)
	}
	rule := inferbench.ChosenRule()
	var want []redecisionRow
	capped, singleFailure := false, false
	for _, sess := range ss {
		if len(infer.Rule{MinFailures: rule.MinFailures}.Infer(sess.Calls)) > rule.Cap {
			capped = true
		}
		for _, r := range rule.Infer(sess.Calls) {
			kinds, err := json.Marshal(r.ErrorKinds)
			if err != nil {
				t.Fatal(err)
			}
			singleFailure = singleFailure || r.Failures == 1
			want = append(want, redecisionRow{
				Session: sess.ID, Position: int64(r.At), Seq: seqs[sess.ID][r.At], Failures: int64(r.Failures),
				From: r.FromTool, To: r.ToTool, ErrorKinds: string(kinds),
				Rule: inferbench.RuleName(rule), Evidence: r.Evidence(),
			})
		}
	}
	// The seeded sessions tell the parameters apart: some would have more
	// than Cap without the cap, some re-decide after a single failure.
	if !capped || !singleFailure || len(want) < 20 {
		t.Fatalf("seeded sessions too tame: capped %v, single failure %v, %d re-decisions", capped, singleFailure, len(want))
	}

	rows, err := s.DB().QueryContext(ctx, `SELECT session, position, seq, failures, from_tool, to_tool,
	        CAST(to_json(error_kinds) AS VARCHAR), rule, evidence FROM inferred_redecisions`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []redecisionRow
	for rows.Next() {
		var r redecisionRow
		if err := rows.Scan(&r.Session, &r.Position, &r.Seq, &r.Failures, &r.From, &r.To, &r.ErrorKinds, &r.Rule, &r.Evidence); err != nil {
			t.Fatal(err)
		}
		if !planless[r.Session] {
			t.Errorf("re-decision inferred in session %s, which has a plan", r.Session)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	byPlace := func(a, b redecisionRow) int {
		return cmp.Or(cmp.Compare(a.Session, b.Session), cmp.Compare(a.Position, b.Position))
	}
	slices.SortFunc(got, byPlace)
	slices.SortFunc(want, byPlace)
	if !slices.Equal(got, want) {
		t.Fatalf("inferred_redecisions differs from inferbench.ChosenRule:\n%s", diffRows(got, want))
	}

	// session_signals: has_plan, and the count for plan-less sessions only.
	perSession := map[string]int64{}
	for _, r := range want {
		perSession[r.Session]++
	}
	sig, err := s.DB().QueryContext(ctx, `SELECT session, has_plan, inferred_redecisions FROM session_signals`)
	if err != nil {
		t.Fatal(err)
	}
	defer sig.Close()
	n := 0
	for sig.Next() {
		var sess string
		var hasPlan bool
		var inferred *int64
		if err := sig.Scan(&sess, &hasPlan, &inferred); err != nil {
			t.Fatal(err)
		}
		n++
		switch {
		case hasPlan == planless[sess]:
			t.Errorf("session %s: has_plan %v, want %v", sess, hasPlan, !planless[sess])
		case hasPlan && inferred != nil:
			t.Errorf("session %s has a plan but inferred_redecisions %d, want NULL", sess, *inferred)
		case !hasPlan && (inferred == nil || *inferred != perSession[sess]):
			t.Errorf("plan-less session %s: inferred_redecisions %v, want %d", sess, inferred, perSession[sess])
		}
	}
	if err := sig.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(order) {
		t.Fatalf("session_signals has %d sessions, want %d", n, len(order))
	}

	// The stored facts: after a refresh and after a rebuild, each session's
	// stored count is its rows in the view (NULL with a plan).
	checkStored := func(when string) {
		t.Helper()
		var pending, stored, wrong int
		err := s.DB().QueryRowContext(ctx, `
			WITH v AS (SELECT session, count(*) AS n FROM inferred_redecisions GROUP BY session)
			SELECT (SELECT count(*) FROM facts_pending), count(*),
			       count(*) FILTER (WHERE f.has_plan IS DISTINCT FROM (p.session IS NOT NULL)
			           OR f.inferred_redecisions IS DISTINCT FROM
			              CASE WHEN p.session IS NULL THEN coalesce(v.n, 0) END)
			FROM session_facts_stored f
			LEFT JOIN (SELECT DISTINCT session FROM planned_sessions) p USING (session)
			LEFT JOIN v USING (session)`).Scan(&pending, &stored, &wrong)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if pending != 0 || stored != len(order) || wrong != 0 {
			t.Errorf("%s: %d pending, %d stored sessions (want 0, %d), %d with has_plan or inferred_redecisions other than the views'",
				when, pending, stored, len(order), wrong)
		}
		var total int64
		if err := s.DB().QueryRowContext(ctx, `SELECT sum(inferred_redecisions) FROM session_facts_stored`).Scan(&total); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if total != int64(len(want)) {
			t.Errorf("%s: stored inferred_redecisions sum to %d, want %d", when, total, len(want))
		}
	}
	if _, err := s.RefreshFacts(ctx); err != nil {
		t.Fatal(err)
	}
	checkStored("after a refresh")
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	checkStored("after a rebuild")
}

func diffRows(got, want []redecisionRow) string {
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i].String()
		}
		if i < len(want) {
			w = want[i].String()
		}
		if g != w {
			fmt.Fprintf(&b, "row %d:\n got  %s\n want %s\n", i, g, w)
			if b.Len() > 2000 {
				break
			}
		}
	}
	fmt.Fprintf(&b, "(%d rows, want %d)", len(got), len(want))
	return b.String()
}
