// The openai client (Chat Completions, not streamed: the instrumentation
// ignores a stream's usage chunk and estimates tokens with tiktoken
// instead) in a hand-written tool loop, traced by OpenLLMetry: @traceloop/node-server-sdk
// instruments the client (instrumentModules, as an ES module is not loaded
// through require) and its withWorkflow, withAgent and withTool make the
// workflow, agent and tool spans (traceloop.span.kind,
// traceloop.entity.*). Its own OTLP protobuf exporter sends to
// TRACELOOP_BASE_URL (the harness's endpoint); no API key, no prompt
// registry sync (traceloopSyncEnabled), no batching, so that forceFlush
// sends everything. The session is the workflow's conversationId
// (gen_ai.conversation.id on every span below it) and an association
// property. withTool ends no span when its function throws (0.27.0,
// withEntity), so the failed run_command call has no tool span: that is
// what OpenLLMetry exports.
import * as traceloop from '@traceloop/node-server-sdk';
import OpenAI from 'openai';

import { Tools, chatLoop, modelURL, sessionID, workdir } from './common.mjs';

traceloop.initialize({
  appName: 'evosignal-realotel-openllmetry',
  baseUrl: process.env.TRACELOOP_BASE_URL,
  disableBatch: true,
  traceloopSyncEnabled: false,
  silenceInitializationMessage: true,
  instrumentModules: { openAI: OpenAI },
});

const tools = new Tools(workdir());
const client = new OpenAI({ baseURL: modelURL(), apiKey: 'fake-key', maxRetries: 0 });
try {
  const answer = await traceloop.withWorkflow(
    { name: 'coding-task', conversationId: sessionID(), associationProperties: { session_id: sessionID() } },
    () =>
      traceloop.withAgent({ name: 'coding-agent' }, () =>
        chatLoop(client, (name, args) => traceloop.withTool({ name }, (a) => tools.call(name, a), args)),
      ),
  );
  tools.report(answer);
} finally {
  await traceloop.forceFlush();
}
