package skilllite

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
)

// chunks hands out one chunk a Read, then err (io.EOF when nil).
type chunks struct {
	parts []string
	err   error
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	if c.parts[0] = c.parts[0][n:]; c.parts[0] == "" {
		c.parts = c.parts[1:]
	}
	return n, nil
}

func TestReadLines(t *testing.T) {
	lines := []string{
		`{"method":"agent_chat","params":{"message":"g"}}` + "\n",
		"not json\n",
		`{"event":"task_plan","data":{"tasks":[{"id":1,"description":"a"}]}}` + "\n",
		"\n",
		`{"event":"done","data":{"task_completed":true}}` + "\n",
	}
	tests := []struct {
		name    string
		parts   []string
		flushed []int // events written out at each flush
	}{
		// Each line arrives alone: what is translated is let out before
		// waiting for the next; a turn's events are out once it ends.
		{"a line a read", lines, []int{0, 0, 0, 0, 3}},
		// Everything arrives at once: one flush, after the last line.
		{"one read", []string{strings.Join(lines, "")}, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := agent.NewJSONLWriter(&buf)
			tr := NewTranslator(testConfig, w, testClock())
			var bad []int
			var flushed []int
			err := tr.ReadLines(t.Context(), &chunks{parts: slices.Clone(tt.parts)},
				func(e *LineError) { bad = append(bad, e.Line) },
				func() error {
					err := w.Flush()
					flushed = append(flushed, bytes.Count(buf.Bytes(), []byte("\n")))
					return err
				})
			if err != nil {
				t.Fatalf("ReadLines: %v", err)
			}
			if !slices.Equal(bad, []int{2}) {
				t.Errorf("malformed lines %v, want [2]", bad)
			}
			if !slices.Equal(flushed, tt.flushed) {
				t.Errorf("events out at each flush %v, want %v", flushed, tt.flushed)
			}
			if got, want := tr.Stats(), (Counts{Lines: 5, Events: 3, Sessions: 1, Malformed: 1}); got != want {
				t.Errorf("Stats() = %+v, want %+v", got, want)
			}
		})
	}
}

func TestReadLinesStops(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	line := `{"method":"agent_chat","params":{"message":"g"}}` + "\n"
	boom := errors.New("boom")
	tests := []struct {
		name  string
		ctx   context.Context
		in    io.Reader
		flush func() error
		want  string
		is    error
	}{
		{"ctx done", cancelled, strings.NewReader(line), nil, "interrupted before line 1: context canceled", context.Canceled},
		{"input fails", t.Context(), &chunks{parts: []string{line}, err: boom}, nil, "read line 2: boom", boom},
		{"flush fails", t.Context(), strings.NewReader(line), func() error { return boom }, "write events: boom", boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTranslator(testConfig, agent.NewJSONLWriter(io.Discard), time.Now)
			err := tr.ReadLines(tt.ctx, tt.in, nil, tt.flush)
			if err == nil || err.Error() != tt.want || !errors.Is(err, tt.is) {
				t.Fatalf("ReadLines = %v, want %q wrapping %v", err, tt.want, tt.is)
			}
		})
	}
}
