-- evosignal SQL contract, version 1: the event log, the typed tables derived
-- from it, dead letters and the ingester's bookkeeping. Every table and column
-- is documented in docs/sql.md; this file is the definition.

-- The event log: one row per accepted event, at most one per (source, id).
CREATE TABLE events (
    source      VARCHAR     NOT NULL, -- CloudEvents source: the agent instance
    id          VARCHAR     NOT NULL, -- CloudEvents id, unique per source
    type        VARCHAR     NOT NULL, -- e.g. agent.plan.updated
    time        TIMESTAMPTZ NOT NULL, -- when the agent says it happened
    session     VARCHAR     NOT NULL, -- CloudEvents subject: the session id
    seq         BIGINT      NOT NULL, -- order within the session
    data        JSON        NOT NULL, -- the type's payload, as sent
    agent       VARCHAR     NOT NULL, -- first path segment of source
    ext         JSON,                 -- other CloudEvents attributes (dataschema, extensions), NULL if none
    subject     VARCHAR,              -- NATS subject it arrived on; NULL for file loads
    stream_seq  UBIGINT,              -- JetStream stream sequence; NULL for file loads
    ingested_at TIMESTAMPTZ NOT NULL, -- commit time of its batch
    key_hash    UBIGINT     NOT NULL  -- internal: 64-bit hash of (source, id) for de-duplication
);

-- agent.session.started
CREATE TABLE session_starts (
    session       VARCHAR     NOT NULL,
    source        VARCHAR     NOT NULL,
    event_id      VARCHAR     NOT NULL,
    seq           BIGINT      NOT NULL,
    time          TIMESTAMPTZ NOT NULL,
    agent         VARCHAR     NOT NULL,
    agent_version VARCHAR     NOT NULL,
    model         VARCHAR     NOT NULL,
    goal          VARCHAR     NOT NULL,
    tools         VARCHAR[]   NOT NULL,
    task_type     VARCHAR,
    ruleset       VARCHAR,
    rules         VARCHAR[]
);

-- agent.session.ended
CREATE TABLE session_ends (
    session           VARCHAR     NOT NULL,
    source            VARCHAR     NOT NULL,
    event_id          VARCHAR     NOT NULL,
    seq               BIGINT      NOT NULL,
    time              TIMESTAMPTZ NOT NULL,
    outcome           VARCHAR     NOT NULL,
    replans           INTEGER     NOT NULL, -- the agent's own count of update_task_plan calls
    tool_calls        INTEGER     NOT NULL,
    failed_tool_calls INTEGER     NOT NULL,
    iterations        INTEGER     NOT NULL,
    duration_ms       BIGINT      NOT NULL,
    feedback          VARCHAR
);

-- Plan versions: every agent.plan.created, and every valid agent.plan.updated.
CREATE TABLE plans (
    session    VARCHAR     NOT NULL,
    source     VARCHAR     NOT NULL,
    event_id   VARCHAR     NOT NULL,
    seq        BIGINT      NOT NULL, -- the plan's version key within the session
    time       TIMESTAMPTZ NOT NULL,
    kind       VARCHAR     NOT NULL, -- 'created' | 'replan'
    replan     INTEGER,              -- ordinal of the update_task_plan call; NULL for created
    origin     VARCHAR,              -- created only: model | fallback | empty
    parse_error VARCHAR,
    task_count INTEGER     NOT NULL
);

-- The tasks of each plan version, in plan order.
CREATE TABLE plan_tasks (
    session     VARCHAR NOT NULL,
    plan_seq    BIGINT  NOT NULL, -- plans.seq
    position    INTEGER NOT NULL, -- 1-based place in the list
    task_id     BIGINT  NOT NULL,
    description VARCHAR NOT NULL,
    tool_hint   VARCHAR,
    completed   BOOLEAN NOT NULL,
    task_type   VARCHAR,
    is_new      BOOLEAN NOT NULL  -- entered the plan with this version (not a kept completed task)
);

-- agent.plan.updated: every update_task_plan call, valid or rejected.
CREATE TABLE replans (
    session       VARCHAR     NOT NULL,
    source        VARCHAR     NOT NULL,
    event_id      VARCHAR     NOT NULL,
    seq           BIGINT      NOT NULL,
    time          TIMESTAMPTZ NOT NULL,
    replan        INTEGER     NOT NULL,
    trigger       VARCHAR     NOT NULL,
    reason        VARCHAR,
    valid         BOOLEAN     NOT NULL,
    over_cap      BOOLEAN     NOT NULL,
    error         VARCHAR,
    task_count    INTEGER     NOT NULL,
    kept          BIGINT[]    NOT NULL,
    dropped_count INTEGER     NOT NULL
);

-- The pending tasks a replan replaced.
CREATE TABLE replan_dropped (
    session     VARCHAR NOT NULL,
    replan_seq  BIGINT  NOT NULL, -- replans.seq
    position    INTEGER NOT NULL,
    task_id     BIGINT  NOT NULL,
    description VARCHAR NOT NULL,
    tool_hint   VARCHAR,
    task_type   VARCHAR
);

