package otel_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/realotel"
)

// TestFrameworks: what each real JavaScript framework exported of the one
// scripted task (testdata/realotel/<fixture>/traces.jsonl, written by
// internal/workshop/realotel's TestFrameworks) gives the script's truth:
// one session, its plan and replan, the model calls with their tokens, the
// real and failed tool calls; and no data-quality note. Where a framework
// loses part of the run, the test says what, and expects exactly the rest.
func TestFrameworks(t *testing.T) {
	for _, f := range realotel.Frameworks() {
		t.Run(f.Name, func(t *testing.T) {
			in, err := os.Open(filepath.Join("..", "..", "..", "testdata", "realotel", f.Name, "traces.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			s, m := mapReader(t, in)
			got, err := realotel.TruthOf(s.evs)
			if err != nil {
				t.Fatal(err)
			}
			if want := realotel.Expected(f.Name); got != want {
				t.Errorf("truth\n %+v\nwant\n %+v", got, want)
			}
			if n := m.Stats().Notes(); len(n) > 0 {
				t.Errorf("notes %q, want none", n)
			}

			// The export requests in the reverse order (roots before
			// their children, as an exporter sending one span a request
			// concurrently may deliver them): the same events.
			b, err := os.ReadFile(in.Name())
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			slices.Reverse(lines)
			r, m2 := mapReader(t, strings.NewReader(strings.Join(lines, "\n")))
			if len(r.evs) != len(s.evs) || m2.Stats().AfterMapped != 0 {
				t.Errorf("requests reversed: %d events, %d spans after their trace was mapped; want %d, none", len(r.evs), m2.Stats().AfterMapped, len(s.evs))
			}
			for i := range min(len(r.evs), len(s.evs)) {
				if r.evs[i].ID != s.evs[i].ID || string(r.evs[i].Data) != string(s.evs[i].Data) {
					t.Errorf("requests reversed: event %d is %s %s, want %s %s", i, r.evs[i].ID, r.evs[i].Data, s.evs[i].ID, s.evs[i].Data)
					break
				}
			}
		})
	}
}
