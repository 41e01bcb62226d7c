package plandialect

import (
	"slices"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/plangen"
)

// TestGeneratedPlanFileSessions runs seeded sessions that keep their plan
// in a Markdown file — written whole, then edited: boxes ticked, tasks
// started, added and removed, notes changed, rewritten — through a
// FileTracker, in each agent style, and checks that every call gives
// exactly the generator's truth.
func TestGeneratedPlanFileSessions(t *testing.T) {
	for _, style := range []plangen.Style{plangen.ClaudeCode, plangen.SkillLite, plangen.Codex} {
		t.Run(style.String(), func(t *testing.T) {
			var total plangen.Truth
			for seed := range uint64(300) {
				s := plangen.Generate(seed, style)
				reg, err := New(DefaultConfig())
				if err != nil {
					t.Fatal(err)
				}
				files, err := NewFiles(DefaultFilesConfig())
				if err != nil {
					t.Fatal(err)
				}
				tr := reg.NewTracker()
				ft := files.NewTracker(tr)
				var got plangen.Truth
				for i, c := range s.Calls {
					out, ok, err := ft.Call(c.Tool, c.Args)
					if err != nil {
						t.Fatalf("seed %d call %d %s %s: %v", seed, i, c.Tool, c.Args, err)
					}
					if ok != (len(c.Expect) > 0) {
						t.Fatalf("seed %d call %d %s %s: plan-file operation %v, want %v", seed, i, c.Tool, c.Args, ok, !ok)
					}
					var kinds []string
					for _, r := range out.Results {
						switch {
						case r.Quality == QualityUnknownPrior:
							kinds = append(kinds, "unknown")
							got.Unknown++
						case !r.Applied:
							kinds = append(kinds, "note: "+string(r.Quality))
						default:
							kinds = append(kinds, r.Result.Kind.String())
							got.Completed += len(r.Result.Completed)
							switch r.Result.Kind {
							case Created:
								got.Created++
							case Replanned:
								got.Replans++
								got.LastReplans++
							case Began:
								got.Began++
								got.LastReplans = 0
							}
						}
					}
					if !slices.Equal(kinds, c.Expect) && !(len(kinds) == 0 && len(c.Expect) == 0) {
						t.Fatalf("seed %d call %d %s %s: results %q, want %q", seed, i, c.Tool, c.Args, kinds, c.Expect)
					}
				}
				if got != s.Truth || tr.Replans() != int64(s.Truth.LastReplans) {
					t.Fatalf("seed %d: got %+v (tracker replans %d), want the generator's truth %+v", seed, got, tr.Replans(), s.Truth)
				}
				total.Replans += got.Replans
				total.Completed += got.Completed
				total.Unknown += got.Unknown
			}
			if total.Replans == 0 || total.Completed == 0 || total.Unknown == 0 {
				t.Fatalf("generated sessions exercise too little: %+v", total)
			}
		})
	}
}
