-- Contract v1.4 (schema/README.md, "Randomised holdouts"): the arm of a
-- rule set's randomised holdout each session was assigned to. A new table
-- rather than new columns of session_starts, so that a table's columns
-- never change under a lake that already holds it (docs/scale.md).

-- agent.session.started assignment (v1.4): one row a session start that
-- has one.
CREATE TABLE session_assignments (
    session  VARCHAR     NOT NULL,
    source   VARCHAR     NOT NULL,
    event_id VARCHAR     NOT NULL,
    seq      BIGINT      NOT NULL,
    time     TIMESTAMPTZ NOT NULL,
    ruleset  VARCHAR     NOT NULL, -- the rule set assigned against (in both arms)
    arm      VARCHAR     NOT NULL, -- rules | holdout
    holdout  DOUBLE      NOT NULL, -- the rule set's holdout share
    unit     VARCHAR     NOT NULL, -- session | workspace
    unit_id  VARCHAR                -- the id the arm was drawn for, when sent
);

-- Those already in the event log (the rows derive/session_assignments.sql
-- derives from it).
INSERT INTO session_assignments
SELECT session, source, id, seq, time,
       data->>'$.assignment.ruleset',
       data->>'$.assignment.arm',
       CAST(data->'$.assignment.holdout' AS DOUBLE),
       data->>'$.assignment.unit',
       data->>'$.assignment.unit_id'
FROM events
WHERE type = 'agent.session.started' AND (data->>'$.assignment.arm') IS NOT NULL;
