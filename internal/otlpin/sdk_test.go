package otlpin_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
)

// agentRun is a small agent instrumented with the OpenTelemetry SDK as the
// GenAI semantic conventions describe: an invoke_agent span, a chat span
// per model call, an execute_tool span per tool call with its arguments
// (content capture on). It plans with Codex's update_plan: a plan, a
// status-only update, a replan that adds a task, and the last update.
func agentRun(ctx context.Context, tr trace.Tracer) {
	ctx, run := tr.Start(ctx, "invoke_agent coder", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", "coder"),
		attribute.String("gen_ai.agent.version", "0.9.1"),
		attribute.String("gen_ai.request.model", "gpt-5-mini"),
		attribute.String("gen_ai.conversation.id", "conv-sdk-1"),
		attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"fix the overflow"}]}]`),
	))
	defer run.End()
	chat := func() {
		_, s := tr.Start(ctx, "chat gpt-5-mini", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "gpt-5-mini")))
		s.End()
	}
	tool := func(name, args string, err error) {
		chat()
		_, s := tr.Start(ctx, "execute_tool "+name, trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", name),
			attribute.String("gen_ai.tool.call.arguments", args),
		))
		if err != nil {
			s.RecordError(err)
			s.SetStatus(codes.Error, err.Error())
			s.SetAttributes(attribute.String("error.type", "ExitError"))
		}
		s.End()
	}
	tool("update_plan", `{"plan":[{"step":"Read the lexer","status":"in_progress"},{"step":"Fix the overflow","status":"pending"}]}`, nil)
	tool("shell", `{"command":["cat","lexer.go"]}`, nil)
	tool("update_plan", `{"plan":[{"step":"Read the lexer","status":"completed"},{"step":"Fix the overflow","status":"in_progress"}]}`, nil)
	tool("apply_patch", `{"patch":"..."}`, nil)
	tool("shell", `{"command":["go","test"]}`, errors.New("exit status 1"))
	tool("update_plan", `{"explanation":"the tests need a fixture","plan":[{"step":"Read the lexer","status":"completed"},{"step":"Fix the overflow","status":"in_progress"},{"step":"Add a test fixture","status":"pending"}]}`, nil)
	tool("apply_patch", `{"patch":"..."}`, nil)
	tool("update_plan", `{"plan":[{"step":"Read the lexer","status":"completed"},{"step":"Fix the overflow","status":"completed"},{"step":"Add a test fixture","status":"completed"}]}`, nil)
}

// TestSDKClient runs an agent instrumented with the OpenTelemetry SDK
// against the running receiver, through its otlptracehttp exporter, then
// exports the same spans again: nothing more is stored.
func TestSDKClient(t *testing.T) {
	p := adaptertest.StartPipeline(t)
	r := startReceiver(t, p)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url(r)))
	if err != nil {
		t.Fatal(err)
	}
	mem := tracetest.NewInMemoryExporter()
	res := resource.NewSchemaless(attribute.String("service.name", "coder-service"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res),
		sdktrace.WithBatcher(exp), sdktrace.WithSyncer(mem))
	agentRun(ctx, tp.Tracer("sdk-test"))
	spans := mem.GetSpans().Snapshots() // before Shutdown, which empties mem
	if len(spans) != 17 {
		t.Fatalf("the agent made %d spans, want 17", len(spans))
	}
	if err := tp.Shutdown(ctx); err != nil { // flushes the batcher
		t.Fatal(err)
	}
	p.Settle(t)
	p.CheckTruth(t, adaptertest.Truth{Sessions: 1, Replanned: 1, Replans: 1, RealCalls: 4, FailedCalls: 1})

	rows, err := p.Store.DB().Query(`SELECT type, CAST(data AS VARCHAR) FROM events WHERE session = 'conv-sdk-1' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var typ, data string
		if err := rows.Scan(&typ, &data); err != nil {
			t.Fatal(err)
		}
		got = append(got, typ)
		if typ == string(events.SessionStarted) {
			var d events.SessionStartedData
			json.Unmarshal([]byte(data), &d)
			if d.Agent != "coder" || d.Model != "gpt-5-mini" || d.Goal != "fix the overflow" || d.AgentVersion != "0.9.1" {
				t.Errorf("session started %+v", d)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// A plan call's own agent.tool.called (control) comes first; its plan
	// events follow when its burst ends (the next real call, or the end).
	// Each chat span is an agent.model.called, stored before the tool call
	// it chose.
	const m, tc = "agent.model.called", "agent.tool.called"
	want := []string{"agent.session.started", m, tc, m, "agent.plan.created", tc,
		m, tc, m, "agent.task.completed", tc, m, tc, m, tc, m,
		"agent.plan.updated", tc, m, tc, "agent.task.completed", "agent.task.completed",
		"agent.session.ended"}
	if len(got) != len(want) {
		t.Fatalf("stored %q\nwant %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("stored %q\nwant %q", got, want)
		}
	}
	stored := p.Count(t, "SELECT count(*) FROM events")

	// The same spans again, as a retrying exporter would send them.
	again, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url(startReceiver(t, p))))
	if err != nil {
		t.Fatal(err)
	}
	if err := again.ExportSpans(ctx, spans); err != nil {
		t.Fatal(err)
	}
	again.Shutdown(ctx)
	p.Settle(t)
	if n := p.Count(t, "SELECT count(*) FROM events"); n != stored {
		t.Errorf("after the re-sent export: %d events, want %d", n, stored)
	}
}
