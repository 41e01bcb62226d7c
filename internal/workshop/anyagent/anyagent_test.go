package anyagent_test

import (
	"bytes"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/workshop/anyagent"
	"github.com/evosignal/evosignal/internal/workshop/golden"
)

// dir holds the any-agent originals and their OTLP JSON conversions.
var dir = filepath.Join("..", "..", "..", "testdata", "public", "otel", "any-agent")

// frameworks: the original's name (tests/assets/<NAME>_trace.json) and the
// conversion's (<name>.jsonl).
var frameworks = map[string]string{
	"AGNO": "agno", "GOOGLE": "google", "LANGCHAIN": "langchain", "LLAMA_INDEX": "llama_index",
	"OPENAI": "openai", "SMOLAGENTS": "smolagents", "TINYAGENT": "tinyagent",
}

// TestConvertPublicTraces converts each original of
// testdata/public/otel/any-agent and compares it with the .jsonl kept there
// (go test ./internal/workshop/anyagent -update rewrites them). The
// conversion decodes as an OTLP ExportTraceServiceRequest and keeps every
// span, its name, ids and attributes.
func TestConvertPublicTraces(t *testing.T) {
	for orig, name := range frameworks {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, orig+"_trace.json"))
			if err != nil {
				t.Fatal(err)
			}
			out, err := anyagent.Convert(in)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join(dir, name+".jsonl"), out)
			if bytes.Count(out, []byte("\n")) != 1 {
				t.Errorf("want one request on one line, got %d lines", bytes.Count(out, []byte("\n")))
			}

			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalJSON(bytes.TrimSpace(out)); err != nil {
				t.Fatalf("the conversion is not OTLP JSON: %v", err)
			}
			var want struct {
				Spans []struct {
					Name    string
					Context struct {
						TraceID json.Number `json:"trace_id"`
						SpanID  json.Number `json:"span_id"`
					} `json:"context"`
					Attributes map[string]any
				}
			}
			dec := json.NewDecoder(bytes.NewReader(in))
			dec.UseNumber()
			if err := dec.Decode(&want); err != nil {
				t.Fatal(err)
			}
			var i int
			for _, rs := range req.Traces().ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, sp := range ss.Spans().All() {
						if i >= len(want.Spans) {
							t.Fatalf("more spans than the original's %d", len(want.Spans))
						}
						w := want.Spans[i]
						if sp.Name() != w.Name {
							t.Errorf("span %d: name %q, want %q", i, sp.Name(), w.Name)
						}
						if got := hexOf(t, w.Context.TraceID, 32); sp.TraceID().String() != got {
							t.Errorf("span %d: trace id %s, want %s", i, sp.TraceID(), got)
						}
						if got := hexOf(t, w.Context.SpanID, 16); sp.SpanID().String() != got {
							t.Errorf("span %d: span id %s, want %s", i, sp.SpanID(), got)
						}
						if sp.Attributes().Len() != len(w.Attributes) {
							t.Errorf("span %d: %d attributes, want %d", i, sp.Attributes().Len(), len(w.Attributes))
						}
						for k := range w.Attributes {
							if _, ok := sp.Attributes().Get(k); !ok {
								t.Errorf("span %d: attribute %s lost", i, k)
							}
						}
						i++
					}
				}
			}
			if i != len(want.Spans) {
				t.Errorf("%d spans, want the original's %d", i, len(want.Spans))
			}
		})
	}
}

func hexOf(tb testing.TB, n json.Number, width int) string {
	tb.Helper()
	v, ok := new(big.Int).SetString(n.String(), 10)
	if !ok {
		tb.Fatalf("id %q is not a decimal integer", n)
	}
	s := v.Text(16)
	return strings.Repeat("0", width-len(s)) + s
}

func TestConvertRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"not JSON":        "nope",
		"no spans":        `{"spans": []}`,
		"no span id":      `{"spans": [{"name": "x", "kind": "internal", "status": {"status_code": "ok"}, "context": {"trace_id": 1, "span_id": null}}]}`,
		"unknown kind":    `{"spans": [{"name": "x", "kind": "sideways", "status": {"status_code": "ok"}, "context": {"trace_id": 1, "span_id": 2}}]}`,
		"id out of range": `{"spans": [{"name": "x", "kind": "internal", "status": {"status_code": "ok"}, "context": {"trace_id": 1, "span_id": 18446744073709551616}}]}`,
	} {
		if _, err := anyagent.Convert([]byte(in)); err == nil {
			t.Errorf("%s: converted", name)
		}
	}
}
