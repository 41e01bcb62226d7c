package skilllite

import (
	"testing"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/rpcsim"
)

// TestSimulatedStream: the events translated from a seeded stream in the
// real format hold what the simulated agent did. (cmd/bridge checks the
// same through the store and the analyzers.)
func TestSimulatedStream(t *testing.T) {
	input, truth := rpcsim.Generate(rpcsim.Config{Seed: 7, Turns: 300})
	res := translate(t, input)
	if len(res.bad) > 0 {
		t.Fatalf("lines %v reported malformed", res.bad)
	}
	calls, failed, stripped := map[string]int64{}, map[string]int64{}, map[string]int64{}
	triggers := map[events.Trigger]int64{}
	var valid, invalid, depth, sessions int64
	for _, e := range res.events {
		p, err := e.Payload()
		if err != nil {
			t.Fatal(err)
		}
		switch d := p.(type) {
		case *events.SessionStartedData:
			sessions++
		case *events.ToolCalledData:
			if d.Control {
				break
			}
			h := ""
			if d.Hint != nil {
				h = *d.Hint
			}
			calls[h]++
			if !d.OK {
				failed[h]++
			}
		case *events.HintStrippedData:
			stripped[d.ToolHint]++
		case *events.PlanUpdatedData:
			triggers[d.Trigger]++
			if d.Valid {
				valid++
			} else {
				invalid++
			}
		case *events.DepthLimitReachedData:
			depth++
		}
	}
	check := func(name string, got, want int64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	check("sessions", sessions, truth.Sessions)
	check("plain answers", res.stats.PlainAnswers, truth.PlainAnswers)
	check("skipped", res.stats.Skipped, truth.Skipped)
	check("suppressed", res.stats.Suppressed, truth.Suppressed)
	check("count mismatches", res.stats.CountMismatches, 0)
	check("valid replans", valid, truth.ValidReplans)
	check("invalid replans", invalid, truth.InvalidReplans)
	check("depth limits", depth, truth.DepthLimits)
	for _, tr := range []events.Trigger{events.TriggerModel, events.TriggerToolFailures, events.TriggerDepthLimit} {
		check("trigger "+string(tr), triggers[tr], truth.Triggers[string(tr)])
	}
	for h, n := range truth.Calls {
		check("calls "+h, calls[h], n)
		check("failed "+h, failed[h], truth.Failed[h])
	}
	for h, n := range truth.Stripped {
		check("stripped "+h, stripped[h], n)
	}
	for h, n := range stripped {
		check("stripped "+h, n, truth.Stripped[h])
	}
}
