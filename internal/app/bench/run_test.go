package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/workshop/bench"
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
	want := []string{"js-publish", "js-consume", "js-both", "duckdb-append", "publish", "ingest",
		"concurrent", "concurrent-pub", "export", "dedup-open", "dedup-clean", "dedup-resent", "write-steps", "write-steps-nockpt", "write-steps-store"}
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

// TestCurve runs the phases whose cost grows with the database at two N
// and checks that the report has a point for each, with every leg filled.
func TestCurve(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-events", "1500,3000", "-only", "publish,ingest,concurrent,export", "-in-process", "-json"}
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run(%q) = %v\nstderr:\n%s", args, err, stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, stdout.String())
	}
	if len(rep.Curve) != 2 || rep.Curve[0].Events != 1500 || rep.Curve[1].Events != 3000 {
		t.Fatalf("curve = %+v, want points at 1500 and 3000 events", rep.Curve)
	}
	for _, p := range rep.Curve {
		for name, l := range map[string]bench.Leg{"ingest": p.Ingest, "concurrent": p.Concurrent, "export": p.Export} {
			if l.Seconds <= 0 || l.PerSec <= 0 || l.PeakRSSMiB <= 0 || l.VsFirst <= 0 {
				t.Errorf("%d events, %s: %+v; want every figure positive", p.Events, name, l)
			}
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no events", []string{"-events", "0"}},
		{"no events in a curve", []string{"-events", "1000,0"}},
		{"not a number", []string{"-events", "1000,many"}},
		{"bad mode", []string{"-mode", "sideways"}},
		{"bad fraction", []string{"-dup-frac", "2"}},
		{"unknown phase", []string{"-only", "ingest,warp"}},
		{"phase without dir", []string{"-phase", "ingest"}},
		{"stray argument", []string{"extra"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if _, err := parse(t.Context(), tt.args, &stderr); err != cli.ErrUsage {
				t.Fatalf("parse(%q) = %v, want cli.ErrUsage", tt.args, err)
			}
		})
	}
}

// TestChildArgs: each phase re-runs the bench's own executable, so under
// evosignal the phase's command line must start with "bench" (evosignal
// would take -phase for a command), and standalone with the flags.
func TestChildArgs(t *testing.T) {
	for _, c := range []struct {
		ctx  context.Context
		want []string
	}{
		{t.Context(), nil},
		{cli.WithProg(t.Context(), cli.Prog{Name: "evosignal"}), []string{"bench"}},
	} {
		var errOut bytes.Buffer
		cfg, err := parse(c.ctx, []string{"-events", "1000"}, &errOut)
		if err != nil {
			t.Fatalf("parse: %v\n%s", err, errOut.String())
		}
		if !slices.Equal(cfg.ChildArgs, c.want) {
			t.Errorf("ChildArgs = %q, want %q", cfg.ChildArgs, c.want)
		}
	}
}
