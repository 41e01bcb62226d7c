package ingest

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// metric reads one counter of the ingester's /metrics.
func metric(addr, name string) float64 {
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// TestOTLPReceiver runs the ingester with -otlp and an agent instrumented
// with the OpenTelemetry SDK exporting to it; after the ingester stopped,
// the database holds the session, its replan and its tool calls.
func TestOTLPReceiver(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "otlp.duckdb")
	otlpAddr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	httpAddr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	errOut := &testkit.SyncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-db", db, "-listen", "127.0.0.1:0", "-otlp", otlpAddr, "-http", httpAddr,
			"-query=false", "-flush", "20ms"}, nil, &testkit.SyncBuffer{}, errOut)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for metric(httpAddr, `evosignal_ingest_messages_total{outcome="accepted"}`) < 0 || !strings.Contains(errOut.String(), "receiving OTLP/HTTP traces") {
		if time.Now().After(deadline) {
			t.Fatalf("the ingester did not start:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL("http://"+otlpAddr+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	tr := tp.Tracer("ingest-test")
	runCtx, root := tr.Start(ctx, "invoke_agent helper", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "helper")))
	tool := func(name, args string, fail bool) {
		_, s := tr.Start(runCtx, "execute_tool "+name, trace.WithAttributes(attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", name), attribute.String("gen_ai.tool.call.arguments", args)))
		if fail {
			s.SetStatus(codes.Error, "exit status 2")
		}
		s.End()
	}
	tool("write_todos", `{"todos":[{"content":"Find the config","status":"in_progress"},{"content":"Change the port","status":"pending"}]}`, false)
	tool("read_file", `{"path":"config.toml"}`, false)
	tool("write_todos", `{"todos":[{"content":"Find the config","status":"completed"},{"content":"Change the port","status":"in_progress"}]}`, false)
	tool("edit_file", `{"path":"config.toml"}`, true)
	tool("write_todos", `{"todos":[{"content":"Find the config","status":"completed"},{"content":"Change the port","status":"in_progress"},{"content":"Restart the service","status":"pending"}]}`, false)
	tool("edit_file", `{"path":"config.toml"}`, false)
	root.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// 200 came once the events were in the stream; wait for the ingester.
	for metric(httpAddr, `evosignal_ingest_messages_total{outcome="accepted"}`) < 11 {
		if time.Now().After(deadline) {
			t.Fatalf("the ingester stored %v events, want 11:\n%s", metric(httpAddr, `evosignal_ingest_messages_total{outcome="accepted"}`), errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The receiver's own counts are on /metrics beside the ingester's.
	if got := metric(httpAddr, "evosignal_otlp_spans_total"); got != 7 {
		t.Errorf("evosignal_otlp_spans_total = %v, want 7 (the agent span and 6 tool spans)", got)
	}
	if got := metric(httpAddr, `evosignal_otlp_requests_refused_total{reason="busy"}`); got != 0 {
		t.Errorf(`evosignal_otlp_requests_refused_total{reason="busy"} = %v, want 0`, got)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	res, err := metrics.Replans(context.Background(), metrics.DB{DB: st.DB()}, metrics.Filter{Agent: "helper"})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[0]; r.Sessions != 1 || r.ValidReplans != 1 {
		t.Errorf("agent helper: %d sessions, %d replans; want 1, 1", r.Sessions, r.ValidReplans)
	}
	var calls, failed int64
	if err := st.DB().QueryRow(`SELECT count(*) FILTER (WHERE NOT control), count(*) FILTER (WHERE NOT control AND NOT ok) FROM tool_calls`).Scan(&calls, &failed); err != nil {
		t.Fatal(err)
	}
	if calls != 3 || failed != 1 {
		t.Errorf("%d real tool calls, %d failed; want 3, 1", calls, failed)
	}
}
