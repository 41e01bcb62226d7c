package skilllite

import (
	"bytes"
	"context"
	"errors"
	"github.com/evosignal/evosignal/internal/adapter/records"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
)

const fixtures = "../../../testdata/bridge"

// testConfig is the translator configuration of the tests.
var testConfig = Config{
	Agent: "skilllite", Source: "skilllite/bridge/test-host", AgentVersion: "0.9.4", Model: "unknown",
	Tools: []string{"complete_task", "update_task_plan"},
}

// testClock starts at 2026-03-02T00:00:00Z and advances one second a call.
func testClock() func() time.Time {
	at := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		at = at.Add(time.Second)
		return at
	}
}

// translated is what translating an input gave.
type translated struct {
	events []*events.Event // decoded from the JSON lines written
	bad    []int           // line numbers reported malformed
	stats  Counts
	models int64 // of events, the agent.model.called ones
}

// translate runs the translator over input and decodes every event it
// wrote: each must pass events.Decode (the contract).
func translate(tb testing.TB, input []byte) translated {
	tb.Helper()
	return translateWith(tb, testConfig, input)
}

// translateWith is translate with the translator configuration cfg.
func translateWith(tb testing.TB, cfg Config, input []byte) translated {
	tb.Helper()
	var buf bytes.Buffer
	w := agent.NewJSONLWriter(&buf)
	tr := NewTranslator(cfg, w, testClock())
	var res translated
	lr := records.NewLines(bytes.NewReader(input), 0)
	ctx := context.Background()
	for {
		raw, err := lr.Next()
		n := lr.N()
		if errors.Is(err, records.ErrTooLong) {
			err = tr.tooLong(n, lr.Max())
		} else if err != nil {
			break
		} else {
			err = tr.Line(ctx, n, raw)
		}
		var le *LineError
		switch {
		case errors.As(err, &le):
			if le.Line != n {
				tb.Fatalf("line %d reported as line %d", n, le.Line)
			}
			res.bad = append(res.bad, n)
		case err != nil:
			tb.Fatalf("line %d: %v", n, err)
		}
	}
	if err := tr.Close(ctx); err != nil {
		tb.Fatalf("Close: %v", err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	res.stats = tr.Stats()
	res.events = adaptertest.DecodeLines(tb, buf.Bytes())
	for _, e := range res.events {
		if e.Type == events.ModelCalled {
			res.models++
		}
	}
	if int64(len(res.events)) != res.stats.Events {
		tb.Fatalf("%d events written, stats say %d", len(res.events), res.stats.Events)
	}
	return res
}

func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// renderAll renders the plan signals of res: its events but the model
// calls, agent.session.ended without its usage (TestModelCalls checks
// those).
func renderAll(tb testing.TB, res translated) []string {
	tb.Helper()
	var got []string
	for _, e := range res.events {
		if e.Type == events.ModelCalled {
			continue
		}
		r, _, _ := strings.Cut(adaptertest.Render(tb, e), " usage=")
		got = append(got, r)
	}
	return got
}

// planStats are res's counts as renderAll shows its events: the model
// calls not among them.
func planStats(res translated) Counts {
	c := res.stats
	c.Events -= res.models
	return c
}
