package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/synth"
)

// BenchmarkRefreshAfterManySessions stores the facts of 1,000 new sessions
// (one op) in databases that already hold the facts of 2,000 and 20,000
// sessions. A refresh reads the typed tables only from where its oldest
// pending session started (ingest/refresh_facts.sql), so the two should
// differ by little more than the read of facts_sessions; a refresh that
// read every table whole took 5.6 times as long at 20,000 as at 2,000.
func BenchmarkRefreshAfterManySessions(b *testing.B) {
	for _, stored := range []int{2_000, 20_000} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			ctx := b.Context()
			s := openTemp(b)
			g := synth.New(7, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
			write := func(sessions int) {
				b.Helper()
				var evs collect
				for range sessions {
					if _, err := g.Session(ctx, &evs); err != nil {
						b.Fatal(err)
					}
				}
				for len(evs) > 0 {
					n := min(len(evs), 10_000)
					if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: itemsOf(evs[:n])}); err != nil {
						b.Fatal(err)
					}
					evs = evs[n:]
				}
			}
			write(stored)
			if _, err := s.RefreshFacts(ctx); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				write(1_000)
				b.StartTimer()
				if _, err := s.RefreshFacts(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
