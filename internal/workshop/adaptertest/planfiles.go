package adaptertest

import (
	"math/rand/v2"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/plangen"
	"github.com/evosignal/evosignal/internal/workshop/session"
)

// PlanFileSessions returns n sessions from seed that keep their plan in a
// Markdown file (plangen.Generate in style: written whole, sometimes after
// an edit of unknown prior content, then edited — boxes ticked, tasks
// started, added and removed, notes changed, rewritten), as GenSessions the
// envelopes render. Every call succeeds; the plan-file calls are Plan
// steps, the others real calls. Truth: plangen's replans and completions.
func PlanFileSessions(seed uint64, n int, style plangen.Style, start time.Time) []GenSession {
	out := make([]GenSession, n)
	for i := range out {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		ps := plangen.Generate(seed*1_000_003+uint64(i), style)
		s := newSession(rng, i, start.Add(time.Duration(i)*10*time.Minute), false)
		s.Replans, s.Completions, s.UnknownPrior = int64(ps.Truth.Replans), int64(ps.Truth.Completed), int64(ps.Truth.Unknown)
		for _, n := range ps.RequestReplans {
			s.RequestReplans = append(s.RequestReplans, int64(n))
		}
		rec := session.Record(rng, &s.Session)
		for _, c := range ps.Calls {
			plan := len(c.Expect) > 0
			if !plan {
				s.RealCalls++
			}
			rec.Call(session.Step{Tool: c.Tool, Args: c.Args, OK: true, Plan: plan})
		}
		rec.End()
		out[i] = s
	}
	return out
}
