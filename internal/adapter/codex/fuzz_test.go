package codex_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter/codex"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// checkSink fails the test on an event that does not pass the contract.
type checkSink struct{ tb testing.TB }

var _ agent.Sink = checkSink{}

func (s checkSink) Send(_ context.Context, e *events.Event) error {
	if err := e.Validate(); err != nil {
		s.tb.Fatalf("event does not pass the contract: %v", err)
	}
	return nil
}

// FuzzLine: whatever a rollout holds, DecodeLine fails or decodes, and the
// translator emits only events that pass the contract and fails only on
// lines it reports as malformed. Seeded with every line of both captures.
func FuzzLine(f *testing.F) {
	for _, dir := range []string{"codex", "codex-code-mode"} {
		b, err := os.ReadFile(capture(f, dir))
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if len(line) > 0 && len(line) < 64<<10 {
				f.Add(line)
			}
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, line := range bytes.Split(b, []byte("\n")) {
			_, _ = codex.DecodeLine(line)
		}
		tr, err := codex.NewTranslator(codex.Config{Agent: "codex", Source: source, Model: "unknown", Plan: plandialect.DefaultConfig()}, checkSink{t})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		// a session_meta first, so that every line is read as a thread's
		meta := []byte(`{"timestamp":"2026-12-01T00:00:00Z","type":"session_meta","payload":{"id":"t"}}` + "\n")
		if err := tr.Read(ctx, bytes.NewReader(append(meta, b...)), func(*codex.LineError) {}); err != nil && !errors.Is(err, bytes.ErrTooLarge) {
			t.Fatalf("Read: %v", err)
		}
		if err := tr.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
