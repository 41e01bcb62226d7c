package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestJSBoth runs the js-both phase alone on a couple of thousand events
// and checks that it reports its row and leaves no store behind. It checks
// no rate: a slow machine is not a failure.
func TestJSBoth(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Events, cfg.Pool, cfg.Only, cfg.InProcess, cfg.JSON, cfg.Keep = 2000, 500, "js-both", true, true, dir
	var stdout, stderr bytes.Buffer
	if err := Run(t.Context(), cfg, &stdout, &stderr); err != nil {
		t.Fatalf("Run(-only js-both) = %v\nstderr:\n%s", err, stderr.String())
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode report: %v\n%q", err, stdout.String())
	}
	if len(rep.Results) != 1 || rep.Results[0].Phase != "js-both" {
		t.Fatalf("results = %+v, want one js-both row", rep.Results)
	}
	r := rep.Results[0]
	if r.Events != 2000 || r.Seconds <= 0 || r.PerSec <= 0 || r.MBPerSec <= 0 || r.PeakRSSMiB <= 0 || r.HeapPeakMiB <= 0 {
		t.Errorf("js-both row = %+v; want 2000 events and every figure positive", r)
	}
	if got, ok := r.Extra["ack_floor"].(float64); !ok || got != 2000 {
		t.Errorf("js-both ack_floor = %v, want 2000 (every message acked)", r.Extra["ack_floor"])
	}
	if _, err := os.Stat(filepath.Join(dir, scRawBoth)); !os.IsNotExist(err) {
		t.Errorf("stat %s after js-both = %v, want it removed", scRawBoth, err)
	}
}
