// A minimal agent in JavaScript: it publishes one evosignal session (the
// events of schema/README.md) to NATS JetStream with nats.js, each event on
// subject evo.<agent>.<token> of its source (token: the first 8 hex digits of
// the SHA-256 of the source, schema/README.md "NATS") with its id as the
// Nats-Msg-Id header, and waits for JetStream's publish acknowledgement of
// each.
//
//   npm ci
//   NATS_URL=nats://127.0.0.1:4222 node agent.mjs [session-id]
//
// RULESET=file names a learned rule set (what `analyze rules -out` writes).
// When it holds out a share of the sessions (holdout, schema/README.md
// "Randomised holdouts"), the session is assigned an arm the way every
// evosignal agent does it, and reports it in agent.session.started; in the
// holdout arm it loads no rules.
//
// The ingester (`go run ./cmd/ingest`) must be running: it owns the stream
// that captures evo.>. The session: a plan of two tasks, a failed tool call,
// a replan through update_task_plan, the work done, and the end.
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

const AGENT = "jsagent";
// source is agent/host/worker; a path segment is printable ASCII without
// "/" or spaces.
const HOST = (process.env.HOSTNAME || "localhost").replace(/[^!-.0-~]/g, "-");
const SOURCE = `${AGENT}/${HOST}/worker-1`;
// One subject per source, so a partitioned stream keeps the source's events
// in one partition.
const SUBJECT = `evo.${AGENT}.${createHash("sha256").update(SOURCE).digest("hex").slice(0, 8)}`;

// uuidv7 returns a UUIDv7: 48 bits of Unix milliseconds, then random bits.
function uuidv7() {
  const b = randomBytes(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) b[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  b[6] = (b[6] & 0x0f) | 0x70; // version 7
  b[8] = (b[8] & 0x3f) | 0x80; // variant 10
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// arm is the holdout arm of unit under the rule set version with share
// holdout: "holdout" when the first 8 bytes of SHA-256("evosignal-holdout"
// NUL version NUL unit), big-endian, are below holdout × 2^64.
function arm(version, unit, holdout) {
  if (!version || !(holdout > 0)) return "rules";
  const h = createHash("sha256").update(`evosignal-holdout\0${version}\0${unit}`).digest();
  const u = h.readBigUInt64BE(0);
  // holdout × 2^64 is exact in a double (a power of 2 times a double);
  // u < it exactly when u < its ceiling, an integer BigInt holds exactly.
  const limit = BigInt(Math.ceil(holdout * 2 ** 64));
  return u < limit ? "holdout" : "rules";
}

// started is agent.session.started's data for the session under the rule
// set (null: none): its version, rules and assignment.
function started(sessionID, rs) {
  const d = {
    goal: "Make the failing test pass", agent: AGENT, agent_version: "0.1.0",
    model: "example-model", tools: ["read_file", "write_file", "run_command", "complete_task", "update_task_plan"],
    task_type: "bugfix",
  };
  if (!rs || !rs.version) return d;
  const a = rs.holdout > 0 ? arm(rs.version, sessionID, rs.holdout) : "rules";
  if (a === "rules") {
    d.ruleset = rs.version;
    d.rules = (rs.rules || []).map((r) => r.id);
  }
  if (rs.holdout > 0) {
    d.assignment = { ruleset: rs.version, arm: a, holdout: rs.holdout, unit: "session", unit_id: sessionID };
  }
  return d;
}

// session returns the [type, data] pairs of one session, in order.
function session(start) {
  const plan = [
    { id: 1, description: "Read the failing test", tool_hint: "read_file", completed: false },
    { id: 2, description: "Fix the bug", tool_hint: "write_file", completed: false },
  ];
  return [
    ["agent.session.started", start],
    ["agent.plan.created", { tasks: plan, origin: "model" }],
    ["agent.tool.called", { task_id: 1, tool: "read_file", hint: "read_file", ok: true, duration_ms: 12, control: false }],
    ["agent.tool.called", { task_id: 1, tool: "complete_task", hint: "read_file", ok: true, duration_ms: 1, control: true }],
    ["agent.task.completed", { task_id: 1, completion: "success", reported: "success", tool_calls: 2 }],
    ["agent.tool.called", {
      task_id: 2, tool: "write_file", hint: "write_file", ok: false,
      error_kind: "exit_status", error: "permission denied", duration_ms: 30, control: false,
    }],
    // A replan: the completed task 1 is kept, the pending task 2 dropped,
    // the new tasks numbered after the highest kept id.
    ["agent.plan.updated", {
      replan: 1, trigger: "tool_failures", reason: "The file is read-only",
      tasks: [
        { ...plan[0], completed: true },
        { id: 2, description: "Make the file writable", tool_hint: "run_command", completed: false },
        { id: 3, description: "Fix the bug", tool_hint: "write_file", completed: false },
      ],
      kept: [1], dropped: [plan[1]], over_cap: false, valid: true,
    }],
    // The update_task_plan call itself: a control call, after the plan.
    ["agent.tool.called", { task_id: null, tool: "update_task_plan", hint: null, ok: true, duration_ms: 2, control: true }],
    ["agent.tool.called", { task_id: 2, tool: "run_command", hint: "run_command", ok: true, duration_ms: 40, control: false }],
    ["agent.tool.called", { task_id: 2, tool: "complete_task", hint: "run_command", ok: true, duration_ms: 1, control: true }],
    ["agent.task.completed", { task_id: 2, completion: "partial_success", reported: "success", tool_calls: 2 }],
    ["agent.tool.called", { task_id: 3, tool: "write_file", hint: "write_file", ok: true, duration_ms: 25, control: false }],
    ["agent.tool.called", { task_id: 3, tool: "complete_task", hint: "write_file", ok: true, duration_ms: 1, control: true }],
    ["agent.task.completed", { task_id: 3, completion: "partial_success", reported: "success", tool_calls: 2 }],
    ["agent.session.ended", {
      outcome: "success", replans: 1, tool_calls: 8, failed_tool_calls: 1, iterations: 8, duration_ms: 4200,
    }],
  ];
}

async function main() {
  const sessionID = process.argv[2] || `js-${randomUUID()}`;
  const rs = process.env.RULESET ? JSON.parse(readFileSync(process.env.RULESET, "utf8")) : null;
  const servers = process.env.NATS_URL || "nats://127.0.0.1:4222";
  const nc = await connect({ servers: servers.split(","), name: "evosignal-js-example" });
  try {
    const js = jetstream(nc);
    let seq = 0;
    let first, last;
    for (const [type, data] of session(started(sessionID, rs))) {
      seq++;
      const event = {
        specversion: "1.0", id: uuidv7(), source: SOURCE, type,
        time: new Date().toISOString(), subject: sessionID,
        datacontenttype: "application/json", seq, data,
      };
      // msgID sets the Nats-Msg-Id header: JetStream drops a retried
      // publish of the same event within its duplicate window.
      const ack = await js.publish(SUBJECT, JSON.stringify(event), { msgID: event.id });
      first ??= ack.seq;
      last = ack.seq;
    }
    console.log(`published session ${sessionID}: ${seq} events to stream seq ${first}-${last}`);
  } finally {
    await nc.drain();
  }
}

main().catch((err) => {
  console.error(`agent: ${err.message}`);
  process.exit(1);
});
