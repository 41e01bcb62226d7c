package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/bench"
)

// TestRun runs every phase on a few thousand events in this process and
// checks that each one reports. It checks no figure: a slow machine is not
// a failure.
func TestRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-events", "3000", "-pool", "500", "-in-process", "-json", "-keep", t.TempDir()}
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run(%q) = %v\nstderr:\n%s", args, err, stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, stdout.String())
	}
	want := []string{"js-publish", "js-consume", "duckdb-append", "publish", "ingest",
		"concurrent", "concurrent-pub", "dedup-open", "dedup-clean", "dedup-resent", "write-steps", "write-steps-nockpt"}
	var got []string
	for _, r := range rep.Results {
		got = append(got, r.Phase)
		if r.Events <= 0 || r.Seconds <= 0 || r.PeakRSSMiB <= 0 {
			t.Errorf("phase %s: events %d, seconds %g, peak RSS %g; want all positive", r.Phase, r.Events, r.Seconds, r.PeakRSSMiB)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("phases = %v, want %v", got, want)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no events", []string{"-events", "0"}},
		{"bad mode", []string{"-mode", "sideways"}},
		{"bad fraction", []string{"-dup-frac", "2"}},
		{"unknown phase", []string{"-only", "ingest,warp"}},
		{"phase without dir", []string{"-phase", "ingest"}},
		{"stray argument", []string{"extra"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if _, err := parse(t.Context(), tt.args, &stderr); err != errUsage {
				t.Fatalf("parse(%q) = %v, want errUsage", tt.args, err)
			}
		})
	}
}
