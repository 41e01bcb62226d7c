// Package otel is the adapter of OpenTelemetry traces and logs of agents:
// it maps OTLP spans, read by the convention each follows (the GenAI
// semantic conventions, current and older names; OpenInference;
// OpenLLMetry; the Vercel AI SDK; Codex's own spans), and the log records
// that carry what the coding CLIs' spans lack (Claude Code's and Codex's
// tool arguments and prompts), to evosignal events, one session per trace.
// Plan-tool calls (update_task_plan, TodoWrite, TaskCreate, update_plan,
// write_todos, …) and plan spans go through the plan-dialect core; every
// other tool call is agent.tool.called; model calls are iterations, their
// tokens agent.session.ended's usage.
//
// Event ids are derived from the trace and span ids (plus a suffix per event
// of a span) and seqs from the spans' start times, so mapping the same spans
// again — a retried export, a back-filled file — gives the same events, which
// the store keeps once. The conventions' tables, the outcome rules and the
// data-quality notes are in docs/otel.md.
package otel
