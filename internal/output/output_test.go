package output_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/output"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// session sends one synth session into out and returns its event count.
func session(tb testing.TB, ctx context.Context, out agent.Sink) int {
	tb.Helper()
	n, err := synth.New(5, time.Date(2026, 11, 6, 0, 0, 0, 0, time.UTC)).Session(ctx, out)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func TestJSONL(t *testing.T) {
	var stdout bytes.Buffer
	file := filepath.Join(t.TempDir(), "out.jsonl")
	for _, name := range []string{"-", file} {
		out, err := output.JSONL(name, &stdout)
		if err != nil {
			t.Fatal(err)
		}
		n := session(t, t.Context(), out)
		if err := out.Close(t.Context()); err != nil {
			t.Fatalf("%s: Close = %v", name, err)
		}
		got := stdout.String()
		if name != "-" {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got = string(b)
		}
		if lines := strings.Count(got, "\n"); lines != n || out.Where != name {
			t.Errorf("%s: %d lines written to %q, want %d to %q", name, lines, out.Where, n, name)
		}
	}
}

// Close delivers what was sent even after the producer's context is done
// (an interrupt): within CloseTimeout, not within the cancelled context.
func TestPublishCloseAfterCancel(t *testing.T) {
	_, _, js := testkit.Embedded(t)
	stream, err := bus.EnsureStream(t.Context(), js, bus.DefaultStream())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	out, err := output.Publish(js, nil, agent.PublisherConfig{}, "EVO")
	if err != nil {
		t.Fatal(err)
	}
	n := session(t, ctx, out)
	cancel()
	if err := out.Close(ctx); err != nil {
		t.Fatalf("Close after cancel = %v, want the events delivered", err)
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(n) {
		t.Fatalf("stream holds %d messages, want %d", info.State.Msgs, n)
	}
}

// Deliver returns once JetStream holds every event sent before it, with
// the output still open.
func TestPublishDeliver(t *testing.T) {
	_, _, js := testkit.Embedded(t)
	stream, err := bus.EnsureStream(t.Context(), js, bus.DefaultStream())
	if err != nil {
		t.Fatal(err)
	}
	out, err := output.Publish(js, nil, agent.PublisherConfig{}, "EVO")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close(t.Context())
	n := session(t, t.Context(), out)
	if err := out.Deliver(t.Context()); err != nil {
		t.Fatalf("Deliver = %v", err)
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(n) {
		t.Fatalf("after Deliver the stream holds %d messages, want %d", info.State.Msgs, n)
	}
}
