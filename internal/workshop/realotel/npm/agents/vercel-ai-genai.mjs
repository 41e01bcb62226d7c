// The Vercel AI SDK on the task (vercel-ai.mjs), traced by AI SDK 7's own
// OpenTelemetry integration (@ai-sdk/otel OpenTelemetry), which emits the
// OpenTelemetry GenAI semantic conventions (gen_ai.operation.name
// invoke_agent, chat, execute_tool). Exported as OTLP JSON.
import { OpenTelemetry } from '@ai-sdk/otel';

import { main } from './vercel-ai.mjs';

await main('evosignal-realotel-vercel-ai-genai', () => new OpenTelemetry());
