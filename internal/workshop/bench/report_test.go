package bench

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
)

// TestTargetsConcurrentVsJSBoth: the concurrent rate is judged against
// js-both at the same N when the run measured it (its target), and not when
// it did not; js-consume judges the ingest phase only.
func TestTargetsConcurrentVsJSBoth(t *testing.T) {
	consume := Result{Phase: "js-consume", Events: 100_000, PerSec: 200_000}
	both := Result{Phase: "js-both", Events: 100_000, PerSec: 120_000}
	concurrent := Result{Phase: "concurrent", Events: 100_000, PerSec: 60_000, PeakRSSMiB: 500}
	const (
		vsConsume = "concurrent at 100,000: 60,000 events/s = 0.30× js-consume"
		vsBoth    = "concurrent at 100,000: 60,000 events/s = 0.50× js-both (120,000/s: raw publish and consume together); target ≥ 0.80×: BELOW it"
	)
	tests := []struct {
		name     string
		rs       []Result
		want     []string
		dontWant []string
	}{
		{"both limits", []Result{consume, both, concurrent}, []string{vsBoth}, []string{vsConsume}},
		{"no js-both", []Result{consume, concurrent}, nil, []string{"js-both", vsConsume}},
		{"js-both at another N", []Result{consume, {Phase: "js-both", Events: 5000, PerSec: 1}, concurrent},
			nil, []string{"js-both"}},
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
	want := fmt.Sprintf("ingest     at 100,000: the raw parts' bound is %s events/s (%d cores / (js-consume's 5.0 µs + 2.50 rows × duckdb-append's 4.0 µs of CPU)) = %.2f× js-consume; ingest reached %.2f× of it; target ≥ 0.85×: BELOW it",
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

// TestTargetsLongestCommit: the longest COMMIT an ingest phase recorded is
// judged against 150 ms.
func TestTargetsLongestCommit(t *testing.T) {
	for _, c := range []struct {
		ms   float64
		want string
	}{
		{149, "ingest     at 1,000: longest COMMIT 149 ms; target ≤ 150 ms: meets it"},
		{2343, "ingest     at 1,000: longest COMMIT 2343 ms; target ≤ 150 ms: BELOW it"},
	} {
		var b bytes.Buffer
		writeTargets(&b, []Result{{Phase: "ingest", Events: 1000, PerSec: 1, Extra: map[string]any{"commit_max_ms": c.ms}}})
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("writeTargets = %q, want a line %q", b.String(), c.want)
		}
	}
}
