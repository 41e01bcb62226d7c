#!/usr/bin/env python3
"""A minimal agent in Python: it writes one evosignal session (the events of
schema/README.md) as JSON lines on standard output, using the standard
library only.

    python3 agent.py [session-id] > session.jsonl
    evosignal validate session.jsonl                      # checks every line against the contract
    evosignal ingest -file session.jsonl -db evo.duckdb   # loads it without NATS

To publish instead, send each line as one NATS message on the subject of its
source, ``subject(source)`` below (evo.<agent>.<token>), with the event's id
as the Nats-Msg-Id header (for example with nats-py:
``await js.publish(subject(source), line, headers={"Nats-Msg-Id": id})``).
The session: a plan of two tasks, a failed tool call, a replan through
update_task_plan, the work done, and the end.

RULESET=file names a learned rule set (what ``analyze rules -out`` writes).
When it holds out a share of the sessions (``holdout``, schema/README.md
"Randomised holdouts"), the session is assigned an arm as every evosignal
agent does it, ``arm()`` below, and reports it in agent.session.started; in
the holdout arm it loads no rules.
"""

import hashlib
import json
import math
import os
import socket
import sys
import time
import uuid
from datetime import datetime, timezone

AGENT = "pyagent"


def subject(source: str, prefix: str = "evo") -> str:
    """The subject the events of source are published on: <prefix>.<agent>.<token>,
    the agent being the first path segment of source and the token the first
    8 hex digits of the SHA-256 of source (schema/README.md, "NATS"), so that
    a partitioned stream keeps every event of a source in one partition."""
    return f"{prefix}.{source.split('/', 1)[0]}.{hashlib.sha256(source.encode()).hexdigest()[:8]}"


def uuidv7() -> str:
    """A UUIDv7: 48 bits of Unix milliseconds, then random bits."""
    b = bytearray(os.urandom(16))
    b[0:6] = (time.time_ns() // 1_000_000).to_bytes(6, "big")
    b[6] = (b[6] & 0x0F) | 0x70  # version 7
    b[8] = (b[8] & 0x3F) | 0x80  # variant 10
    return str(uuid.UUID(bytes=bytes(b)))


def arm(version: str, unit: str, holdout: float) -> str:
    """The holdout arm of unit (the session id, or a workspace's) under the
    rule set version with share holdout: "holdout" when the first 8 bytes of
    SHA-256("evosignal-holdout" NUL version NUL unit), big-endian, are below
    holdout x 2^64 (exact: a double times a power of 2), else "rules"."""
    if not version or not holdout > 0:
        return "rules"
    u = int.from_bytes(hashlib.sha256(f"evosignal-holdout\0{version}\0{unit}".encode()).digest()[:8], "big")
    return "holdout" if u < math.ceil(holdout * 2**64) else "rules"


def started(session_id: str, rs):
    """agent.session.started's data under the rule set rs (None: none)."""
    d = {
        "goal": "Make the failing test pass", "agent": AGENT, "agent_version": "0.1.0",
        "model": "example-model",
        "tools": ["read_file", "write_file", "run_command", "complete_task", "update_task_plan"],
        "task_type": "bugfix",
    }
    if not rs or not rs.get("version"):
        return d
    holdout = rs.get("holdout", 0)
    a = arm(rs["version"], session_id, holdout)
    if a == "rules":
        d["ruleset"] = rs["version"]
        d["rules"] = [r["id"] for r in rs.get("rules") or []]
    if holdout > 0:
        d["assignment"] = {"ruleset": rs["version"], "arm": a, "holdout": holdout, "unit": "session", "unit_id": session_id}
    return d


def now() -> str:
    """The time as RFC 3339 in UTC, with milliseconds and a Z."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session(start):
    """The (type, data) pairs of one session, in order; start is
    agent.session.started's data."""
    plan = [
        {"id": 1, "description": "Read the failing test", "tool_hint": "read_file", "completed": False},
        {"id": 2, "description": "Fix the bug", "tool_hint": "write_file", "completed": False},
    ]
    return [
        ("agent.session.started", start),
        ("agent.plan.created", {"tasks": plan, "origin": "model"}),
        ("agent.tool.called", {"task_id": 1, "tool": "read_file", "hint": "read_file", "ok": True,
                               "duration_ms": 12, "control": False}),
        ("agent.tool.called", {"task_id": 1, "tool": "complete_task", "hint": "read_file", "ok": True,
                               "duration_ms": 1, "control": True}),
        ("agent.task.completed", {"task_id": 1, "completion": "success", "reported": "success", "tool_calls": 2}),
        ("agent.tool.called", {"task_id": 2, "tool": "write_file", "hint": "write_file", "ok": False,
                               "error_kind": "exit_status", "error": "permission denied",
                               "duration_ms": 30, "control": False}),
        # A replan: the completed task 1 is kept, the pending task 2 dropped,
        # the new tasks numbered after the highest kept id.
        ("agent.plan.updated", {
            "replan": 1, "trigger": "tool_failures", "reason": "The file is read-only",
            "tasks": [
                dict(plan[0], completed=True),
                {"id": 2, "description": "Make the file writable", "tool_hint": "run_command", "completed": False},
                {"id": 3, "description": "Fix the bug", "tool_hint": "write_file", "completed": False},
            ],
            "kept": [1], "dropped": [plan[1]], "over_cap": False, "valid": True,
        }),
        # The update_task_plan call itself: a control call, after the plan.
        ("agent.tool.called", {"task_id": None, "tool": "update_task_plan", "hint": None, "ok": True,
                               "duration_ms": 2, "control": True}),
        ("agent.tool.called", {"task_id": 2, "tool": "run_command", "hint": "run_command", "ok": True,
                               "duration_ms": 40, "control": False}),
        ("agent.tool.called", {"task_id": 2, "tool": "complete_task", "hint": "run_command", "ok": True,
                               "duration_ms": 1, "control": True}),
        ("agent.task.completed", {"task_id": 2, "completion": "partial_success", "reported": "success",
                                  "tool_calls": 2}),
        ("agent.tool.called", {"task_id": 3, "tool": "write_file", "hint": "write_file", "ok": True,
                               "duration_ms": 25, "control": False}),
        ("agent.tool.called", {"task_id": 3, "tool": "complete_task", "hint": "write_file", "ok": True,
                               "duration_ms": 1, "control": True}),
        ("agent.task.completed", {"task_id": 3, "completion": "partial_success", "reported": "success",
                                  "tool_calls": 2}),
        ("agent.session.ended", {"outcome": "success", "replans": 1, "tool_calls": 8, "failed_tool_calls": 1,
                                 "iterations": 8, "duration_ms": 4200}),
    ]


def main() -> None:
    session_id = sys.argv[1] if len(sys.argv) > 1 else f"py-{uuid.uuid4()}"
    host = "".join(c if c.isascii() and c.isalnum() or c in "-_." else "-" for c in socket.gethostname()) or "localhost"
    source = f"{AGENT}/{host}/worker-1"
    rs = None
    if os.environ.get("RULESET"):
        with open(os.environ["RULESET"], encoding="utf-8") as f:
            rs = json.load(f)
    for seq, (type_, data) in enumerate(session(started(session_id, rs)), start=1):
        event = {
            "specversion": "1.0", "id": uuidv7(), "source": source, "type": type_,
            "time": now(), "subject": session_id, "datacontenttype": "application/json",
            "seq": seq, "data": data,
        }
        print(json.dumps(event, separators=(",", ":"), ensure_ascii=False))


if __name__ == "__main__":
    main()
