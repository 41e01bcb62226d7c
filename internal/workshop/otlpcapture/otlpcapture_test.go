package otlpcapture_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/workshop/otlpcapture"
)

func TestCapture(t *testing.T) {
	s, err := otlpcapture.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for range 3 {
		sp.AppendEmpty().SetName("x")
	}
	pb, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	post(t, s.URL()+"/v1/traces", "application/x-protobuf", pb, http.StatusOK)

	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("hi")
	js, err := plogotlp.NewExportRequestFromLogs(ld).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	post(t, s.URL()+"/v1/logs", "application/json", js, http.StatusOK)
	post(t, s.URL()+"/v1/logs", "text/plain", js, http.StatusBadRequest)

	if got := s.Spans(); got != 3 {
		t.Errorf("spans = %d, want 3", got)
	}
	if got := s.LogRecords(); got != 1 {
		t.Errorf("log records = %d, want 1", got)
	}
	if s.Err() == nil {
		t.Error("Err = nil after a text/plain body")
	}
	var buf bytes.Buffer
	if err := s.JSONLines(&buf, otlpcapture.Traces); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 1 || !strings.Contains(buf.String(), `"resourceSpans"`) {
		t.Errorf("traces as JSON lines = %q", buf.String())
	}
}

func post(t *testing.T, url, ct string, body []byte, want int) {
	t.Helper()
	resp, err := http.Post(url, ct, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Errorf("POST %s (%s) = %d, want %d", url, ct, resp.StatusCode, want)
	}
}
