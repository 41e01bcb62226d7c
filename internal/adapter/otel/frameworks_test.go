package otel_test

import (
	"os"
	"path/filepath"
	"testing"

	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
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
			s := &sink{tb: t}
			m, err := otelad.New(otelad.DefaultConfig(), s)
			if err != nil {
				t.Fatal(err)
			}
			if err := otelad.ReadJSON(t.Context(), in, 0, m, func(e *otelad.LineError) { t.Errorf("%v", e) }); err != nil {
				t.Fatal(err)
			}
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
		})
	}
}
