package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestTargetsConcurrentVsJSBoth: the concurrent rate is put against js-both
// at the same N when the run measured it, beside the unchanged judgement
// against js-consume, and not when it did not.
func TestTargetsConcurrentVsJSBoth(t *testing.T) {
	consume := Result{Phase: "js-consume", Events: 100_000, PerSec: 200_000}
	both := Result{Phase: "js-both", Events: 100_000, PerSec: 120_000}
	concurrent := Result{Phase: "concurrent", Events: 100_000, PerSec: 60_000, PeakRSSMiB: 500}
	const (
		vsConsume = "concurrent at 100,000: 60,000 events/s = 0.30× js-consume (200,000/s); target ≥ 0.45×: BELOW it"
		vsBoth    = "concurrent at 100,000: 60,000 events/s = 0.50× js-both (120,000/s: raw publish and consume together)"
	)
	tests := []struct {
		name     string
		rs       []Result
		want     []string
		dontWant []string
	}{
		{"both limits", []Result{consume, both, concurrent}, []string{vsConsume, vsBoth}, nil},
		{"no js-both", []Result{consume, concurrent}, []string{vsConsume}, []string{"js-both"}},
		{"js-both at another N", []Result{consume, {Phase: "js-both", Events: 5000, PerSec: 1}, concurrent},
			[]string{vsConsume}, []string{"js-both"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			writeTargets(&b, tt.rs)
			got := b.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("writeTargets(%s) = %q, want a line %q", tt.name, got, w)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(got, w) {
					t.Errorf("writeTargets(%s) = %q, want no %q", tt.name, got, w)
				}
			}
		})
	}
}
