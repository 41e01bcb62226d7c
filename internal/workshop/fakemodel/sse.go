package fakemodel

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxBody bounds a request body: a long agent conversation with every tool
// schema is a few hundred kB.
const maxBody = 64 << 20

// readBody reads r's body, gunzipped when the client compressed it.
func readBody(r *http.Request) ([]byte, error) {
	var body io.Reader = io.LimitReader(r.Body, maxBody)
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		z, err := gzip.NewReader(body)
		if err != nil {
			return nil, fmt.Errorf("gunzip body of %s: %w", r.URL.Path, err)
		}
		defer z.Close()
		body = z
	default:
		return nil, fmt.Errorf("body of %s: content encoding %q not supported", r.URL.Path, enc)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("read body of %s: %w", r.URL.Path, err)
	}
	return b, nil
}

// sse writes server-sent events, one flush per event.
type sse struct {
	w   http.ResponseWriter
	err error
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

// event writes one event named name whose data is v as JSON. The first
// error sticks; later events are not written.
func (e *sse) event(name string, v any) {
	if e.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.err = fmt.Errorf("encode %s event: %w", name, err)
		return
	}
	e.write("event: %s\ndata: %s\n\n", name, b)
}

// data writes one unnamed event whose data is v as JSON, as the Chat
// Completions API streams its chunks.
func (e *sse) data(v any) {
	if e.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.err = fmt.Errorf("encode chunk: %w", err)
		return
	}
	e.write("data: %s\n\n", b)
}

// done writes the Chat Completions stream's last event, data: [DONE].
func (e *sse) done() {
	if e.err == nil {
		e.write("data: [DONE]\n\n")
	}
}

func (e *sse) write(format string, args ...any) {
	if _, err := fmt.Fprintf(e.w, format, args...); err != nil {
		e.err = fmt.Errorf("write event: %w", err)
		return
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeJSON answers with status and v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode answer: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}
