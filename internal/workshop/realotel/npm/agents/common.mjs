// What every framework's script shares: the task's tools (real functions
// on a work directory, one of them failing by throwing), the OpenTelemetry
// JS SDK set up with an OTLP/HTTP exporter, and the environment the Go
// harness (internal/workshop/realotel) passes. The model's decisions are
// the fake model server's script; the scripts only wire a framework to it.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** env returns the harness's environment variable name, failing when unset. */
export function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (internal/workshop/realotel sets it)`);
  return v;
}

/** The fake model server's OpenAI base URL (…/v1), the model, the work directory, the session id. */
export const modelURL = () => env('REALOTEL_MODEL_URL');
export const modelName = () => env('REALOTEL_MODEL');
export const workdir = () => env('REALOTEL_WORKDIR');
export const sessionID = () => env('REALOTEL_SESSION');

/** The user's request, the same for every framework. */
export const prompt = 'Read config.toml, run the tests, and tell me what you find. Plan with update_task_plan first and complete each task with complete_task.';
export const instructions = 'You are a careful coding agent. Keep a task plan with update_task_plan and mark each task done with complete_task.';

/**
 * tracing registers a NodeTracerProvider exporting every span with the
 * given OTLP/HTTP exporter (the exporter reads OTEL_EXPORTER_OTLP_ENDPOINT
 * and appends /v1/traces), and returns it: call its shutdown() before the
 * process ends, which flushes the batch.
 */
export function tracing(exporter, serviceName) {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  provider.register();
  return provider;
}

/**
 * Tools is the task's tools as plain functions with their JSON schemas:
 * update_task_plan and complete_task (SkillLite's plan dialect: a revision
 * keeps the completed tasks and replaces the pending ones by the listed
 * ones, renumbered), and the real tools read_file, run_command (a shell
 * command that throws when it exits non-zero) and write_file. The ledger
 * records every call and whether it threw: the script prints it at the end
 * for the harness to check against the script's truth.
 */
export class Tools {
  constructor(dir) {
    this.dir = dir;
    this.plan = [];
    this.ledger = [];
  }

  /** The tools' definitions: name, description, JSON schema of the arguments. */
  static definitions = [
    {
      name: 'update_task_plan',
      description: 'Write the task plan: the completed tasks stay, the listed tasks replace the pending ones.',
      parameters: {
        type: 'object',
        properties: {
          reason: { type: 'string', description: 'Why the plan changes.' },
          tasks: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                id: { type: 'integer' },
                description: { type: 'string' },
                tool_hint: { type: 'string' },
                completed: { type: 'boolean' },
              },
              required: ['id', 'description'],
            },
          },
        },
        required: ['tasks'],
      },
    },
    {
      name: 'complete_task',
      description: 'Mark a task of the plan completed.',
      parameters: { type: 'object', properties: { task_id: { type: 'integer' } }, required: ['task_id'] },
    },
    {
      name: 'read_file',
      description: 'Read a file of the workspace.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
    {
      name: 'run_command',
      description: 'Run a shell command in the workspace; fails when it exits non-zero.',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
    {
      name: 'write_file',
      description: 'Write a file of the workspace.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
      },
    },
  ];

  /** call runs tool name with args (an object), recording it; it throws what the tool throws. */
  async call(name, args) {
    const entry = { name, ok: false };
    this.ledger.push(entry);
    const out = await this[name](args);
    entry.ok = true;
    return out;
  }

  update_task_plan({ tasks }) {
    if (!Array.isArray(tasks) || tasks.length === 0) throw new Error('Task list cannot be empty');
    const kept = this.plan.filter((t) => t.completed);
    let id = Math.max(0, ...kept.map((t) => t.id));
    this.plan = [...kept, ...tasks.map((t) => ({ id: ++id, description: t.description, tool_hint: t.tool_hint ?? null, completed: false }))];
    return this.planText();
  }

  complete_task({ task_id }) {
    const t = this.plan.find((t) => t.id === task_id);
    if (!t) throw new Error(`no task ${task_id}`);
    t.completed = true;
    return this.planText();
  }

  read_file({ path }) {
    return readFileSync(join(this.dir, path), 'utf8');
  }

  run_command({ command }) {
    return execFileSync('/bin/sh', ['-c', command], { cwd: this.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  write_file({ path, content }) {
    writeFileSync(join(this.dir, path), content);
    return `wrote ${content.length} bytes to ${path}`;
  }

  planText() {
    return this.plan.map((t) => `${t.completed ? '[x]' : '[ ]'} ${t.id}. ${t.description}`).join('\n');
  }

  /** report prints the ledger and the answer as the last line of stdout, for the harness. */
  report(answer) {
    process.stdout.write(JSON.stringify({ calls: this.ledger, answer }) + '\n');
  }
}

/** errorText is what a thrown tool error tells the model. */
export const errorText = (err) => `Error: ${err?.message ?? String(err)}`;

/**
 * chatLoop is a hand-written tool loop on the openai client's Chat
 * Completions: ask, run each tool call the answer makes (through
 * runTool(name, args), whose thrown error goes back to the model as the
 * tool's result), and ask again until an answer makes none; it returns the
 * last answer's text. With stream, each request is streamed and asks for
 * the usage (stream_options.include_usage).
 */
export async function chatLoop(client, runTool, { stream = false } = {}) {
  const messages = [
    { role: 'system', content: instructions },
    { role: 'user', content: prompt },
  ];
  const tools = Tools.definitions.map((d) => ({ type: 'function', function: d }));
  for (let turn = 0; turn < 20; turn++) {
    const message = stream
      ? await streamed(client, { model: modelName(), messages, tools })
      : (await client.chat.completions.create({ model: modelName(), messages, tools })).choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content ?? '';
    for (const call of message.tool_calls) {
      let content;
      try {
        content = String(await runTool(call.function.name, JSON.parse(call.function.arguments)));
      } catch (err) {
        content = errorText(err);
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
  throw new Error('chatLoop: no answer in 20 turns');
}

/** streamed makes one streamed request and gathers its chunks into the assistant message. */
async function streamed(client, params) {
  const s = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  const message = { role: 'assistant', content: '', tool_calls: [] };
  for await (const chunk of s) {
    for (const choice of chunk.choices ?? []) {
      if (choice.delta?.content) message.content += choice.delta.content;
      for (const tc of choice.delta?.tool_calls ?? []) {
        const c = (message.tool_calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (tc.id) c.id = tc.id;
        if (tc.function?.name) c.function.name += tc.function.name;
        if (tc.function?.arguments) c.function.arguments += tc.function.arguments;
      }
    }
  }
  if (message.tool_calls.length === 0) delete message.tool_calls;
  return message;
}
