// Package otlpin is the OTLP/HTTP trace receiver of the ingester: POST
// /v1/traces with a protobuf or JSON body (gzip or not), decoded with the
// OpenTelemetry collector's pdata, mapped by internal/adapter/otel and
// published through JetStream like any agent's events (Nats-Msg-Id = the
// event id). Responses follow the OTLP/HTTP specification: 200 with an
// ExportTraceServiceResponse (partial_success when spans were rejected),
// 400 for a body that does not decode, 405, 413 for a body over the limit,
// 415 for another content type or encoding, 503 (retryable) when the events
// could not be delivered.
package otlpin

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
)

// Path is where the receiver takes traces.
const Path = "/v1/traces"

const (
	typeProto = "application/x-protobuf"
	typeJSON  = "application/json"
)

// Handler serves POST /v1/traces into a Mapper. deliver is called after the
// spans were consumed and must return once the events are stored in the
// stream (nil), or why not.
type Handler struct {
	m       *otelad.Mapper
	deliver func(context.Context) error
	maxBody int64
	now     func() time.Time
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns the handler of m; bodies over maxBody bytes (after
// decompression) are refused with 413.
func NewHandler(m *otelad.Mapper, deliver func(context.Context) error, maxBody int64) *Handler {
	return &Handler{m: m, deliver: deliver, maxBody: maxBody, now: time.Now}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	req := ptraceotlp.NewExportRequest()
	if ct == typeJSON {
		err = req.UnmarshalJSON(body)
	} else {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		h.fail(w, ct, http.StatusBadRequest, fmt.Errorf("decode %s body: %w", ct, err))
		return
	}
	rejected, err := h.m.Consume(r.Context(), req.Traces(), h.now())
	if err == nil {
		err = h.deliver(r.Context())
	}
	if err != nil {
		w.Header().Set("Retry-After", "5")
		h.fail(w, ct, http.StatusServiceUnavailable, fmt.Errorf("deliver events: %w", err))
		return
	}
	resp := ptraceotlp.NewExportResponse()
	if rejected > 0 {
		resp.PartialSuccess().SetRejectedSpans(rejected)
		resp.PartialSuccess().SetErrorMessage(fmt.Sprintf("%d spans without a trace id or span id", rejected))
	}
	var b []byte
	if ct == typeJSON {
		b, err = resp.MarshalJSON()
	} else {
		b, err = resp.MarshalProto()
	}
	if err != nil {
		h.fail(w, ct, http.StatusInternalServerError, fmt.Errorf("encode response: %w", err))
		return
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// read returns the request body, decompressed, or the status to answer.
func (h *Handler) read(r *http.Request) ([]byte, int, error) {
	var in io.Reader = http.MaxBytesReader(nil, r.Body, h.maxBody)
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
	b, err := io.ReadAll(io.LimitReader(in, h.maxBody+1))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || int64(len(b)) > h.maxBody:
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", h.maxBody)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("read body: %w", err)
	}
	return b, 0, nil
}

// fail answers with status and a google.rpc.Status carrying err, encoded in
// the request's content type, as OTLP/HTTP asks.
func (h *Handler) fail(w http.ResponseWriter, ct string, status int, err error) {
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
