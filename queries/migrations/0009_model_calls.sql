-- Contract v1.3 (schema/README.md): model calls, their tokens and time, and
-- the digest of a tool call's arguments. New tables rather than new columns
-- of old ones, so that a table's columns never change under a lake that
-- already holds it (docs/scale.md).

-- agent.model.called (v1.3): one row a model call. A token count is NULL
-- when the call did not report it.
CREATE TABLE model_calls (
    session             VARCHAR     NOT NULL,
    source              VARCHAR     NOT NULL,
    event_id            VARCHAR     NOT NULL,
    seq                 BIGINT      NOT NULL,
    time                TIMESTAMPTZ NOT NULL,
    task_id             BIGINT,     -- the task in progress; NULL before the first plan or when unknown
    model               VARCHAR,    -- the model that answered, when the event names it
    input_tokens        BIGINT,     -- cached ones included
    output_tokens       BIGINT,
    cached_input_tokens BIGINT,     -- a part of input_tokens
    duration_ms         BIGINT      NOT NULL
);

-- agent.tool.called args_digest (v1.3): one row a call that has one; the
-- call is the tool_calls row of the same (session, seq).
CREATE TABLE tool_call_args (
    session     VARCHAR     NOT NULL,
    source      VARCHAR     NOT NULL,
    event_id    VARCHAR     NOT NULL,
    seq         BIGINT      NOT NULL,
    time        TIMESTAMPTZ NOT NULL,
    args_digest VARCHAR     NOT NULL
);

-- agent.session.ended usage (v1.2): one row a session end that has it.
-- A token count is NULL when no call reported it.
CREATE TABLE session_usage (
    session             VARCHAR     NOT NULL,
    source              VARCHAR     NOT NULL,
    event_id            VARCHAR     NOT NULL,
    seq                 BIGINT      NOT NULL,
    time                TIMESTAMPTZ NOT NULL,
    model_calls         BIGINT      NOT NULL,
    input_tokens        BIGINT,
    output_tokens       BIGINT,
    cached_input_tokens BIGINT,
    model_ms            BIGINT      NOT NULL
);

-- The v1.2 usage already in the event log (the rows derive/session_usage.sql
-- derives from it).
INSERT INTO session_usage
SELECT session, source, id, seq, time,
       CAST(data->>'$.usage.model_calls' AS BIGINT),
       CAST(data->>'$.usage.input_tokens' AS BIGINT),
       CAST(data->>'$.usage.output_tokens' AS BIGINT),
       CAST(data->>'$.usage.cached_input_tokens' AS BIGINT),
       CAST(data->>'$.usage.model_ms' AS BIGINT)
FROM events
WHERE type = 'agent.session.ended' AND (data->>'$.usage.model_calls') IS NOT NULL;
