// The openai client (Chat Completions, not streamed: the instrumentation's
// stream reader skips the usage chunk, so a streamed LLM span has no
// llm.token_count.*) in a hand-written tool loop, traced by OpenInference: @arizeai/openinference-instrumentation-openai
// makes the LLM spans; the AGENT span around the run and a TOOL span per
// tool call are the script's own, made with @arizeai/openinference-core's
// traceAgent and traceTool, as OpenInference's users add them (the
// instrumentation traces the client only). The session id is set on the
// context (setSession), so every span carries session.id. Exported as
// OTLP protobuf (@opentelemetry/exporter-trace-otlp-proto).
import { context } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { setSession, traceAgent, traceTool } from '@arizeai/openinference-core';
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import OpenAI from 'openai';

import { Tools, chatLoop, modelURL, prompt, sessionID, tracing, workdir } from './common.mjs';

const provider = tracing(new OTLPTraceExporter(), 'evosignal-realotel-openinference');
// An ES module is not loaded through require: instrument it by hand.
new OpenAIInstrumentation().manuallyInstrument(OpenAI);

const tools = new Tools(workdir());
const traced = Object.fromEntries(
  Tools.definitions.map((d) => [
    d.name,
    traceTool((args) => tools.call(d.name, args), {
      name: d.name,
      attributes: { 'tool.name': d.name, 'tool.description': d.description, 'tool.parameters': JSON.stringify(d.parameters) },
    }),
  ]),
);
const client = new OpenAI({ baseURL: modelURL(), apiKey: 'fake-key', maxRetries: 0 });
const agent = traceAgent(
  async (task) => chatLoop(client, (name, args) => traced[name](args), { stream: false }),
  { name: 'coding-agent', attributes: { 'agent.name': 'coding-agent' } },
);
try {
  const answer = await context.with(setSession(context.active(), { sessionId: sessionID() }), () => agent(prompt));
  tools.report(answer);
} finally {
  await provider.shutdown();
}
