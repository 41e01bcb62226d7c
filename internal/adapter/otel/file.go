package otel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/adapter/records"
)

// LineError is a line of an OTLP JSON file that did not decode; it is
// skipped.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadJSONLines maps an OTLP JSON file as the collector's file exporter
// writes it: one ExportTraceServiceRequest in JSON per line, each at most
// max bytes (records.DefaultMax when max is not positive). A line that does
// not decode, holds no span or is too long goes to onErr and is skipped. At
// the end of r the input is complete: every trace with a GenAI span is
// mapped (Mapper.Flush).
func ReadJSONLines(ctx context.Context, r io.Reader, max int, m *Mapper, onErr func(*LineError)) error {
	lr := records.NewLines(r, max)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := lr.Next()
		n := lr.N()
		switch {
		case errors.Is(err, io.EOF):
			return m.Flush(ctx)
		case errors.Is(err, records.ErrTooLong):
			onErr(&LineError{Line: n, Err: fmt.Errorf("longer than %d bytes: %w", lr.Max(), err)})
			continue
		case err != nil:
			return fmt.Errorf("read OTLP JSON line %d: %w", n+1, err)
		}
		line = bytes.TrimSpace(line)
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
}
