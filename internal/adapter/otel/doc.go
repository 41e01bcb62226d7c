// Package otel is the adapter of OpenTelemetry GenAI spans: it maps OTLP
// traces that follow the GenAI semantic conventions (an invoke_agent span per
// agent run, execute_tool spans for its tool calls, chat spans for its model
// calls) to evosignal events, one session per trace. Plan-tool calls
// (update_task_plan, TodoWrite, update_plan, write_todos, …) go through the
// plan-dialect core; every other tool call is agent.tool.called.
//
// Event ids are derived from the trace and span ids (plus a suffix per event
// of a span) and seqs from the spans' start times, so mapping the same spans
// again — a retried export, a back-filled file — gives the same events, which
// the store keeps once. The mapping table, the outcome rules and the
// data-quality notes are in docs/otel.md.
package otel
