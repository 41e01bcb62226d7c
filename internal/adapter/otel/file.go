package otel

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// maxLine is the longest line ReadJSONLines takes: one export request.
const maxLine = 64 << 20

// LineError is a line of an OTLP JSON file that did not decode; it is
// skipped.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadJSONLines maps an OTLP JSON file as the collector's file exporter
// writes it: one ExportTraceServiceRequest in JSON per line. A line that
// does not decode, or holds no span, goes to onErr and is skipped. At the end of r the input is
// complete: every trace with an agent span is mapped (Mapper.Flush).
func ReadJSONLines(ctx context.Context, r io.Reader, m *Mapper, onErr func(*LineError)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	for n := 1; sc.Scan(); n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalJSON(line); err != nil {
			onErr(&LineError{Line: n, Err: fmt.Errorf("decode OTLP JSON: %w", err)})
			continue
		}
		if req.Traces().SpanCount() == 0 {
			onErr(&LineError{Line: n, Err: errors.New("no spans: not an OTLP ExportTraceServiceRequest")})
			continue
		}
		if _, err := m.Consume(ctx, req.Traces(), time.Now()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read OTLP JSON lines: %w", err)
	}
	return m.Flush(ctx)
}
