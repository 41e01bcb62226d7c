package metrics

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// unknownSpec is one planted session: what the generator writes and what
// the truth below counts.
type unknownSpec struct {
	day      int // 0 or 1 after unknownStart
	attempts int // update_task_plan calls
	invalid  bool
	outcome  events.Outcome
	ruleset  bool // loads rule set "rs-u" and applies rule "r-u"
}

// valid is the number of valid replans.
func (s unknownSpec) valid() int {
	if s.invalid {
		return s.attempts - 1
	}
	return s.attempts
}

var unknownStart = time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC)

// unknownSpecs plants n sessions of outcome unknown among known ones, in
// every replan bucket, both days and both arms of the effect analysis, and
// a few open sessions (outcome "" ).
func unknownSpecs(n int) []unknownSpec {
	known := []events.Outcome{events.OutcomeSuccess, events.OutcomeFailure, events.OutcomeSuccess,
		events.OutcomePartialSuccess, events.OutcomeSuccess, events.OutcomeAborted, events.OutcomeTimeout}
	var out []unknownSpec
	for i := range 70 {
		s := unknownSpec{day: i % 2, attempts: i % 5, invalid: i%5 == 4, outcome: known[i%len(known)], ruleset: i%3 == 0}
		if i%13 == 12 {
			s.outcome = "" // never ends
		}
		out = append(out, s)
	}
	for i := range n {
		out = append(out, unknownSpec{day: i % 2, attempts: i % 5, invalid: i%5 == 4, outcome: events.OutcomeUnknown, ruleset: i%2 == 0})
	}
	return out
}

func writeUnknownSpecs(ctx context.Context, specs []unknownSpec, sink agent.Sink) error {
	for i, sp := range specs {
		now := unknownStart.AddDate(0, 0, sp.day).Add(time.Duration(i) * time.Minute)
		start := now
		s := agent.NewSession(sink, "gen/host-1", fmt.Sprintf("u-%03d", i)).WithClock(func() time.Time { return now })
		tick := func() { now = now.Add(time.Second) }
		started := agent.SessionStarted{Goal: "planted", Agent: "gen", AgentVersion: "1.0.0", Model: "m-1",
			Tools: []string{"write_file", "complete_task", "update_task_plan"}, TaskType: "coding"}
		if sp.ruleset {
			started.Ruleset, started.Rules = "rs-u", []string{"r-u"}
		}
		if err := s.Started(ctx, started); err != nil {
			return err
		}
		hint := "write_file"
		task := agent.Task{ID: 1, Description: "planted task", ToolHint: &hint}
		tick()
		if err := s.PlanCreated(ctx, agent.PlanCreated{Tasks: []agent.Task{task}, Origin: events.OriginModel}); err != nil {
			return err
		}
		for n := 1; n <= sp.attempts; n++ {
			tick()
			u := agent.PlanUpdated{Replan: int64(n), Trigger: events.TriggerModel, Tasks: []agent.Task{task},
				Kept: []int64{}, Dropped: []agent.Task{}, OverCap: n >= 3, Valid: true}
			if sp.invalid && n == 1 {
				u.Tasks, u.Valid, u.Error = []agent.Task{}, false, "empty task list"
			}
			if err := s.PlanUpdated(ctx, u); err != nil {
				return err
			}
		}
		tick()
		id := int64(1)
		if err := s.ToolCalled(ctx, agent.ToolCalled{TaskID: &id, Tool: "write_file", Hint: &hint, OK: true, DurationMS: 5}); err != nil {
			return err
		}
		if sp.outcome == "" {
			continue
		}
		tick()
		if err := s.Ended(ctx, agent.SessionEnded{Outcome: sp.outcome, Replans: int64(sp.attempts), ToolCalls: 1,
			Iterations: 2, DurationMS: now.Sub(start).Milliseconds()}); err != nil {
			return err
		}
	}
	return nil
}

// unknownTruth counts, over the ended sessions of specs that sel selects,
// what the analyses report.
type unknownTruth struct {
	sessions, unknown, replanned, successes, firstTry int64
}

