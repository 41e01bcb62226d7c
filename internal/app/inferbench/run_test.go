package inferbench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-testdata", "../../../testdata", "-sessions", "5", "-tune-seeds", "1", "-report-seeds", "2", "-json"}, &out, &errOut); err != nil {
		t.Fatalf("run: %v (stderr %s)", err, errOut.String())
	}
	var rep struct {
		Rule        string `json:"rule"`
		PerScenario []struct {
			Name string `json:"name"`
		} `json:"per_scenario"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Rule == "" || len(rep.PerScenario) != 7 {
		t.Fatalf("run -json printed %s (%v); want a rule and 7 scenarios", out.String(), err)
	}
}

func TestRunFlagErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-tune-seeds", "x", "-report-seeds", ""}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `seed "x"`) || !strings.Contains(err.Error(), "no seed") {
		t.Fatalf("run(bad seeds) = %v, want both seed problems", err)
	}
}
