package claudecode_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/adapter/claudecode"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// TestOpenSessionsBounded: sessions that never end are dropped as
// abandoned past MaxOpen, the oldest first, without an end (issue 28,
// row 11: 1M of them held 1.34 GB, none ever dropped).
func TestOpenSessionsBounded(t *testing.T) {
	const n, maxOpen = 20000, 100
	var in bytes.Buffer
	for i := range n {
		fmt.Fprintf(&in, `{"time":"2026-12-01T10:00:00Z","hook":{"session_id":"s%d","prompt_id":"p","hook_event_name":"UserPromptSubmit","prompt":"go"}}`+"\n", i)
	}
	s := &sink{}
	tr, err := claudecode.NewTranslator(claudecode.Config{Agent: "claude-code", Source: source, Plan: plandialect.DefaultConfig(), MaxOpen: maxOpen}, s, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Read(context.Background(), &in, func(e *claudecode.RecordError) { t.Errorf("malformed: %v", e) }); err != nil {
		t.Fatal(err)
	}
	if got := len(tr.Sessions); got != maxOpen {
		t.Errorf("%d sessions open, want %d", got, maxOpen)
	}
	c := tr.Stats()
	if c.Evicted != n-maxOpen || c.Sessions != n {
		t.Errorf("evicted %d of %d sessions, want %d of %d", c.Evicted, c.Sessions, n-maxOpen, n)
	}
	if err := tr.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := tr.Stats(); c.Open != maxOpen || c.Ended != 0 {
		t.Errorf("at the end %d open, %d ended; want %d open, none ended (an abandoned session gets no end)", c.Open, c.Ended, maxOpen)
	}
}
