// Strands Agents (@strands-agents/sdk) on the task, with its OpenAI model
// over Chat Completions (api: 'chat', streamed with usage). Strands traces
// with the OpenTelemetry GenAI conventions natively (invoke_agent, chat,
// execute_tool spans) through the global tracer provider, which the script
// registers with an OTLP JSON exporter (@opentelemetry/exporter-trace-otlp-http).
// The harness sets OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental
// for the conventions as they stand; the session id is a trace attribute
// (traceAttributes: session.id) on the agent's spans.
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Agent, FunctionTool } from '@strands-agents/sdk';
import { OpenAIModel } from '@strands-agents/sdk/models/openai';

import { Tools, instructions, modelName, modelURL, prompt, sessionID, tracing, workdir } from './common.mjs';

const provider = tracing(new OTLPTraceExporter(), 'evosignal-realotel-strands');
const tools = new Tools(workdir());
const agent = new Agent({
  name: 'coding-agent',
  model: new OpenAIModel({ api: 'chat', modelId: modelName(), apiKey: 'fake-key', clientConfig: { baseURL: modelURL(), maxRetries: 0 } }),
  systemPrompt: instructions,
  tools: Tools.definitions.map(
    (d) => new FunctionTool({ name: d.name, description: d.description, inputSchema: d.parameters, callback: (input) => tools.call(d.name, input) }),
  ),
  traceAttributes: { 'session.id': sessionID() },
  printer: false,
});
try {
  const result = await agent.invoke(prompt);
  tools.report(result.toString());
} finally {
  await provider.shutdown();
}
