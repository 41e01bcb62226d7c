// Package otlpcapture is an OTLP/HTTP sink for tests and fixture capture:
// it takes POST /v1/traces, /v1/logs and /v1/metrics (protobuf or JSON,
// gzip or not), answers 200 with an empty export response in the request's
// encoding, and keeps every request decoded, so that a test can read what a
// real SDK or CLI exported and write it as the collector's file exporter
// does (one export request as JSON per line). It maps nothing: it is the
// recorder in front of which the real clients' output becomes fixtures.
package otlpcapture

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"sync"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// The signals, as the last element of their OTLP/HTTP path.
const (
	Traces  = "traces"
	Logs    = "logs"
	Metrics = "metrics"
)

// Request is one export the server took.
type Request struct {
	Signal      string // Traces, Logs or Metrics
	ContentType string // application/x-protobuf or application/json
	Body        []byte // decompressed
	// JSON is the export as OTLP JSON (the collector's file exporter
	// encoding), whatever encoding it came in.
	JSON []byte
}

// Server is a running OTLP/HTTP sink on 127.0.0.1.
type Server struct {
	l    net.Listener
	srv  *http.Server
	mu   sync.Mutex
	reqs []Request
	errs []error
}

// Start listens on a free port of 127.0.0.1 and serves.
func Start() (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("otlpcapture: listen: %w", err)
	}
	return Serve(l), nil
}

// Serve serves on l (a listener opened elsewhere, say in another network
// namespace) and takes it over: Close closes it.
func Serve(l net.Listener) *Server {
	s := &Server{l: l}
	mux := http.NewServeMux()
	for _, sig := range []string{Traces, Logs, Metrics} {
		mux.HandleFunc("/v1/"+sig, func(w http.ResponseWriter, r *http.Request) { s.take(w, r, sig) })
	}
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(l)
	return s
}

// URL is the base URL, e.g. http://127.0.0.1:40123 (an
// OTEL_EXPORTER_OTLP_ENDPOINT value).
func (s *Server) URL() string { return "http://" + s.l.Addr().String() }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests returns the exports taken so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Err returns what the server could not take (a body that did not
// decode, a content type it does not know), nil when it took everything.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// Spans returns the number of spans taken so far.
func (s *Server) Spans() int {
	n := 0
	for _, r := range s.Requests() {
		if r.Signal == Traces {
			req := ptraceotlp.NewExportRequest()
			if req.UnmarshalJSON(r.JSON) == nil {
				n += req.Traces().SpanCount()
			}
		}
	}
	return n
}

// LogRecords returns the number of log records taken so far.
func (s *Server) LogRecords() int {
	n := 0
	for _, r := range s.Requests() {
		if r.Signal == Logs {
			req := plogotlp.NewExportRequest()
			if req.UnmarshalJSON(r.JSON) == nil {
				n += req.Logs().LogRecordCount()
			}
		}
	}
	return n
}

// JSONLines writes the exports of signal as OTLP JSON, one request a
// line, in arrival order: the collector's file exporter format, which
// `bridge -agent otel` reads.
func (s *Server) JSONLines(w io.Writer, signal string) error {
	for _, r := range s.Requests() {
		if r.Signal != signal {
			continue
		}
		if _, err := w.Write(append(bytes.Clone(r.JSON), '\n')); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) fail(w http.ResponseWriter, status int, err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
	http.Error(w, err.Error(), status)
}

func (s *Server) take(w http.ResponseWriter, r *http.Request, signal string) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var in io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			s.fail(w, http.StatusBadRequest, fmt.Errorf("%s: gzip: %w", signal, err))
			return
		}
		defer zr.Close()
		in = zr
	}
	body, err := io.ReadAll(in)
	if err != nil {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("%s: read body: %w", signal, err))
		return
	}
	js, resp, err := decode(signal, ct, body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("%s %s: %w", signal, ct, err))
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Signal: signal, ContentType: ct, Body: body, JSON: js})
	s.mu.Unlock()
	w.Header().Set("Content-Type", ct)
	w.Write(resp)
}

// decode returns body as OTLP JSON, and the empty response in ct's
// encoding.
func decode(signal, ct string, body []byte) (js, resp []byte, err error) {
	type codec interface {
		UnmarshalProto([]byte) error
		UnmarshalJSON([]byte) error
		MarshalJSON() ([]byte, error)
	}
	type response interface {
		MarshalProto() ([]byte, error)
		MarshalJSON() ([]byte, error)
	}
	var req codec
	var res response
	switch signal {
	case Traces:
		req, res = ptraceotlp.NewExportRequest(), ptraceotlp.NewExportResponse()
	case Logs:
		req, res = plogotlp.NewExportRequest(), plogotlp.NewExportResponse()
	default:
		req, res = pmetricotlp.NewExportRequest(), pmetricotlp.NewExportResponse()
	}
	switch ct {
	case "application/x-protobuf":
		err = req.UnmarshalProto(body)
		if err == nil {
			resp, err = res.MarshalProto()
		}
	case "application/json":
		err = req.UnmarshalJSON(body)
		if err == nil {
			resp, err = res.MarshalJSON()
		}
	default:
		err = fmt.Errorf("unknown content type")
	}
	if err != nil {
		return nil, nil, err
	}
	js, err = req.MarshalJSON()
	return js, resp, err
}
