package adaptertest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/plangen"
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
		s := GenSession{
			ID:           fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), i),
			Conversation: rng.IntN(2) == 0,
			Agent:        "gen-agent",
			Model:        "model-" + fmt.Sprint(rng.IntN(2)),
			Goal:         fmt.Sprintf("generated goal %d", i),
			Start:        start.Add(time.Duration(i) * 10 * time.Minute),
			StopOnly:     rng.IntN(4) == 0,
			Replans:      int64(ps.Truth.Replans),
			Completions:  int64(ps.Truth.Completed),
			UnknownPrior: int64(ps.Truth.Unknown),
		}
		g := &gen{rng: rng, s: &s, at: s.Start}
		for _, c := range ps.Calls {
			plan := len(c.Expect) > 0
			if !plan {
				s.RealCalls++
			}
			g.step(Step{Tool: c.Tool, Args: c.Args, OK: true, Plan: plan})
		}
		s.End = g.next()
		out[i] = s
	}
	return out
}
