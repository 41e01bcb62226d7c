package agent

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/evosignal/evosignal/internal/events"
)

// JSONLWriter writes events as JSON lines (one event a line), the format
// `ingest -file` loads. Safe for concurrent use; call Flush at the end.
type JSONLWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

// NewJSONLWriter writes to w.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	return &JSONLWriter{w: bufio.NewWriterSize(w, 1<<16)}
}

// Send writes e as one line.
func (j *JSONLWriter) Send(_ context.Context, e *events.Event) error {
	b, err := encode(e)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.w.Write(b); err != nil {
		return err
	}
	return j.w.WriteByte('\n')
}

// Flush writes out what is buffered.
func (j *JSONLWriter) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.w.Flush()
}

var _ Sink = (*JSONLWriter)(nil)
