package bench

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
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

// TestTargetsRawBound: the ingest rate is put against what consuming and
// appending alone allow on this machine's cores, from the CPU the raw
// phases of the same N spent, and not when one of them was not measured.
func TestTargetsRawBound(t *testing.T) {
	consume := Result{Phase: "js-consume", Events: 100_000, PerSec: 200_000, CPUSeconds: 0.5}       // 5 µs an event
	appendRows := Result{Phase: "duckdb-append", Events: 100_000, PerSec: 150_000, CPUSeconds: 0.4} // 4 µs a row
	ingest := Result{Phase: "ingest", Events: 100_000, PerSec: 50_000, PeakRSSMiB: 500,
		Extra: map[string]any{"rows_per_event": 2.5}} // 5 + 2.5×4 = 15 µs an event
	cores := runtime.NumCPU()
	bound := float64(cores) / 15e-6
	want := fmt.Sprintf("ingest     at 100,000: the raw parts' bound is %s events/s (%d cores / (js-consume's 5.0 µs + 2.50 rows × duckdb-append's 4.0 µs of CPU)) = %.2f× js-consume; ingest reached %.2f× of it",
		thousands(int64(math.Round(bound))), cores, bound/200_000, 50_000/bound)
	var b bytes.Buffer
	writeTargets(&b, []Result{consume, appendRows, ingest})
	if !strings.Contains(b.String(), want) {
		t.Errorf("writeTargets = %q, want a line %q", b.String(), want)
	}
	b.Reset()
	writeTargets(&b, []Result{consume, ingest})
	if strings.Contains(b.String(), "bound") {
		t.Errorf("without duckdb-append: %q has a bound", b.String())
	}
}
