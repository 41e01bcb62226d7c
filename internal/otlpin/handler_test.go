package otlpin_test

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/evosignal/evosignal/agent"
	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/otlpin"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/oteltest"
)

type discard struct{ n int }

func (d *discard) Send(context.Context, *events.Event) error { d.n++; return nil }

func gz(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// TestHandlerResponses checks the answers OTLP/HTTP specifies.
func TestHandlerResponses(t *testing.T) {
	ss := adaptertest.Generate(1, 1, []string{"TodoWrite"}, genStart, false)
	td := ptrace.NewTraces()
	for _, x := range oteltest.Exports(1, ss) {
		x.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	req := ptraceotlp.NewExportRequestFromTraces(td)
	protoBody, _ := req.MarshalProto()
	jsonBody, _ := req.MarshalJSON()
	bad := ptrace.NewTraces()
	td.ResourceSpans().CopyTo(bad.ResourceSpans())
	bad.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("no ids")
	partial, _ := ptraceotlp.NewExportRequestFromTraces(bad).MarshalJSON()
	const limit = 1 << 16

	tests := []struct {
		name, method, ctype, enc string
		path                     string // otlpin.Path when empty
		body                     []byte
		deliverErr               error
		status                   int
		rejected                 int64
		events                   bool
	}{
		{name: "protobuf", ctype: "application/x-protobuf", body: protoBody, status: 200, events: true},
		{name: "json", ctype: "application/json", body: jsonBody, status: 200, events: true},
		{name: "gzip json", ctype: "application/json; charset=utf-8", enc: "gzip", body: gz(jsonBody), status: 200, events: true},
		{name: "partial success", ctype: "application/json", body: partial, status: 200, rejected: 1, events: true},
		{name: "GET", method: http.MethodGet, ctype: "application/json", status: 405},
		{name: "text", ctype: "text/plain", body: jsonBody, status: 415},
		{name: "brotli", ctype: "application/json", enc: "br", body: jsonBody, status: 415},
		{name: "bad protobuf", ctype: "application/x-protobuf", body: []byte("\xff\xff\xff"), status: 400},
		{name: "bad json", ctype: "application/json", body: []byte(`{"resourceSpans": 3}`), status: 400},
		{name: "not OTLP", ctype: "application/json", body: []byte(`{"foo": 1}`), status: 400},
		{name: "a span dump", ctype: "application/json", body: []byte(`[{"name": "call_llm", "span_id": 3}]`), status: 400},
		{name: "empty request", ctype: "application/json", body: []byte(`{}`), status: 200},
		{name: "logs on the traces path", ctype: "application/json", body: []byte(`{"resourceLogs": []}`), status: 400},
		{name: "traces on the logs path", path: otlpin.LogsPath, ctype: "application/json", body: jsonBody, status: 400},
		{name: "empty logs", path: otlpin.LogsPath, ctype: "application/json", body: []byte(`{"resourceLogs": []}`), status: 200},
		{name: "bad gzip", ctype: "application/json", enc: "gzip", body: jsonBody, status: 400},
		{name: "too large", ctype: "application/json", body: bytes.Repeat([]byte(" "), limit+1), status: 413},
		{name: "too large unzipped", ctype: "application/json", enc: "gzip", body: gz(bytes.Repeat([]byte(" "), 4*limit)), status: 413},
		{name: "stream down", ctype: "application/x-protobuf", body: protoBody, deliverErr: errors.New("no responders"), status: 503, events: true},
		// A permanent error is never "retry".
		{name: "over max payload", ctype: "application/x-protobuf", body: protoBody, deliverErr: &agent.DeliveryError{ID: "x", Err: nats.ErrMaxPayload}, status: 400, events: true},
		{name: "refused by JetStream", ctype: "application/json", body: jsonBody, deliverErr: &agent.DeliveryError{ID: "x", Err: &jetstream.APIError{Code: 400, Description: "message size exceeds maximum allowed"}}, status: 400, events: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &discard{}
			m, err := otelad.New(otelad.DefaultConfig(), sink)
			if err != nil {
				t.Fatal(err)
			}
			h := otlpin.NewHandler(m, func(context.Context) error { return tt.deliverErr }, otlpin.Limits{MaxBody: limit, MaxRequests: 1})
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			path := cmp.Or(tt.path, otlpin.Path)
			r := httptest.NewRequest(method, path, bytes.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.ctype)
			if tt.enc != "" {
				r.Header.Set("Content-Encoding", tt.enc)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			raw, _ := io.ReadAll(w.Result().Body)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %q", w.Code, tt.status, raw)
			}
			if got := sink.n > 0; got != tt.events {
				t.Errorf("%d events emitted, want some: %v", sink.n, tt.events)
			}
			json := strings.HasPrefix(tt.ctype, "application/json")
			switch {
			case tt.status == 200 && path == otlpin.LogsPath:
				res := plogotlp.NewExportResponse()
				if err := res.UnmarshalJSON(raw); err != nil {
					t.Errorf("logs response %q: %v", raw, err)
				}
			case tt.status == 200:
				res := ptraceotlp.NewExportResponse()
				if json {
					err = res.UnmarshalJSON(raw)
				} else {
					err = res.UnmarshalProto(raw)
				}
				if err != nil || res.PartialSuccess().RejectedSpans() != tt.rejected {
					t.Errorf("response %q (%v): want %d rejected spans", raw, err, tt.rejected)
				}
				if tt.rejected > 0 && res.PartialSuccess().ErrorMessage() == "" {
					t.Error("partial success without an error message")
				}
			case tt.status == 503:
				if w.Header().Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
				}
			case tt.status == 400 || tt.status == 413:
				var st spb.Status
				if json {
					err = protojson.Unmarshal(raw, &st)
				} else {
					err = proto.Unmarshal(raw, &st)
				}
				if err != nil || st.Message == "" {
					t.Errorf("error body %q does not hold a google.rpc.Status with a message (%v)", raw, err)
				}
			}
		})
	}
}
