// Package otlpin is the OTLP/HTTP receiver of the ingester: POST
// /v1/traces and /v1/logs with a protobuf or JSON body (gzip or not),
// decoded with the OpenTelemetry collector's pdata, mapped by
// internal/adapter/otel (log records join the spans of their trace) and
// published through JetStream like any agent's events (Nats-Msg-Id = the
// event id). Responses follow the OTLP/HTTP specification: 200 with an
// ExportTraceServiceResponse or ExportLogsServiceResponse (partial_success
// when spans were rejected), 400 (permanent) for a body that does not
// decode, a JSON body that is no export request of the path's signal, or
// events the stream will never take, 405, 413 for a body over the limit, 415 for another content
// type or encoding, 503 with Retry-After (retryable) when the events could
// not be delivered now or too many requests are in flight.
package otlpin

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
)

// Path is where the receiver takes traces, LogsPath where it takes logs.
const (
	Path     = "/v1/traces"
	LogsPath = "/v1/logs"
)

const (
	typeProto = "application/x-protobuf"
	typeJSON  = "application/json"
)

// Limits bound what a Handler takes.
type Limits struct {
	// MaxBody: bodies over this many bytes (also after decompression) are
	// refused with 413.
	MaxBody int64
	// MaxRequests: requests past this many in flight are refused at once
	// with 503 and Retry-After, before their body is read.
	MaxRequests int
}

// Retry-After values, in seconds: for a busy receiver, and for a stream
// that cannot take the events now.
const (
	retryBusy   = "1"
	retryStream = "5"
)

// Handler serves POST /v1/traces into a Mapper. deliver is called after the
// spans were consumed and must return once the events are stored in the
// stream (nil), or why not.
type Handler struct {
	m       *otelad.Mapper
	deliver func(context.Context) error
	lim     Limits
	slots   chan struct{} // one per request in flight
	now     func() time.Time
	counts  counts
}

// RequestStats count a Handler's answers past its limits.
type RequestStats struct {
	Busy      int64 // 503: MaxRequests in flight
	TooLarge  int64 // 413: over MaxBody
	Permanent int64 // 400: a body that does not decode, or events the stream never takes
	Retryable int64 // 503: the events could not be delivered now
	Peak      int64 // most requests in flight at once
}