-- agent.hint.stripped
CREATE TABLE hints_stripped (
    session   VARCHAR     NOT NULL,
    source    VARCHAR     NOT NULL,
    event_id  VARCHAR     NOT NULL,
    seq       BIGINT      NOT NULL,
    time      TIMESTAMPTZ NOT NULL,
    task_id   BIGINT      NOT NULL,
    tool_hint VARCHAR     NOT NULL,
    phase     VARCHAR     NOT NULL,
    reason    VARCHAR     NOT NULL,
    rule_id   VARCHAR
);

-- agent.tool.called
CREATE TABLE tool_calls (
    session     VARCHAR     NOT NULL,
    source      VARCHAR     NOT NULL,
    event_id    VARCHAR     NOT NULL,
    seq         BIGINT      NOT NULL,
    time        TIMESTAMPTZ NOT NULL,
    task_id     BIGINT,
    tool        VARCHAR     NOT NULL,
    hint        VARCHAR,
    ok          BOOLEAN     NOT NULL,
    error_kind  VARCHAR,
    error       VARCHAR,
    duration_ms BIGINT      NOT NULL,
    control     BOOLEAN     NOT NULL
);

-- agent.task.completed
CREATE TABLE task_completions (
    session    VARCHAR     NOT NULL,
    source     VARCHAR     NOT NULL,
    event_id   VARCHAR     NOT NULL,
    seq        BIGINT      NOT NULL,
    time       TIMESTAMPTZ NOT NULL,
    task_id    BIGINT      NOT NULL,
    completion VARCHAR     NOT NULL,
    reported   VARCHAR,
    tool_calls INTEGER     NOT NULL,
    summary    VARCHAR
);

-- agent.depth_limit.reached
CREATE TABLE depth_limits (
    session    VARCHAR     NOT NULL,
    source     VARCHAR     NOT NULL,
    event_id   VARCHAR     NOT NULL,
    seq        BIGINT      NOT NULL,
    time       TIMESTAMPTZ NOT NULL,
    task_id    BIGINT      NOT NULL,
    tool_calls INTEGER     NOT NULL,
    call_limit INTEGER     NOT NULL  -- the event's "limit"
);

-- What could not be accepted, with the bytes as received and why.
CREATE TABLE dead_letters (
    received_at TIMESTAMPTZ NOT NULL,
    origin      VARCHAR     NOT NULL, -- 'nats' | 'file'
    stream      VARCHAR,              -- JetStream stream name
    stream_seq  UBIGINT,
    subject     VARCHAR,
    file        VARCHAR,              -- file loads: the file name ('-' for stdin)
    line        BIGINT,               -- file loads: 1-based line number
    reason_code VARCHAR     NOT NULL, -- malformed_json | unknown_type | schema_violation | oversize | source_mismatch
    reason      VARCHAR     NOT NULL, -- readable explanation
    source      VARCHAR,              -- when it could be read
    id          VARCHAR,
    type        VARCHAR,
    raw         BLOB        NOT NULL
);

-- The JetStream position committed with the rows it produced.
CREATE TABLE ingest_position (
    stream     VARCHAR PRIMARY KEY,
    last_seq   UBIGINT     NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

-- One row per committed batch: an audit of what the ingester did.
CREATE TABLE ingest_batches (
    committed_at TIMESTAMPTZ NOT NULL,
    origin       VARCHAR     NOT NULL, -- 'nats' | 'file'
    stream       VARCHAR,
    first_seq    UBIGINT,
    last_seq     UBIGINT,
    messages     INTEGER     NOT NULL,
    accepted     INTEGER     NOT NULL,
    duplicates   INTEGER     NOT NULL,
    dead_letters INTEGER     NOT NULL
);

-- Sessions: one row per session seen, started or not, ended or not.
CREATE VIEW sessions AS
WITH ids AS (
    SELECT session FROM session_starts
    UNION
    SELECT session FROM session_ends
)
SELECT
    ids.session,
    coalesce(s.source, e.source)         AS source,
    s.agent, s.agent_version, s.model, s.goal, s.task_type, s.ruleset, s.rules, s.tools,
    s.time                               AS started_at,
    e.time                               AS ended_at,
    e.outcome,
    e.replans                            AS reported_replans,
    e.tool_calls, e.failed_tool_calls, e.iterations, e.duration_ms, e.feedback,
    s.session IS NOT NULL                AS has_start,
    e.session IS NOT NULL                AS has_end
FROM ids
LEFT JOIN (SELECT * FROM session_starts QUALIFY row_number() OVER (PARTITION BY session ORDER BY seq) = 1) s USING (session)
LEFT JOIN (SELECT * FROM session_ends QUALIFY row_number() OVER (PARTITION BY session ORDER BY seq) = 1) e USING (session);