func countUnknownTruth(specs []unknownSpec, sel func(unknownSpec) bool) unknownTruth {
	var t unknownTruth
	for _, s := range specs {
		if s.outcome == "" || !sel(s) {
			continue
		}
		t.sessions++
		if s.outcome == events.OutcomeUnknown {
			t.unknown++
		}
		if s.valid() > 0 {
			t.replanned++
		}
		if s.outcome == events.OutcomeSuccess {
			t.successes++
			if s.attempts == 0 {
				t.firstTry++
			}
		}
	}
	return t
}

// checkRate fails unless got is num/den (nil when den is 0).
func checkRate(tb testing.TB, what string, got *float64, num, den int64) {
	tb.Helper()
	if den == 0 {
		if got != nil {
			tb.Errorf("%s = %v, want nil (no session)", what, *got)
		}
		return
	}
	want := float64(num) / float64(den)
	if got == nil || *got != want {
		g := "nil"
		if got != nil {
			g = fmt.Sprint(*got)
		}
		tb.Errorf("%s = %s, want %d/%d = %v", what, g, num, den, want)
	}
}

// TestUnknownOutcomeLeftOutOfRates plants unknown-outcome sessions among
// known ones in a real database (through the store and the ingester) and
// checks that every success and first-try success rate is over the known
// sessions only, that every analysis reporting one counts the left-out
// sessions, and that the figures without outcome still count them.
func TestUnknownOutcomeLeftOutOfRates(t *testing.T) {
	const planted = 11
	specs := unknownSpecs(planted)
	d := testdb.New(t, testdb.Options{})
	d.Load(t, testdb.Generate(t, "planted", func(ctx context.Context, sink agent.Sink) error {
		return writeUnknownSpecs(ctx, specs, sink)
	}))
	src := DB{DB: d.Store().DB()}
	ctx := context.Background()
	all := func(unknownSpec) bool { return true }

	t.Run("replans", func(t *testing.T) {
		res, err := Replans(ctx, src, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 {
			t.Fatalf("rows = %d, want 1", len(res.Rows))
		}
		r, want := res.Rows[0], countUnknownTruth(specs, all)
		if r.UnknownOutcome != planted || want.unknown != planted {
			t.Fatalf("unknown_outcome = %d, want %d", r.UnknownOutcome, planted)
		}
		if r.Sessions != want.sessions || r.Successes != want.successes || r.FirstTrySuccesses != want.firstTry || r.Replanned != want.replanned {
			t.Errorf("sessions, successes, first try, replanned = %d %d %d %d, want %d %d %d %d",
				r.Sessions, r.Successes, r.FirstTrySuccesses, r.Replanned, want.sessions, want.successes, want.firstTry, want.replanned)
		}
		known := want.sessions - want.unknown
		checkRate(t, "success_rate", r.SuccessRate, want.successes, known)
		checkRate(t, "first_try_success_rate", r.FirstTrySuccessRate, want.firstTry, known)
		if got, w := *r.SuccessRateCI, *Wilson(want.successes, known, Z95); got != w {
			t.Errorf("success_rate_ci = %+v, want %+v", got, w)
		}
		// The replan rate does not involve the outcome: every ended session.
		checkRate(t, "replan_rate", r.ReplanRate, want.replanned, want.sessions)
		var bucketUnknown int64
		for i, b := range r.SuccessByReplans {
			bt := countUnknownTruth(specs, func(s unknownSpec) bool { return min(s.valid(), 3) == i })
			if b.Sessions != bt.sessions || b.UnknownOutcome != bt.unknown || b.Successes != bt.successes {
				t.Errorf("bucket %s: sessions, unknown, successes = %d %d %d, want %d %d %d",
					b.Replans, b.Sessions, b.UnknownOutcome, b.Successes, bt.sessions, bt.unknown, bt.successes)
			}
			checkRate(t, "bucket "+b.Replans+" success_rate", b.SuccessRate, bt.successes, bt.sessions-bt.unknown)
			bucketUnknown += b.UnknownOutcome
		}
		if bucketUnknown != planted {
			t.Errorf("buckets' unknown_outcome add up to %d, want %d", bucketUnknown, planted)
		}
		if !hasNote(res.Notes, fmt.Sprintf("%d ended session(s) have outcome unknown", planted)) {
			t.Errorf("notes = %q, want the %d sessions of unknown outcome", res.Notes, planted)
		}
		// Unknown is not success: no planted session is in an arm.
		arms := countUnknownTruth(specs, func(s unknownSpec) bool { return s.valid() == 0 })
		cmp, err := CompareReplans(ctx, src, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if got := cmp.NoReplanSessions; got != arms.successes {
			t.Errorf("comparison no_replan_sessions = %d, want %d", got, arms.successes)
		}
	})

	t.Run("trend", func(t *testing.T) {
		rows, err := Trend(ctx, src, Filter{}, EveryDay)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 {
			t.Fatalf("rows = %d, want 2 days", len(rows))
		}
		var unknown int64
		for day, r := range rows {
			want := countUnknownTruth(specs, func(s unknownSpec) bool { return s.day == day })
			if r.Period != unknownStart.AddDate(0, 0, day).Format(time.DateOnly) {
				t.Fatalf("row %d period = %s", day, r.Period)
			}
			if r.Sessions != want.sessions || r.UnknownOutcome != want.unknown {
				t.Errorf("%s: sessions, unknown_outcome = %d %d, want %d %d", r.Period, r.Sessions, r.UnknownOutcome, want.sessions, want.unknown)
			}
			checkRate(t, r.Period+" success_rate", r.SuccessRate, want.successes, want.sessions-want.unknown)
			checkRate(t, r.Period+" first_try_success_rate", r.FirstTrySuccessRate, want.firstTry, want.sessions-want.unknown)
			checkRate(t, r.Period+" replan_rate", r.ReplanRate, want.replanned, want.sessions)
			unknown += r.UnknownOutcome
		}
		if unknown != planted {
			t.Errorf("unknown_outcome over the days = %d, want %d", unknown, planted)
		}
	})

	t.Run("effect", func(t *testing.T) {
		res, err := Effect(ctx, src, Filter{}, DefaultEffectConfig())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 2 {
			t.Fatalf("rows = %d, want the rule set and the rule", len(res.Rows))
		}
		treated := countUnknownTruth(specs, func(s unknownSpec) bool { return s.ruleset })
		control := countUnknownTruth(specs, func(s unknownSpec) bool { return !s.ruleset })
		if treated.unknown+control.unknown != planted || treated.unknown == 0 || control.unknown == 0 {
			t.Fatalf("planted unknown: %d treated, %d control; want both arms, %d in all", treated.unknown, control.unknown, planted)
		}
		for _, r := range res.Rows {
			name := r.Kind + " " + r.ID
			if r.TreatedSessions != treated.sessions || r.ControlSessions != control.sessions ||
				r.TreatedUnknownOutcome != treated.unknown || r.ControlUnknownOutcome != control.unknown {
				t.Errorf("%s: arms %d (%d unknown) vs %d (%d unknown), want %d (%d) vs %d (%d)", name,
					r.TreatedSessions, r.TreatedUnknownOutcome, r.ControlSessions, r.ControlUnknownOutcome,
					treated.sessions, treated.unknown, control.sessions, control.unknown)
			}
			checkRate(t, name+" treated success", r.Success.TreatedRate, treated.successes, treated.sessions-treated.unknown)
			checkRate(t, name+" control success", r.Success.ControlRate, control.successes, control.sessions-control.unknown)
			checkRate(t, name+" treated first try", r.FirstTrySuccess.TreatedRate, treated.firstTry, treated.sessions-treated.unknown)
			checkRate(t, name+" control first try", r.FirstTrySuccess.ControlRate, control.firstTry, control.sessions-control.unknown)
			checkRate(t, name+" treated replan", r.Replan.TreatedRate, treated.replanned, treated.sessions)
			checkRate(t, name+" control replan", r.Replan.ControlRate, control.replanned, control.sessions)
		}
		if !hasNote(res.Notes, fmt.Sprintf("%d session(s) (summed over rows and arms) have outcome unknown", 2*planted)) {
			t.Errorf("notes = %q, want the sessions of unknown outcome", res.Notes)
		}
	})
}

func hasNote(notes []string, prefix string) bool {
	for _, n := range notes {
		if len(n) >= len(prefix) && n[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
