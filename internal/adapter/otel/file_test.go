package otel_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/oteltest"
)

// readFile maps in as a file and returns the events as JSON lines, the
// records skipped, and the error.
func readFile(t *testing.T, in []byte) ([]byte, []string, error) {
	t.Helper()
	s := &sink{tb: t}
	m, err := otelad.New(otelad.DefaultConfig(), s)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	err = otelad.ReadJSON(t.Context(), bytes.NewReader(in), 0, m, func(e *otelad.LineError) { skipped = append(skipped, e.Error()) })
	var out bytes.Buffer
	for _, e := range s.evs {
		b, _ := json.Marshal(e)
		out.Write(append(b, '\n'))
	}
	return out.Bytes(), skipped, err
}

// TestReadJSONForms: an export one a line, the same pretty-printed, as one
// JSON array, and several documents one after the other give the same
// events; what is not OTLP is refused at its first record, naming what it
// found, or skipped after a good one.
func TestReadJSONForms(t *testing.T) {
	ss := adaptertest.Generate(41, 3, planTools, genStart, false)
	var lines, pretty bytes.Buffer
	var docs []json.RawMessage
	for _, td := range oteltest.Exports(3, ss) {
		b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		lines.Write(append(b, '\n'))
		if err := json.Indent(&pretty, b, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteString("\n")
		docs = append(docs, b)
	}
	array, _ := json.MarshalIndent(docs, "", "    ")

	want, skipped, err := readFile(t, lines.Bytes())
	if err != nil || len(skipped) > 0 || len(want) == 0 {
		t.Fatalf("JSON lines: %v, skipped %q, %d bytes of events", err, skipped, len(want))
	}
	for name, in := range map[string][]byte{"pretty-printed": pretty.Bytes(), "a JSON array": array} {
		got, skipped, err := readFile(t, in)
		if err != nil || len(skipped) > 0 || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, skipped %q, same events %v", name, err, skipped, bytes.Equal(got, want))
		}
	}

	for _, tc := range []struct{ name, in, what string }{
		{"another object", `{"foo": 1}`, "a JSON object with members foo"},
		{"a span dump", `[{"name": "call_llm", "span_id": 7, "trace_id": 9}]`, "a JSON object with members name, span_id, trace_id"},
		{"a metrics export", `{"resourceMetrics": []}`, "an OTLP metrics export"},
		{"an empty object", `{}`, "an empty JSON object"},
		{"a string", `"traces"`, "a JSON string"},
	} {
		_, _, err := readFile(t, []byte(tc.in))
		var not *otelad.NotOTLPError
		if !errors.As(err, &not) || !strings.Contains(err.Error(), tc.what) {
			t.Errorf("%s: error %v, want a refusal naming %q", tc.name, err, tc.what)
		}
	}
	// After a good record, one that is not OTLP is skipped and said.
	mixed := append(append([]byte(nil), lines.Bytes()...), []byte(`{"foo": 1}`+"\n")...)
	got, skipped, err := readFile(t, mixed)
	if err != nil || len(skipped) != 1 || !strings.Contains(skipped[0], "not an OTLP export: a JSON object with members foo") || !bytes.Equal(got, want) {
		t.Errorf("a stray record after good ones: %v, skipped %q, same events %v", err, skipped, bytes.Equal(got, want))
	}
}
