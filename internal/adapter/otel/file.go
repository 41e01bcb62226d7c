package otel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/adapter/records"
)

// LineError is a record of an OTLP JSON file that did not decode; it is
// skipped.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// NotOTLPError is the error of a file whose first record is JSON but not an
// OTLP export: the file is refused, not skipped record by record.
type NotOTLPError struct {
	Line int
	What string // what was found instead
}

func (e *NotOTLPError) Error() string {
	return fmt.Sprintf("line %d: not an OTLP export: %s; an OTLP JSON file holds export requests, {\"resourceSpans\": […]} (traces) or {\"resourceLogs\": […]} (logs), one a line as the collector's file exporter writes them, or one document, pretty-printed or not", e.Line, e.What)
}

// ReadJSON maps an OTLP JSON file: export requests (traces or logs) one
// after the other, one a line as the collector's file exporter writes
// them, or pretty-printed over many lines, or one document; a top-level
// array is its elements. Each is at most max bytes (records.DefaultMax when
// max is not positive). A request that does not decode, holds nothing or
// is too long goes to onErr and is skipped; a first record that is JSON but
// no OTLP export refuses the file (*NotOTLPError). At the end of r the
// input is complete: every trace with a GenAI span is mapped
// (Mapper.Flush).
//
// The file's clock is its records: each record read is a millisecond of
// Mapper's time (Config.Settle 1 s = 1,000 records, Linger 30 s = 30,000),
// and the mapper is swept after each, so that a file maps the same way
// however fast it is read, and holds only the traces still open.
func ReadJSON(ctx context.Context, r io.Reader, max int, m *Mapper, onErr func(*LineError)) error {
	exports := 0
	err := records.ReadValues(ctx, r, max, func(ctx context.Context, line int, raw []byte) error {
		now := fileClock(exports)
		signal, what := SignalOf(raw)
		switch {
		case signal == "" && exports == 0:
			return &NotOTLPError{Line: line, What: what}
		case signal == "":
			onErr(&LineError{Line: line, Err: fmt.Errorf("not an OTLP export: %s", what)})
			return nil
		}
		exports++
		n, err := consumeJSON(ctx, m, signal, raw, now)
		if err == nil {
			err = m.Sweep(ctx, now)
		}
		switch {
		case err != nil && errors.Is(err, errDecode):
			onErr(&LineError{Line: line, Err: err})
		case err != nil:
			return err
		case n == 0:
			onErr(&LineError{Line: line, Err: fmt.Errorf("an OTLP %s export with nothing in it", signal)})
		}
		return nil
	}, func(b *records.Bad) {
		onErr(&LineError{Line: b.Line, Err: b.Err})
	})
	if err != nil {
		return err
	}
	return m.Flush(ctx)
}

var errDecode = errors.New("decode OTLP JSON")

// consumeJSON decodes raw, an export request of signal, and hands it to m;
// it returns the spans or log records it held.
func consumeJSON(ctx context.Context, m *Mapper, signal string, raw []byte, now time.Time) (int, error) {
	switch signal {
	case SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalJSON(raw); err != nil {
			return 0, fmt.Errorf("%w: %v", errDecode, err)
		}
		_, err := m.Consume(ctx, req.Traces(), now)
		return req.Traces().SpanCount(), err
	default:
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalJSON(raw); err != nil {
			return 0, fmt.Errorf("%w: %v", errDecode, err)
		}
		_, err := m.ConsumeLogs(ctx, req.Logs(), now)
		return req.Logs().LogRecordCount(), err
	}
}

// fileClock is the mapper's time at the n-th record of a file.
func fileClock(n int) time.Time { return time.Unix(0, 0).Add(time.Duration(n) * time.Millisecond) }

// The OTLP signals read, as SignalOf names them.
const (
	SignalTraces = "traces"
	SignalLogs   = "logs"
)

// SignalOf tells which OTLP export request raw, a JSON value, is by its
// top-level members (resourceSpans, resourceLogs, or their protobuf
// names): SignalTraces, SignalLogs, or "" for neither, with what was found
// instead (for the error). An empty object is an empty request of no
// signal.
func SignalOf(raw []byte) (signal, what string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return "", "a JSON " + records.JSONKind(raw)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return "", "JSON that does not decode as an object"
	}
	for k := range top {
		switch k {
		case "resourceSpans", "resource_spans":
			return SignalTraces, ""
		case "resourceLogs", "resource_logs":
			return SignalLogs, ""
		}
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 8 {
		keys = append(keys[:8], "…")
	}
	switch {
	case len(keys) == 0:
		return "", "an empty JSON object"
	case hasAny(top, "resourceMetrics", "resource_metrics"):
		return "", "an OTLP metrics export (only traces and logs are read)"
	}
	return "", "a JSON object with members " + strings.Join(keys, ", ")
}

func hasAny(m map[string]json.RawMessage, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}
