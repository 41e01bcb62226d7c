// The Vercel AI SDK (ai, @ai-sdk/openai-compatible) on the task, traced by
// @ai-sdk/otel's LegacyOpenTelemetry integration: the ai.* spans
// (ai.generateText, ai.generateText.doGenerate, ai.toolCall) that AI SDK 4
// to 6 emitted by itself under experimental_telemetry. Exported as OTLP
// JSON (@opentelemetry/exporter-trace-otlp-http). The same script with the
// integration of AI SDK 7, OpenTelemetry (GenAI conventions), is
// vercel-ai-genai.mjs.
import { pathToFileURL } from 'node:url';

import { LegacyOpenTelemetry } from '@ai-sdk/otel';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { generateText, isStepCount, jsonSchema, registerTelemetry, tool } from 'ai';

import { Tools, instructions, modelName, modelURL, prompt, sessionID, tracing, workdir } from './common.mjs';

/** main runs the task with the telemetry integration made by integration(). */
export async function main(serviceName, integration) {
  const provider = tracing(new OTLPTraceExporter(), serviceName);
  registerTelemetry(integration());
  const tools = new Tools(workdir());
  const model = createOpenAICompatible({ name: 'fakemodel', baseURL: modelURL(), apiKey: 'fake-key', includeUsage: true });
  try {
    const result = await generateText({
      model: model.chatModel(modelName()),
      system: instructions,
      prompt,
      tools: Object.fromEntries(
        Tools.definitions.map((d) => [
          d.name,
          tool({ description: d.description, inputSchema: jsonSchema(d.parameters), execute: (args) => tools.call(d.name, args) }),
        ]),
      ),
      stopWhen: isStepCount(20),
      maxRetries: 0,
      experimental_telemetry: { isEnabled: true, recordInputs: true, recordOutputs: true, functionId: `task-${sessionID()}` },
    });
    tools.report(result.text);
  } finally {
    await provider.shutdown();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main('evosignal-realotel-vercel-ai', () => new LegacyOpenTelemetry());
}