type counts struct {
	busy, tooLarge, permanent, retryable atomic.Int64
	inFlight, peak                       atomic.Int64
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns the handler of m, bounded by lim.
func NewHandler(m *otelad.Mapper, deliver func(context.Context) error, lim Limits) *Handler {
	return &Handler{m: m, deliver: deliver, lim: lim, slots: make(chan struct{}, max(lim.MaxRequests, 1)), now: time.Now}
}

// Stats returns the counts so far.
func (h *Handler) Stats() RequestStats {
	c := &h.counts
	return RequestStats{Busy: c.busy.Load(), TooLarge: c.tooLarge.Load(), Permanent: c.permanent.Load(),
		Retryable: c.retryable.Load(), Peak: c.peak.Load()}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		select {
		case h.slots <- struct{}{}:
			defer func() { <-h.slots; h.counts.inFlight.Add(-1) }()
			n := h.counts.inFlight.Add(1)
			for p := h.counts.peak.Load(); n > p && !h.counts.peak.CompareAndSwap(p, n); p = h.counts.peak.Load() {
			}
		default:
			h.counts.busy.Add(1)
			w.Header().Set("Retry-After", retryBusy)
			ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			h.fail(w, ct, http.StatusServiceUnavailable, fmt.Errorf("busy: %d requests in flight, the most this receiver takes at once", cap(h.slots)))
			return
		}
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: POST OTLP traces", http.StatusMethodNotAllowed)
		return
	}
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != typeProto && ct != typeJSON {
		http.Error(w, fmt.Sprintf("unsupported content type %q: send %s or %s", r.Header.Get("Content-Type"), typeProto, typeJSON), http.StatusUnsupportedMediaType)
		return
	}
	body, status, err := h.read(r)
	if err != nil {
		h.fail(w, ct, status, err)
		return
	}
	logs := r.URL.Path == LogsPath
	if ct == typeJSON {
		if err := notOTLP(body, logs); err != nil {
			h.fail(w, ct, http.StatusBadRequest, err)
			return
		}
	}
	var c otelad.Consumed
	if logs {
		req := plogotlp.NewExportRequest()
		if err := unmarshal(req, ct, body); err != nil {
			h.fail(w, ct, http.StatusBadRequest, fmt.Errorf("decode %s logs body: %w", ct, err))
			return
		}
		c, err = h.m.ConsumeLogs(r.Context(), req.Logs(), h.now())
	} else {
		req := ptraceotlp.NewExportRequest()
		if err := unmarshal(req, ct, body); err != nil {
			h.fail(w, ct, http.StatusBadRequest, fmt.Errorf("decode %s body: %w", ct, err))
			return
		}
		c, err = h.m.Consume(r.Context(), req.Traces(), h.now())
	}
	if err == nil {
		err = h.deliver(r.Context())
	}
	if err != nil {
		if permanent(err) {
			h.fail(w, ct, http.StatusBadRequest, fmt.Errorf("events the stream never takes: %w", err))
			return
		}
		w.Header().Set("Retry-After", retryStream)
		h.fail(w, ct, http.StatusServiceUnavailable, fmt.Errorf("deliver events: %w", err))
		return
	}
	var resp message
	if logs {
		resp = plogotlp.NewExportResponse()
	} else {
		tr := ptraceotlp.NewExportResponse()
		if c.Rejected > 0 {
			tr.PartialSuccess().SetRejectedSpans(c.Rejected)
			tr.PartialSuccess().SetErrorMessage(fmt.Sprintf("%d spans without a trace id or span id", c.Rejected))
		}
		resp = tr
	}
	b, err := marshal(resp, ct)
	if err != nil {
		h.fail(w, ct, http.StatusInternalServerError, fmt.Errorf("encode response: %w", err))
		return
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// message is an OTLP export request or response of pdata.
type message interface {
	MarshalJSON() ([]byte, error)
	MarshalProto() ([]byte, error)
}

// unmarshal decodes body of content type ct into req.
func unmarshal(req interface {
	UnmarshalJSON([]byte) error
	UnmarshalProto([]byte) error
}, ct string, body []byte) error {
	if ct == typeJSON {
		return req.UnmarshalJSON(body)
	}
	return req.UnmarshalProto(body)
}

// marshal encodes m in content type ct.
func marshal(m message, ct string) ([]byte, error) {
	if ct == typeJSON {
		return m.MarshalJSON()
	}
	return m.MarshalProto()
}

// notOTLP is the error of a JSON body that is no export request of the
// path's signal (pdata's decoder takes any object, unknown members
// ignored): {"foo": 1}, a framework's own trace dump, logs sent to
// /v1/traces. An empty object is an empty request, taken.
func notOTLP(body []byte, logs bool) error {
	want := otelad.SignalTraces
	if logs {
		want = otelad.SignalLogs
	}
	signal, what := otelad.SignalOf(body)
	switch {
	case signal == want:
		return nil
	case signal != "":
		return fmt.Errorf("an OTLP %s export sent to the %s path: send it to /v1/%s", signal, want, signal)
	case what == "an empty JSON object":
		return nil
	}
	return fmt.Errorf("not an OTLP %s export request: %s", want, what)
}

// read returns the request body, decompressed, or the status to answer.
func (h *Handler) read(r *http.Request) ([]byte, int, error) {
	maxBody := h.lim.MaxBody
	var in io.Reader = http.MaxBytesReader(nil, r.Body, maxBody)
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("read gzip body: %w", err)
		}
		defer zr.Close()
		in = zr
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("unsupported content encoding %q: send gzip or none", enc)
	}
	// The limit applies to the decompressed body too.
	b, err := io.ReadAll(io.LimitReader(in, maxBody+1))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || int64(len(b)) > maxBody:
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", maxBody)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("read body: %w", err)
	}
	return b, 0, nil
}

// fail answers with status and a google.rpc.Status carrying err, encoded in
// the request's content type, as OTLP/HTTP asks.
func (h *Handler) fail(w http.ResponseWriter, ct string, status int, err error) {
	switch status {
	case http.StatusRequestEntityTooLarge:
		h.counts.tooLarge.Add(1)
	case http.StatusBadRequest:
		h.counts.permanent.Add(1)
	case http.StatusServiceUnavailable:
		if w.Header().Get("Retry-After") != retryBusy {
			h.counts.retryable.Add(1)
		}
	}
	if ct != typeJSON {
		ct = typeProto
	}
	st := &spb.Status{Code: grpcCode(status), Message: err.Error()}
	var b []byte
	if ct == typeJSON {
		b, _ = protojson.Marshal(st)
	} else {
		b, _ = proto.Marshal(st)
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	w.Write(b)
}

// permanent reports whether err says the events will never be taken, so
// that sending them again is pointless: an event over the max payload, a
// refusal by JetStream itself (wrong stream, message too large), a bad
// subject. Everything else (no server, a timeout) may pass on a retry.
func permanent(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, ErrTooLarge) || errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, nats.ErrInvalidMsg) || errors.As(err, &apiErr)
}

// grpcCode is the gRPC status code matching an HTTP status.
func grpcCode(status int) int32 {
	switch status {
	case http.StatusBadRequest, http.StatusUnsupportedMediaType:
		return 3 // INVALID_ARGUMENT
	case http.StatusRequestEntityTooLarge:
		return 8 // RESOURCE_EXHAUSTED
	case http.StatusServiceUnavailable:
		return 14 // UNAVAILABLE
	}
	return 13 // INTERNAL
}
